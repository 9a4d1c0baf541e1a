<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Where the `cmplog` rendering of instrumented code logs the operands of
 * comparisons (docs/instrumentation.md). Every method takes a site id and
 * one operand, and returns that operand unchanged: the operands are
 * evaluated once, in their order, and the comparison itself runs as
 * written. Only ints, floats and strings are logged, never an object (no
 * `__toString()` runs), and nothing keeps an object alive.
 *
 * The log of one run is a string of records (docs/protocol.md):
 *   u32 site, u8 kind, operand, operand
 *   operand = 1 + i64 | 2 + f64 | 3 + u32 length + u8 n + n bytes (the first 64)
 * Each distinct record is logged once per run, at most MAX_RECORDS of them.
 *
 * @internal php-fuzz's harness, not an API
 */
final class CmpLog
{
    const EQUAL = 0;
    const ORDER = 1;
    const PREFIX = 2;
    const SUFFIX = 3;
    const CONTAINS = 4;
    const CASE = 8;
    /** The literal is the first operand (the instrumenter's flag, not logged). */
    const SWAPPED = 16;

    const MAX_BYTES = 64;
    const MAX_RECORDS = 1024;
    /** Elements (or keys) of an in_array() haystack compared with the needle. */
    const MAX_ELEMENTS = 16;

    /** @var bool this harness serves the cmplog rendering: the detectors' hooks log too */
    public static $enabled = false;
    /** @var string the records of this run */
    public static $log = '';
    /** @var int */
    private static $count = 0;
    /** @var array<string, true> */
    private static $seen = [];
    /** @var array<int, int|float|string> first operands waiting for their second, by site */
    private static $held = [];
    /** @var array<int, int|float|string> switch and match subjects, by site */
    private static $subjects = [];

    /** Forgets this run's log; the harness calls it once it has sent the log. */
    public static function reset(): void
    {
        self::$log = '';
        self::$count = 0;
        self::$seen = [];
    }

    /**
     * @template T
     * @param T $a
     * @return T
     */
    public static function left(int $site, $a)
    {
        if (\is_string($a) || \is_int($a) || \is_float($a)) {
            self::$held[$site] = $a;
        } else {
            unset(self::$held[$site]);
        }
        return $a;
    }

    /**
     * @template T
     * @param T $b
     * @return T
     */
    public static function right(int $site, $b, int $kind)
    {
        if (isset(self::$held[$site])) {
            $a = self::$held[$site];
            unset(self::$held[$site]);
            self::record($site, $kind, $a, $b);
        }
        return $b;
    }

    /**
     * @template T
     * @param T $value
     * @param int|float|string $literal
     * @return T
     */
    public static function literal(int $site, $value, $literal, int $kind)
    {
        // A prefix or suffix check has its literal as the needle, whichever
        // argument it is (`strncmp('GIF', $data, 3)`).
        $base = $kind & 7;
        if (($kind & self::SWAPPED) && $base !== self::PREFIX && $base !== self::SUFFIX) {
            self::record($site, $kind & ~self::SWAPPED, $literal, $value);
        } else {
            self::record($site, $kind & ~self::SWAPPED, $value, $literal);
        }
        return $value;
    }

    /**
     * A switch or match subject, against its literal cases.
     *
     * @template T
     * @param T $subject
     * @param list<int|float|string> $cases
     * @return T
     */
    public static function against(int $site, $subject, array $cases)
    {
        if (\is_string($subject) || \is_int($subject) || \is_float($subject)) {
            self::$subjects[$site] = $subject;
            foreach ($cases as $case) {
                self::record($site, self::EQUAL, $subject, $case);
            }
        } else {
            unset(self::$subjects[$site]);
        }
        return $subject;
    }

    /**
     * A case or match condition that is not a literal, against the subject.
     *
     * @template T
     * @param T $value
     * @return T
     */
    public static function arm(int $site, $value)
    {
        if (isset(self::$subjects[$site])) {
            self::record($site, self::EQUAL, self::$subjects[$site], $value);
        }
        return $value;
    }

    /**
     * in_array() and array_search(): the held needle against the first elements.
     *
     * @template T
     * @param T $haystack
     * @return T
     */
    public static function elements(int $site, $haystack)
    {
        if (isset(self::$held[$site])) {
            $needle = self::$held[$site];
            unset(self::$held[$site]);
            if (\is_array($haystack)) {
                $n = 0;
                foreach ($haystack as $value) {
                    if (++$n > self::MAX_ELEMENTS) {
                        break;
                    }
                    self::record($site, self::EQUAL, $needle, $value);
                }
            }
        }
        return $haystack;
    }

    /**
     * array_key_exists(): the held key against the array's first keys.
     *
     * @template T
     * @param T $array
     * @return T
     */
    public static function keys(int $site, $array)
    {
        if (isset(self::$held[$site])) {
            $key = self::$held[$site];
            unset(self::$held[$site]);
            if (\is_array($array)) {
                $n = 0;
                foreach ($array as $k => $_) {
                    if (++$n > self::MAX_ELEMENTS) {
                        break;
                    }
                    self::record($site, self::EQUAL, $key, $k);
                }
            }
        }
        return $array;
    }

    /**
     * The key of a lookup in a class constant, against the constant's
     * first keys (`$map` is the constant, read again).
     *
     * @template T
     * @param T $key
     * @param mixed $map
     * @return T
     */
    public static function key(int $site, $key, $map, int $kind)
    {
        if (\is_array($map)) {
            $n = 0;
            foreach ($map as $k => $_) {
                if (++$n > self::MAX_ELEMENTS) {
                    break;
                }
                self::record($site, $kind, $key, $k);
            }
        }
        return $key;
    }

    /**
     * A detector's hook: the value that reached a sink, and the value that
     * would have shown the bug (docs/detectors.md, "Steering").
     */
    public static function sink(int $site, string $value, string $wanted): void
    {
        self::record($site, self::EQUAL, $value, $wanted);
    }

    /** @param mixed $a @param mixed $b */
    private static function record(int $site, int $kind, $a, $b): void
    {
        if (self::$count >= self::MAX_RECORDS) {
            return;
        }
        $base = $kind & 7;
        if (($base === self::PREFIX || $base === self::SUFFIX) && \is_string($a) && \is_string($b)) {
            // Log the part of the haystack the needle is compared with.
            $n = \strlen($b);
            if ($n === 0) {
                return;
            }
            $a = $base === self::PREFIX ? \substr($a, 0, $n) : \substr($a, -$n);
            $kind &= ~7;
        }
        $ea = self::operand($a);
        $eb = self::operand($b);
        if ($ea === null || $eb === null) {
            return;
        }
        $record = \pack('VC', $site, $kind) . $ea . $eb;
        if (isset(self::$seen[$record])) {
            return;
        }
        self::$seen[$record] = true;
        self::$log .= $record;
        self::$count++;
    }

    /** @param mixed $v */
    private static function operand($v): ?string
    {
        if (\is_string($v)) {
            $n = \strlen($v);
            return $n <= self::MAX_BYTES
                ? "\3" . \pack('VC', $n, $n) . $v
                : "\3" . \pack('VC', $n, self::MAX_BYTES) . \substr($v, 0, self::MAX_BYTES);
        }
        if (\is_int($v)) {
            return "\1" . \pack('P', $v);
        }
        if (\is_float($v)) {
            return "\2" . \pack('e', $v);
        }
        return null;
    }
}
