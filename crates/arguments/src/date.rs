//! Dates in the corpus format `Y-m-d\TH:i:s.uP`
//! (`2021-03-04T05:06:07.000000+00:00`): reading, writing, and converting
//! to and from a timestamp in microseconds, with days from and to the
//! civil calendar after Howard Hinnant's algorithms.

use std::io::Write;

const MICROS_PER_SECOND: i64 = 1_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
/// The largest offset two digits of hours write, in minutes.
const MAX_OFFSET: u32 = 99 * 60 + 59;

/// A local date and time with its UTC offset, years 0000 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micros: u32,
    /// East of UTC, in minutes (at most 99:59 either way).
    pub offset: i32,
}

impl Date {
    /// The UNIX epoch, `1970-01-01T00:00:00.000000+00:00`.
    pub const EPOCH: Date = Date {
        year: 1970,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
        second: 0,
        micros: 0,
        offset: 0,
    };

    /// Reads `Y-m-d\TH:i:s.uP` as PHP's `createFromFormat()` does without
    /// a warning: 1 to 6 digits of a second's fraction, an offset of any
    /// two-digit hours and minutes (`+14:60` is `+15:00`); `None` for any
    /// other text or an impossible date or time (February 30th, 24:00).
    pub fn parse(text: &[u8]) -> Option<Date> {
        let len = text.len();
        if !(27..=32).contains(&len) {
            return None;
        }
        let zone = len - 6;
        let separators = [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
            (len - 3, b':'),
        ];
        if separators.iter().any(|&(at, b)| text[at] != b) {
            return None;
        }
        let sign = match text[zone] {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        let n = |from: usize, to: usize| number(&text[from..to]);
        let fraction = n(20, zone)? * 10u32.pow(6 - (zone - 20) as u32);
        let offset = n(zone + 1, zone + 3)? * 60 + n(zone + 4, len)?;
        let date = Date {
            year: i64::from(n(0, 4)?),
            month: n(5, 7)?,
            day: n(8, 10)?,
            hour: n(11, 13)?,
            minute: n(14, 16)?,
            second: n(17, 19)?,
            micros: fraction,
            offset: sign * offset as i32,
        };
        let valid = (1..=12).contains(&date.month)
            && (1..=days_in_month(date.year, date.month)).contains(&date.day)
            && date.hour < 24
            && date.minute < 60
            && date.second < 60;
        valid.then_some(date)
    }

    /// Appends the date as `Y-m-d\TH:i:s.uP`.
    pub fn write(&self, out: &mut Vec<u8>) {
        let sign = if self.offset < 0 { '-' } else { '+' };
        let offset = self.offset.unsigned_abs();
        write!(
            out,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}{sign}{:02}:{:02}",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.micros,
            offset / 60,
            offset % 60
        )
        .expect("writing to a Vec");
    }

    pub fn to_text(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        self.write(&mut out);
        out
    }

    /// Microseconds since the epoch, UTC.
    pub fn timestamp(&self) -> i64 {
        let days = days_from_civil(self.year, self.month, self.day);
        let seconds = days * SECONDS_PER_DAY
            + i64::from(self.hour * 3600 + self.minute * 60 + self.second)
            - i64::from(self.offset) * 60;
        seconds * MICROS_PER_SECOND + i64::from(self.micros)
    }

    /// The date at `timestamp` (microseconds since the epoch, UTC) seen
    /// at `offset` minutes east of UTC; `None` outside the years 0000-9999.
    pub fn from_timestamp(timestamp: i64, offset: i32) -> Option<Date> {
        if offset.unsigned_abs() > MAX_OFFSET {
            return None;
        }
        let local = timestamp.checked_add(i64::from(offset) * 60 * MICROS_PER_SECOND)?;
        let seconds = local.div_euclid(MICROS_PER_SECOND);
        let micros = local.rem_euclid(MICROS_PER_SECOND) as u32;
        let days = seconds.div_euclid(SECONDS_PER_DAY);
        let of_day = seconds.rem_euclid(SECONDS_PER_DAY) as u32;
        let (year, month, day) = civil_from_days(days);
        let date = Date {
            year,
            month,
            day,
            hour: of_day / 3600,
            minute: of_day / 60 % 60,
            second: of_day % 60,
            micros,
            offset,
        };
        (0..=9999).contains(&year).then_some(date)
    }
}

/// One to six ASCII digits.
fn number(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_the_format() {
        let text = b"2021-03-04T05:06:07.000008+05:30";
        let date = Date::parse(text).unwrap();
        assert_eq!((date.year, date.month, date.day), (2021, 3, 4));
        assert_eq!(
            (date.hour, date.minute, date.second, date.micros),
            (5, 6, 7, 8)
        );
        assert_eq!(date.offset, 330);
        assert_eq!(date.to_text(), text);
        assert_eq!(Date::EPOCH.to_text(), b"1970-01-01T00:00:00.000000+00:00");
        let west = Date {
            offset: -90,
            ..Date::EPOCH
        };
        assert_eq!(west.to_text(), b"1970-01-01T00:00:00.000000-01:30");
    }

    #[test]
    fn rejects_other_text_and_impossible_dates() {
        for bad in [
            &b"2021-02-29T00:00:00.000000+00:00"[..],
            b"2021-13-01T00:00:00.000000+00:00",
            b"2021-01-01T24:00:00.000000+00:00",
            b"2021-01-01T00:00:60.000000+00:00",
            b"2021-01-01T00:00:00.000000Z00:00",
            b"2021-01-01T00:00:00.0000000+00:00",
            b"2021-01-01T00:00:00.+00:00",
            b"2021-01-01T00:00:00.000000+0:00",
            b"2021-01-01 00:00:00.000000+00:00",
            b"2021-01-01T00:00:00+00:00",
            b"2021-01-01T00:00:0a.000000+00:00",
        ] {
            assert_eq!(Date::parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert!(Date::parse(b"2024-02-29T23:59:59.999999-12:00").is_some());
    }

    #[test]
    fn reads_short_fractions_and_odd_offsets_as_php_does() {
        let date = Date::parse(b"2021-01-01T00:00:00.5+14:60").unwrap();
        assert_eq!((date.micros, date.offset), (500_000, 900));
        assert_eq!(date.to_text(), b"2021-01-01T00:00:00.500000+15:00");
        let far = Date::parse(b"2021-01-01T00:00:00.000001-99:99").unwrap();
        assert_eq!(far.offset, -(99 * 60 + 99));
        assert_eq!(Date::from_timestamp(far.timestamp(), far.offset), None);
    }

    #[test]
    fn timestamps_round_trip_through_the_calendar() {
        assert_eq!(Date::EPOCH.timestamp(), 0);
        let date = Date::parse(b"2000-03-01T01:00:00.500000+01:00").unwrap();
        assert_eq!(date.timestamp(), 951_868_800 * 1_000_000 + 500_000);
        for ts in [
            -62_167_219_200_000_000i64,
            -1,
            0,
            1_700_000_000_123_456,
            253_402_300_799_999_999,
        ] {
            for offset in [0, 330, -720] {
                if let Some(date) = Date::from_timestamp(ts, offset) {
                    assert_eq!(date.timestamp(), ts, "{date:?}");
                    assert_eq!(Date::parse(&date.to_text()), Some(date));
                }
            }
        }
        assert_eq!(Date::from_timestamp(-62_167_219_200_000_001, 0), None);
    }
}
