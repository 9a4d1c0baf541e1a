<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Where instrumented code records coverage. Instrumented files reference it
 * fully qualified, so it must be loaded before any of them.
 *
 * Two recording styles exist (see docs/instrumentation.md); a run uses one:
 *  - trace (default): every block appends its id, as 4 little-endian
 *    bytes, to $trace;
 *  - edge map: every block counts the edge (prev << 28) | id in $edges.
 *
 * @internal php-fuzz's harness, not an API
 */
final class FuzzingContext
{
    /** @var string block ids in the order they ran, 4 bytes each (trace style) */
    public static $trace = '';
    /** @var array<int, int> edge => hits (edge-map style) */
    public static $edges = [];
    /** @var int */
    public static $prev = 0;

    /**
     * The trace's length past which it is sent to the engine: the
     * instrumenter's TRACE_CHUNK_BYTES (crates/instrument/src/stub.rs).
     */
    const TRACE_CHUNK_BYTES = 1 << 20;

    /** @var (callable(): void)|null the harness's: sends the trace so far to the engine */
    public static $drainer = null;

    /**
     * Called by the counters of loop bodies, labels and function entries
     * once the trace passes TRACE_CHUNK_BYTES: the trace goes to the engine
     * and starts anew, so no run, however long, grows it without bound, and
     * no signal is needed to ask for it.
     */
    public static function drain(): void
    {
        if (self::$drainer !== null) {
            (self::$drainer)();
        }
        if (isset(self::$trace[self::TRACE_CHUNK_BYTES])) {
            // Nobody to send it to (the harness is busy or not running a
            // target): the blocks are not part of a run's coverage.
            self::$trace = '';
        }
    }

    public static function reset(): void
    {
        self::$trace = '';
        self::$edges = [];
        self::$prev = 0;
    }

    /**
     * The trace as the engine reads it (4-byte little-endian ids), or its
     * last $blocks ids.
     */
    public static function packedTrace(int $blocks = 0): string
    {
        return $blocks > 0 ? \substr(self::$trace, -4 * $blocks) : self::$trace;
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
 * (trace style; $id is the block id's 4 bytes).
 *
 * @template T
 * @param T $value
 * @return T
 */
function traceBlock(string $id, $value)
{
    FuzzingContext::$trace .= $id;
    isset(FuzzingContext::$trace[FuzzingContext::TRACE_CHUNK_BYTES]) && FuzzingContext::drain();
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
function traceTruthy(string $id, $value)
{
    if ($value) {
        FuzzingContext::$trace .= $id;
        isset(FuzzingContext::$trace[FuzzingContext::TRACE_CHUNK_BYTES]) && FuzzingContext::drain();
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
