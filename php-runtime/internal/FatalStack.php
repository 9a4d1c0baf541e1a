<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * The PHP stack of a run that a fatal error ended (one huge allocation,
 * say), for a harness the engine started to catch it. PHP unwinds the
 * stack before shutdown functions run and has no hook at the allocation,
 * so such a harness has every block also note the stack as it runs; the
 * last note is the stack of the function that made the fatal call. The
 * engine starts one only to re-run an input that died so, alone: ordinary
 * harnesses never take this path (docs/protocol.md, "One large allocation").
 *
 * @internal php-fuzz's harness, not an API
 */
final class FatalStack
{
    const TRACE_STUB = '\\PhpFuzz\\FuzzingContext::$trace .= ';
    const EDGE_STUB = '\\PhpFuzz\\FuzzingContext::$prev = ';

    /** @var bool set from Init: this harness notes the stack at each block */
    public static $enabled = false;
    /** @var list<array<string, mixed>>|null debug_backtrace() at the last block that ran */
    private static $last = null;

    /** Instrumented source, whose blocks also note the stack when enabled. */
    public static function instrument(string $code): string
    {
        if (!self::$enabled) {
            return $code;
        }
        return \str_replace(
            [self::TRACE_STUB, self::EDGE_STUB],
            [self::TRACE_STUB . '\\PhpFuzz\\FatalStack::probe() . ', self::EDGE_STUB . '\\PhpFuzz\\FatalStack::edgeProbe() + '],
            $code
        );
    }

    /** Trace style: notes the stack; appends nothing. */
    public static function probe(): string
    {
        self::$last = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
        return '';
    }

    /** Edge-map style: notes the stack; adds nothing. */
    public static function edgeProbe(): int
    {
        self::$last = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
        return 0;
    }

    /**
     * The calls below the fatal error's line, as debug_backtrace() lists
     * them, topped by the internal function called on that line when there
     * is exactly one; none when the last block that ran is not in the
     * fatal error's file (it happened in code that is not instrumented).
     *
     * @param array{file: string, line: int} $fatal
     * @return list<array<string, mixed>>
     */
    public static function calls(array $fatal): array
    {
        $last = self::$last;
        if ($last === null || ($last[0]['file'] ?? '') !== $fatal['file']) {
            return [];
        }
        $calls = \array_slice($last, 1);
        $internal = self::internalCallOn($fatal['file'], $fatal['line']);
        if ($internal !== null) {
            \array_unshift($calls, ['function' => $internal, 'file' => $fatal['file'], 'line' => $fatal['line']]);
        }
        return $calls;
    }

    /** The one internal function called on line $line of $file, if there is exactly one. */
    private static function internalCallOn(string $file, int $line): ?string
    {
        $lines = @\file($file);
        if (!\is_array($lines) || !isset($lines[$line - 1])) {
            return null;
        }
        $tokens = \array_values(\array_filter(
            \token_get_all('<?php ' . $lines[$line - 1]),
            function ($t): bool {
                return !\is_array($t) || !\in_array($t[0], [\T_WHITESPACE, \T_COMMENT, \T_DOC_COMMENT], true);
            }
        ));
        $found = [];
        foreach ($tokens as $i => $token) {
            $before = $tokens[$i - 1] ?? null;
            if (!\is_array($token) || !\in_array($token[0], [\T_STRING, \T_NAME_FULLY_QUALIFIED], true)
                || ($tokens[$i + 1] ?? null) !== '('
                || (\is_array($before) && \in_array($before[0], [\T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR, \T_DOUBLE_COLON, \T_NEW, \T_FUNCTION], true))) {
                continue;
            }
            $name = \ltrim($token[1], '\\');
            if (\function_exists($name) && (new \ReflectionFunction($name))->isInternal()) {
                $found[\strtolower($name)] = $name;
            }
        }
        return \count($found) === 1 ? (string) \reset($found) : null;
    }
}
