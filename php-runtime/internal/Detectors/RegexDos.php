<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `regex-dos`: a preg_* call gives up on one input (its backtrack or
 * recursion limit, or PCRE's JIT stack limit, runs out). A library that
 * ignores the `false` answers "no match" where the regex never finished;
 * php-fuzz reports it instead. (A call that runs past the timeout is
 * reported by the engine, at the call's line.)
 *
 * @internal php-fuzz's harness, not an API
 */
final class RegexDos
{
    /**
     * A call returned its failure value: a failure with one of the limit
     * errors is the bug (a `null` of preg_filter() with no error is just no
     * match). A call that runs past the run's timeout is found by the
     * engine, which knows the lines of the `preg_*` calls.
     */
    public static function failed(string $sink): void
    {
        if (!Detectors::on('regex-dos')) {
            return;
        }
        $error = \preg_last_error();
        if ($error === \PREG_BACKTRACK_LIMIT_ERROR || $error === \PREG_RECURSION_LIMIT_ERROR
            || $error === \PREG_JIT_STACKLIMIT_ERROR) {
            Detectors::report('regex-dos', "$sink() gave up (" . \preg_last_error_msg() . ') on one input');
        }
    }
}
