<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `regex-dos`: a preg_* call gives up on one input (its backtrack or
 * recursion limit, or PCRE's JIT stack limit, runs out), or runs longer than
 * SLOW_NS. A library that ignores the `false` answers "no match" where the
 * regex never finished; php-fuzz reports it instead.
 *
 * @internal php-fuzz's harness, not an API
 */
final class RegexDos
{
    /** One call longer than this (1 s) is a denial of service too. */
    const SLOW_NS = 1000000000;

    /** Checks a call that ran from $started (hrtime) and returned $result. */
    public static function after(string $sink, $pattern, int $started, bool $failed): void
    {
        if (!Detectors::on('regex-dos')) {
            return;
        }
        if ($failed) {
            $error = \preg_last_error();
            if ($error === \PREG_BACKTRACK_LIMIT_ERROR || $error === \PREG_RECURSION_LIMIT_ERROR
                || $error === \PREG_JIT_STACKLIMIT_ERROR) {
                Detectors::report('regex-dos', "$sink() gave up (" . \preg_last_error_msg() . ') on '
                    . self::patterns($pattern) . ' with an input-controlled subject');
            }
        }
        $elapsed = \hrtime(true) - $started;
        if ($elapsed > self::SLOW_NS) {
            Detectors::report('regex-dos', "$sink() ran for " . \round($elapsed / 1e9, 2) . ' s on '
                . self::patterns($pattern) . ' with one input');
        }
    }

    /** @param mixed $pattern */
    private static function patterns($pattern): string
    {
        if (\is_array($pattern)) {
            $keys = \array_keys($pattern);
            $first = \is_string($keys[0] ?? null) ? $keys[0] : ($pattern[$keys[0] ?? 0] ?? '');
            return 'the patterns ' . Detectors::quote((string) $first) . (\count($pattern) > 1 ? ' and others' : '');
        }
        return 'the pattern ' . Detectors::quote((string) $pattern);
    }
}
