//! A set of detectors, and the `--detectors` list that chooses one.

use crate::Detector;

/// Which detectors are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DetectorSet(u8);

/// A name that is no detector's: the message lists the valid ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown detector `{0}`: the detectors are {list}, or `all` or `none`",
    list = names_list()
)]
pub struct UnknownDetector(pub String);

fn names_list() -> String {
    Detector::ALL.map(Detector::name).join(", ")
}

impl DetectorSet {
    pub const NONE: DetectorSet = DetectorSet(0);
    pub const ALL: DetectorSet = DetectorSet(u8::MAX);

    pub fn contains(self, detector: Detector) -> bool {
        self.0 & detector.bit() != 0
    }

    pub fn insert(&mut self, detector: Detector) {
        self.0 |= detector.bit();
    }

    pub fn is_empty(self) -> bool {
        self.iter().next().is_none()
    }

    /// The detectors in the set, in [`Detector::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Detector> {
        Detector::ALL.into_iter().filter(move |d| self.contains(*d))
    }

    /// The names, in order: what the harness is told and the banner shows.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Detector::name).collect()
    }

    /// Parses a comma-separated list of names, `all` or `none` (spaces
    /// around names are ignored; an empty list is an error).
    pub fn parse_list(list: &str) -> Result<DetectorSet, UnknownDetector> {
        let mut set = DetectorSet::NONE;
        let mut named = false;
        for name in list.split(',').map(str::trim) {
            match name {
                "all" => set = DetectorSet::ALL,
                "none" => {}
                _ => set.insert(name.parse()?),
            }
            named = true;
        }
        if !named {
            return Err(UnknownDetector(list.to_string()));
        }
        Ok(set)
    }

    /// The set of these names (as a target's configuration gives them).
    pub fn from_names<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<DetectorSet, UnknownDetector> {
        let mut set = DetectorSet::NONE;
        for name in names {
            set.insert(name.parse()?);
        }
        Ok(set)
    }
}

impl std::fmt::Display for DetectorSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            s if s == DetectorSet::ALL => f.write_str("all"),
            s if s.is_empty() => f.write_str("none"),
            s => f.write_str(&s.names().join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_to_sets() {
        assert_eq!(DetectorSet::parse_list("all"), Ok(DetectorSet::ALL));
        assert_eq!(DetectorSet::parse_list("none"), Ok(DetectorSet::NONE));
        let set = DetectorSet::parse_list("xxe, ssrf").unwrap();
        assert_eq!(set.names(), ["xxe", "ssrf"]);
        assert_eq!(set.to_string(), "xxe,ssrf");
        assert!(!set.contains(Detector::RegexDos));
        assert_eq!(DetectorSet::ALL.to_string(), "all");
        assert_eq!(DetectorSet::ALL.iter().count(), 8);
    }

    #[test]
    fn an_unknown_name_is_an_error_that_lists_the_valid_ones() {
        let err = DetectorSet::parse_list("xxe,sqli").unwrap_err();
        assert_eq!(err, UnknownDetector("sqli".into()));
        let message = err.to_string();
        assert!(
            message.starts_with(
                "unknown detector `sqli`: the detectors are command-injection, code-injection,"
            ),
            "{message}"
        );
        assert!(
            message.ends_with("regex-dos, or `all` or `none`"),
            "{message}"
        );
        assert!(DetectorSet::parse_list("").is_err());
        assert!(DetectorSet::parse_list("Xxe").is_err());
    }
}
