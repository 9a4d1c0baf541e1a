<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Where instrumented code records coverage. Instrumented files reference it
 * fully qualified, so it must be loaded before any of them.
 *
 * Two recording styles exist (see docs/instrumentation.md); a run uses one:
 *  - trace (default): every block appends its id to $trace;
 *  - edge map: every block counts the edge (prev << 28) | id in $edges.
 */
final class FuzzingContext
{
    /** @var list<int> block ids in the order they ran (trace style) */
    public static $trace = [];
    /** @var array<int, int> edge => hits (edge-map style) */
    public static $edges = [];
    /** @var int */
    public static $prev = 0;

    public static function reset(): void
    {
        self::$trace = [];
        self::$edges = [];
        self::$prev = 0;
    }

    /** The trace as 4-byte little-endian ids, the form the engine reads. */
    public static function packedTrace(int $fromEnd = 0): string
    {
        $trace = $fromEnd > 0 ? \array_slice(self::$trace, -$fromEnd) : self::$trace;
        $count = \count($trace);
        if ($count <= 65536) {
            return $count === 0 ? '' : \pack('V*', ...$trace);
        }
        $packed = '';
        for ($i = 0; $i < $count; $i += 65536) {
            $packed .= \pack('V*', ...\array_slice($trace, $i, 65536));
        }
        return $packed;
    }

    /** The edge map as pairs of a u64 edge and a u32 count, little-endian. */
    public static function packedEdges(): string
    {
        $out = '';
        foreach (self::$edges as $edge => $count) {
            $out .= \pack('PV', $edge, $count);
        }
        return $out;
    }
}

/**
 * Records an expression-level block and returns the expression's value
 * (trace style).
 *
 * @template T
 * @param T $value
 * @return T
 */
function traceBlock(int $id, $value)
{
    FuzzingContext::$trace[] = $id;
    return $value;
}

/**
 * The then-branch of `$a ?: $b`, which has no expression of its own:
 * records the block when $value is truthy, and returns $value (trace style).
 *
 * @template T
 * @param T $value
 * @return T
 */
function traceTruthy(int $id, $value)
{
    if ($value) {
        FuzzingContext::$trace[] = $id;
    }
    return $value;
}

/**
 * Edge-map style of traceBlock().
 *
 * @template T
 * @param T $value
 * @return T
 */
function countEdge(int $id, $value)
{
    $edge = (FuzzingContext::$prev << 28) | $id;
    FuzzingContext::$edges[$edge] = (FuzzingContext::$edges[$edge] ?? 0) + 1;
    FuzzingContext::$prev = $id;
    return $value;
}

/**
 * Edge-map style of traceTruthy().
 *
 * @template T
 * @param T $value
 * @return T
 */
function countEdgeIfTruthy(int $id, $value)
{
    if ($value) {
        $edge = (FuzzingContext::$prev << 28) | $id;
        FuzzingContext::$edges[$edge] = (FuzzingContext::$edges[$edge] ?? 0) + 1;
        FuzzingContext::$prev = $id;
    }
    return $value;
}
