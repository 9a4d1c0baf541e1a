<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Where instrumented code records coverage. Instrumented files reference it
 * fully qualified, so it must be loaded before any of them.
 *
 * Two recording styles exist (see docs/instrumentation.md); a run uses one:
 *  - trace: every block appends its id (4 bytes, little-endian) to $trace;
 *  - edges: every block counts the edge (prev << 28) | id in $edges.
 */
final class FuzzingContext
{
    /** @var string */
    public static $trace = '';
    /** @var array<int, int> */
    public static $edges = [];
    /** @var int */
    public static $prev = 0;

    public static function reset(): void
    {
        self::$trace = '';
        self::$edges = [];
        self::$prev = 0;
    }
}

/**
 * Records an expression-level block and returns the expression's value.
 * $id is the packed 4-byte id in trace style and the integer id in edges style.
 *
 * @template T
 * @param T $value
 * @return T
 */
function traceBlock($id, $value)
{
    if (\is_string($id)) {
        FuzzingContext::$trace .= $id;
    } else {
        $key = (FuzzingContext::$prev << 28) | $id;
        FuzzingContext::$edges[$key] = (FuzzingContext::$edges[$key] ?? 0) + 1;
        FuzzingContext::$prev = $id;
    }
    return $value;
}

/**
 * The then-branch of `$a ?: $b`, which has no expression of its own: records
 * the block when $value is truthy, and returns $value.
 *
 * @template T
 * @param T $value
 * @return T
 */
function traceTruthy($id, $value)
{
    if ($value) {
        if (\is_string($id)) {
            FuzzingContext::$trace .= $id;
        } else {
            $key = (FuzzingContext::$prev << 28) | $id;
            FuzzingContext::$edges[$key] = (FuzzingContext::$edges[$key] ?? 0) + 1;
            FuzzingContext::$prev = $id;
        }
    }
    return $value;
}
