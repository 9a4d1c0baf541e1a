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

    /**
     * Checks a call that ran from $started (hrtime) and returned $result:
     * a failure with one of the limit errors, or more than SLOW_NS.
     *
     * @param mixed $result
     */
    public static function check(string $sink, int $started, $result): void
    {
        if (!Detectors::on('regex-dos')) {
            return;
        }
        $elapsed = \hrtime(true) - $started;
        if ($result === false || $result === null) {
            $error = \preg_last_error();
            if ($error === \PREG_BACKTRACK_LIMIT_ERROR || $error === \PREG_RECURSION_LIMIT_ERROR
                || $error === \PREG_JIT_STACKLIMIT_ERROR) {
                Detectors::report('regex-dos', "$sink() gave up (" . \preg_last_error_msg() . ') on one input');
            }
        }
        if ($elapsed > self::SLOW_NS) {
            Detectors::report('regex-dos', "$sink() ran for " . \round($elapsed / 1e9, 2) . ' s on one input');
        }
    }
}
