<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Thrown into the target when a detector reports a security bug: the run
 * ends there, and the finding stands even if the target catches it.
 *
 * @internal php-fuzz's harness, not an API
 */
final class SecurityIssue extends \Error
{
}

/**
 * The bug detectors' common ground (docs/detectors.md): which are on, their
 * canaries, where a sink was called from, and how a finding reaches the
 * harness. Each detector is a class of its own under Detectors/, called by
 * the hooks (Sinks.php, the stream wrappers, libxml's entity loader).
 *
 * @internal php-fuzz's harness, not an API
 */
final class Detectors
{
    /** Every detector, as crates/detectors names them. */
    const NAMES = [
        'command-injection',
        'code-injection',
        'object-injection',
        'class-injection',
        'path-traversal',
        'xxe',
        'ssrf',
        'regex-dos',
    ];

    /** The canaries: crates/detectors/src/lib.rs holds the same strings. */
    const COMMAND = 'php-fuzz-cmd';
    const CODE = 'php_fuzz_code';
    const OBJECT = 'PhpFuzzObject';
    const CLASS_NAME = 'PhpFuzzClass';
    const PATH = 'php-fuzz-traversal';
    const XXE = 'php-fuzz-xxe';
    const HOST = 'php-fuzz.example';

    /** Comparison sites of the hooks: far above the instrumenter's. */
    const GUIDE_SITES = 0xF0000000;

    /** @var array<string, true> the detectors that are on */
    public static $on = [];
    /** @var string the input of the run under way */
    public static $input = '';
    /**
     * The harness's: takes (status, class, message, file, line, calls) and
     * says whether it recorded the finding (a run is under way).
     * @var (\Closure(int, string, string, string, int, list<array<string, mixed>>): bool)|null
     */
    public static $reporter = null;
    /** @var string the runtime's folder, ending in '/' */
    public static $runtimeDir = '';
    /** @var list<string> the hook files, whose frames stand for the target's call */
    private static $hookFiles = [];

    /** @param list<string> $names */
    public static function enable(array $names, string $runtimeDir): void
    {
        self::$on = [];
        foreach ($names as $name) {
            self::$on[$name] = true;
        }
        self::$runtimeDir = $runtimeDir;
        self::$hookFiles = [$runtimeDir . 'Sinks.php', $runtimeDir . 'SinksStrict.php'];
    }

    public static function on(string $name): bool
    {
        return isset(self::$on[$name]);
    }

    /**
     * Reports a security bug found by $detector at the sink the target
     * called, and ends the run.
     *
     */
    public static function report(string $detector, string $message): void
    {
        [$file, $line, $calls] = self::site();
        // Outside a run (loading the target, between runs) nothing is reported.
        if (self::$reporter !== null && (self::$reporter)(Wire::SECURITY, $detector, $message, $file, $line, $calls)) {
            throw new SecurityIssue("php-fuzz found a security bug ($detector): $message");
        }
    }

    /**
     * Where the target called into a hook: the first frame outside the
     * runtime, as [file, line, the calls below it, the function it called].
     *
     * @return array{0: string, 1: int, 2: list<array<string, mixed>>, 3: string}
     */
    public static function site(): array
    {
        $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
        foreach ($frames as $i => $frame) {
            $file = $frame['file'] ?? '';
            if ($file !== '' && !self::inRuntime($file)) {
                $calls = \array_slice($frames, $i + 1);
                return [$file, $frame['line'] ?? 0, $calls, self::sinkName($frame)];
            }
        }
        return ['', 0, [], ''];
    }

    /** `exec` for the hook `PhpFuzz\Sink\exec`, `file_get_contents` for itself. */
    public static function sinkName(array $frame): string
    {
        $function = (string) ($frame['function'] ?? '');
        $slash = \strrpos($function, '\\');
        return $slash === false ? $function : \substr($function, $slash + 1);
    }

    public static function inRuntime(string $file): bool
    {
        return self::$runtimeDir !== '' && \strncmp($file, self::$runtimeDir, \strlen(self::$runtimeDir)) === 0;
    }

    /**
     * A stack as the target would have it without the hooks: a call a
     * hook made (`\preg_match` in Sinks.php) takes the place of the
     * target's call to the hook (`PhpFuzz\Sink\preg_match` in its file),
     * and $file:$line, if in a hook, moves to that place.
     *
     * @param list<array<string, mixed>> $calls
     * @return array{0: string, 1: int, 2: list<array<string, mixed>>}
     */
    public static function withoutHooks(string $file, int $line, array $calls): array
    {
        if (self::$hookFiles === []) {
            return [$file, $line, $calls];
        }
        $out = [];
        $count = \count($calls);
        for ($i = 0; $i < $count; $i++) {
            $call = $calls[$i];
            $next = $calls[$i + 1] ?? null;
            if ($next !== null && \in_array($call['file'] ?? '', self::$hookFiles, true)
                && \strncmp((string) ($next['function'] ?? ''), 'PhpFuzz\\Sink\\', 13) === 0) {
                $call['file'] = $next['file'] ?? '';
                $call['line'] = $next['line'] ?? 0;
                $i++;
            }
            $out[] = $call;
        }
        if (\in_array($file, self::$hookFiles, true) && $out !== []) {
            $file = (string) ($out[0]['file'] ?? $file);
            $line = (int) ($out[0]['line'] ?? $line);
        }
        return [$file, $line, $out];
    }

    /**
     * For the comparison tracer: the value that reached a sink should have
     * been $wanted. Input-to-state replacement then writes $wanted where
     * the input had $value (docs/detectors.md, "Steering").
     */
    public static function guide(string $value, string $wanted): void
    {
        if (!CmpLog::$enabled || $value === '' || $value === $wanted) {
            return;
        }
        [$file, $line] = self::site();
        $site = self::GUIDE_SITES | (\crc32("$file:$line") & 0x0FFFFFFF);
        CmpLog::sink($site, $value, $wanted);
    }

    /** A short, printable rendering of what reached a sink. */
    public static function quote(string $value, int $max = 120): string
    {
        $cut = \strlen($value) > $max;
        $value = \substr($value, 0, $max);
        $printable = \preg_replace_callback('/[^\x20-\x7E]/', static function (array $m): string {
            return \sprintf('\\x%02X', \ord($m[0]));
        }, $value);
        return '"' . $printable . ($cut ? '…' : '') . '"';
    }
}
