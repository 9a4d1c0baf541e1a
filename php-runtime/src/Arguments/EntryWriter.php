<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Writes PHP values as a `php-fuzz arguments v1` entry (docs/autofuzz.md),
 * in the canonical form both sides print: Entry::parse() reads it back to
 * the same values, and the engine's writer prints the same bytes.
 *
 * @internal php-fuzz's own, not an API
 */
final class EntryWriter
{
    /**
     * The canonical text of $values: the header, then one line per value.
     *
     * @param array<mixed> $values in parameter order (keys are ignored)
     * @throws \InvalidArgumentException for a value the format cannot hold:
     *         an object of another class (named in the message), a closure,
     *         a resource, a date outside the years 0-9999, an array nested
     *         deeper than 256 levels (a recursive one)
     */
    public static function write(array $values): string
    {
        $text = Entry::HEADER . "\n";
        foreach ($values as $value) {
            $text .= self::literalAt($value, 0) . "\n";
        }

        return $text;
    }

    /**
     * The canonical literal of one value, as write() prints it.
     *
     * @throws \InvalidArgumentException for a value the format cannot hold
     */
    public static function literal(mixed $value): string
    {
        return self::literalAt($value, 0);
    }

    private static function literalAt(mixed $value, int $depth): string
    {
        if (\is_string($value)) {
            return self::quote($value);
        }
        if (\is_int($value)) {
            return (string) $value;
        }
        if (\is_float($value)) {
            return self::float($value);
        }
        if (\is_bool($value)) {
            return $value ? 'true' : 'false';
        }
        if ($value === null) {
            return 'null';
        }
        if (\is_array($value)) {
            if ($depth >= Entry::MAX_DEPTH) {
                throw new \InvalidArgumentException('cannot write an array nested deeper than ' . Entry::MAX_DEPTH . ' levels (a recursive array?)');
            }
            $items = [];
            if (\array_is_list($value)) {
                foreach ($value as $item) {
                    $items[] = self::literalAt($item, $depth + 1);
                }
            } else {
                foreach ($value as $key => $item) {
                    $items[] = (\is_int($key) ? (string) $key : self::quote($key)) . ' => ' . self::literalAt($item, $depth + 1);
                }
            }

            return '[' . \implode(', ', $items) . ']';
        }
        if ($value instanceof \UnitEnum) {
            return $value::class . '::' . $value->name;
        }
        if ($value instanceof \DateTimeInterface) {
            $year = (int) $value->format('Y');
            if ($year < 0 || $year > 9999) {
                throw new \InvalidArgumentException("cannot write a date in year {$year}: the format " . Entry::DATE_FORMAT . ' reads years 0-9999');
            }
            $class = $value instanceof \DateTimeImmutable ? 'DateTimeImmutable' : 'DateTime';

            return "new {$class}(" . self::quote($value->format(Entry::DATE_FORMAT)) . ')';
        }
        if ($value instanceof Text) {
            return 'new PhpFuzz\Arguments\Text(' . self::quote($value->value) . ')';
        }
        if (\is_object($value)) {
            throw new \InvalidArgumentException('cannot write an object of class ' . $value::class . ' in a php-fuzz arguments entry: only enum cases, DateTimeImmutable, DateTime and ' . Text::class . ' objects');
        }

        throw new \InvalidArgumentException('cannot write a ' . \get_debug_type($value) . ' in a php-fuzz arguments entry');
    }

    /**
     * A double-quoted literal: printable ASCII and valid UTF-8 as is, `"`,
     * `\` and `$` escaped, newline, carriage return and tab as `\n`, `\r`
     * and `\t`, every other byte \xHH (lower-case hex).
     */
    public static function quote(string $string): string
    {
        static $stop = null;
        if ($stop === null) {
            $stop = "\"\\\$\x7f";
            for ($b = 0; $b < 0x20; $b++) {
                $stop .= \chr($b);
            }
            for ($b = 0x80; $b <= 0xff; $b++) {
                $stop .= \chr($b);
            }
        }
        $out = '"';
        $i = 0;
        $n = \strlen($string);
        while (true) {
            $run = \strcspn($string, $stop, $i);
            $out .= \substr($string, $i, $run);
            $i += $run;
            if ($i >= $n) {
                return $out . '"';
            }
            $c = $string[$i];
            if ($c === '"' || $c === '\\' || $c === '$') {
                $out .= '\\' . $c;
                $i++;
                continue;
            }
            $length = self::utf8Length($string, $i);
            if ($length > 0) {
                $out .= \substr($string, $i, $length);
                $i += $length;
                continue;
            }
            $out .= match ($c) {
                "\n" => '\n',
                "\r" => '\r',
                "\t" => '\t',
                default => \sprintf('\x%02x', \ord($c)),
            };
            $i++;
        }
    }

    /** The length of the valid UTF-8 sequence (outside ASCII) at $i, or 0. */
    private static function utf8Length(string $s, int $i): int
    {
        $b0 = \ord($s[$i]);
        if ($b0 < 0xc2 || $b0 > 0xf4) {
            return 0;
        }
        $b1 = \ord($s[$i + 1] ?? "\0");
        if ($b0 < 0xe0) {
            return ($b1 & 0xc0) === 0x80 ? 2 : 0;
        }
        $low = $b0 === 0xe0 ? 0xa0 : ($b0 === 0xf0 ? 0x90 : 0x80);
        $high = $b0 === 0xed ? 0x9f : ($b0 === 0xf4 ? 0x8f : 0xbf);
        if ($b1 < $low || $b1 > $high || (\ord($s[$i + 2] ?? "\0") & 0xc0) !== 0x80) {
            return 0;
        }
        if ($b0 < 0xf0) {
            return 3;
        }

        return (\ord($s[$i + 3] ?? "\0") & 0xc0) === 0x80 ? 4 : 0;
    }

    /**
     * The shortest text that reads back to $float, with `.0` where it would
     * read as an integer, `INF`, `-INF`, `NAN`: the text the engine writes
     * (Rust's `{:?}` plus `.0`), so both sides agree byte for byte.
     *
     * The digits are PHP's shortest round trip (var_export() with
     * serialize_precision -1); where two texts as short are as near
     * (an exact tie), the larger, as Rust picks (PHP picks the even one).
     * An exponent below 1e-4 and from 1e16 on: `1.0e16`, `1.5e-7`.
     */
    private static function float(float $float): string
    {
        if (\is_nan($float)) {
            return 'NAN';
        }
        if (\is_infinite($float)) {
            return $float > 0 ? 'INF' : '-INF';
        }
        $precision = \ini_get('serialize_precision');
        if ($precision !== '-1') {
            \ini_set('serialize_precision', '-1');
        }
        $text = \var_export($float, true); // 123.5, 0.0001, -1.0E+25, 1.5E-7
        if ($precision !== '-1') {
            \ini_set('serialize_precision', (string) $precision);
        }
        $sign = $text[0] === '-' ? '-' : '';
        $e = \strpos($text, 'E');
        $mantissa = \substr($text, \strlen($sign), $e === false ? null : $e - \strlen($sign));
        $point = \strpos($mantissa, '.');
        $all = \substr($mantissa, 0, $point) . \substr($mantissa, $point + 1);
        $lead = \strspn($all, '0');
        $digits = \rtrim(\substr($all, $lead), '0');
        if ($digits === '') {
            return $sign . '0.0';
        }
        // $float is 0.$digits × 10^($exponent + 1)
        $exponent = $point - 1 - $lead + ($e === false ? 0 : (int) \substr($text, $e + 1));
        $n = \strlen($digits);
        $last = (int) $digits[$n - 1];
        if ($last % 2 === 0) {
            // a tie: the exact value is $digits then 5 (53 digits show it)
            $exact = \sprintf('%.52e', \abs($float));
            $exactDigits = \rtrim($exact[0] . \substr($exact, 2, 52), '0');
            $up = \substr($digits, 0, -1) . ($last + 1);
            if ($exactDigits === $digits . '5' && (float) ("{$sign}0.{$up}e" . ($exponent + 1)) === $float) {
                $digits = $up;
            }
        }
        if ($exponent < -4 || $exponent >= 16) {
            return $sign . $digits[0] . '.' . ($n > 1 ? \substr($digits, 1) : '0') . 'e' . $exponent;
        }
        if ($exponent < 0) {
            return $sign . '0.' . \str_repeat('0', -$exponent - 1) . $digits;
        }
        if ($n <= $exponent + 1) {
            return $sign . $digits . \str_repeat('0', $exponent + 1 - $n) . '.0';
        }

        return $sign . \substr($digits, 0, $exponent + 1) . '.' . \substr($digits, $exponent + 1);
    }
}
