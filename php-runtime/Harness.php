<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * Includes the target file with `$config` and `$fuzzer` in scope. A plain
 * function, so closures the target defines are bound to no class.
 */
function loadTarget(string $__phpFuzzTarget, \PhpFuzzer\Config $config): void
{
    $fuzzer = $config;
    require $__phpFuzzTarget;
}

/** Thrown into the target when it raises a warning, notice or deprecation. */
final class WarningRaised extends \Error
{
}

/**
 * The harness loop: loads the target, then runs batches of inputs sent by the
 * engine and reports each run's status and coverage. See docs/protocol.md.
 */
final class Harness
{
    const STYLE_TRACE = 0;
    const STYLE_EDGES = 1;

    const FATAL_ERRORS = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;
    /** How much of a dying run's trace is sent: enough to locate where it died. */
    const DYING_TRACE_BLOCKS = 4096;
    /** Bounds the memory the trace hashes take (about 8 MB). */
    const MAX_SEEN_TRACES = 100000;

    /** @var Wire */
    private $wire;
    /** @var string */
    private $runtimeDir;
    /** @var int */
    private $style = self::STYLE_TRACE;
    /** @var int */
    private $timeoutNs = 0;
    /** @var int */
    private $flushIntervalNs = 0;
    /** @var bool */
    private $signals = false;
    /** @var \Closure|null */
    private $target = null;
    /** @var list<class-string<\Throwable>> */
    private $allowed = [];
    /** @var \Closure */
    private $errorHandler;

    /** @var string 'init' | 'load' | 'idle' | 'batch' */
    private $phase = 'init';
    /** @var bool true only while the target closure is on the stack */
    private $running = false;
    /** @var int */
    private $index = 0;
    /** @var int */
    private $runStart = 0;
    /** @var string|null encoded Problem of the first warning of this run */
    private $warning = null;
    /** @var string encoded outcomes not yet sent */
    private $pending = '';
    /** @var int */
    private $pendingFirst = 0;
    /** @var int */
    private $pendingCount = 0;
    /** @var string|null freed on a fatal error so the shutdown handler has room */
    private $reserve = null;
    /** @var list<string> encoded Problems seen while loading the target */
    private $loadWarnings = [];
    /** @var Harness|null */
    private static $instance = null;
    /** @var list<string> requests that arrived while waiting for a Source reply */
    private $deferred = [];
    /** @var array<string, true> hashes of traces already sent in full */
    private $seenTraces = [];
    /** @var int */
    private $seenCount = 0;
    /** @var bool */
    private $dedupTraces = false;
    /** @var CustomMutation|null */
    private $mutation = null;

    public function __construct(Wire $wire, string $runtimeDir)
    {
        $this->wire = $wire;
        $this->runtimeDir = \rtrim($runtimeDir, '/') . '/';
        $this->errorHandler = function (int $type, string $message, string $file, int $line): bool {
            if (!(\error_reporting() & $type)) {
                return false;
            }
            if ($this->warning === null) {
                $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
                \array_shift($frames);
                $this->warning = $this->problem(self::errorName($type), $message, $file, $line, $frames);
            }
            throw new WarningRaised($message);
        };
    }

    public function main(): void
    {
        $this->reserve = \str_repeat("\0", 4 << 20);
        self::$instance = $this;
        // A static method, not a closure calling a method: after memory runs
        // out deep in a recursion, every extra stack frame may be one too many.
        \register_shutdown_function([self::class, 'shutdownHook']);

        $init = $this->wire->receive();
        if ($init === null) {
            return;
        }
        $r = new WireReader($init);
        if ($r->u32() !== Wire::REQ_INIT) {
            \fwrite(\STDERR, "php-fuzz harness: expected an Init request first\n");
            exit(70);
        }
        $targetPath = $r->bytes();
        $this->style = $r->u8();
        $this->timeoutNs = $r->u64() * 1000000;
        $this->flushIntervalNs = $r->u64() * 1000000;
        $this->dedupTraces = $r->u8() === 1;

        $this->installSignals();
        $this->load($targetPath);
        $this->phase = 'idle';

        while (true) {
            $payload = \array_shift($this->deferred) ?? $this->wire->receive();
            if ($payload === null) {
                break;
            }
            $r = new WireReader($payload);
            $tag = $r->u32();
            if ($tag === Wire::REQ_RUN) {
                $this->runBatch($r->byteVectors());
            } elseif ($tag === Wire::REQ_MUTATE && $this->mutation !== null) {
                $this->mutation->run($r);
            } elseif ($tag === Wire::REQ_SHUTDOWN) {
                break;
            } else {
                \fwrite(\STDERR, "php-fuzz harness: unexpected request $tag\n");
                exit(70);
            }
        }
        $this->phase = 'done';
    }

    private function installSignals(): void
    {
        if (!\function_exists('pcntl_signal') || !\function_exists('pcntl_async_signals')) {
            return;
        }
        \pcntl_async_signals(true);
        \pcntl_signal(\SIGALRM, function (): void {
            $this->onAlarm();
        });
        \pcntl_signal(\SIGUSR1, function (): void {
            $this->onCoverageRequest();
        });
        $this->signals = true;
    }

    private function load(string $targetPath): void
    {
        $config = new \PhpFuzzer\Config();
        $this->phase = 'load';
        IncludeInterceptor::enable(function (string $path): ?string {
            return $this->instrumentedSource($path);
        });
        \set_error_handler(function (int $type, string $message, string $file, int $line): bool {
            if (\error_reporting() & $type) {
                $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
                \array_shift($frames);
                $this->loadWarnings[] = $this->problem(self::errorName($type), $message, $file, $line, $frames);
            }
            return false;
        });
        try {
            loadTarget($targetPath, $config);
        } catch (\Throwable $e) {
            $this->phase = 'init';
            $this->wire->send(\pack('V', Wire::EV_LOAD_FAILED) . $this->throwableProblem($e));
            exit(0);
        } finally {
            \restore_error_handler();
        }
        if ($config->target === null) {
            $this->phase = 'init';
            $problem = $this->problem(
                'MissingTarget',
                'the target file never called $config->setTarget(function (string $input) { ... })',
                $targetPath,
                0,
                []
            );
            $this->wire->send(\pack('V', Wire::EV_LOAD_FAILED) . $problem);
            exit(0);
        }
        $this->target = $config->target;
        $this->allowed = $config->allowedExceptions;
        $ready = \pack('V', Wire::EV_READY)
            . Wire::bytes(\PHP_VERSION)
            . ($this->signals ? "\1" : "\0")
            . \pack('P', $config->maxLen ?? 0)
            . Wire::stringList($config->dictionaries)
            . Wire::stringList($this->allowed)
            . \pack('P', \count($this->loadWarnings)) . \implode('', $this->loadWarnings)
            . Wire::bytes($this->style === self::STYLE_TRACE ? FuzzingContext::packedTrace() : FuzzingContext::packedEdges())
            . Wire::bytes($config->grammar ?? '')
            . ($config->customMutator !== null ? "\1" : "\0")
            . ($config->customCrossOver !== null ? "\1" : "\0");
        if ($config->customMutator !== null || $config->customCrossOver !== null) {
            $this->mutation = new CustomMutation(
                $this->wire,
                $config->customMutator,
                $config->customCrossOver,
                \Closure::fromCallable([$this, 'problem']),
                \Closure::fromCallable([$this, 'throwableProblem']),
                function (string $payload): void {
                    $this->deferred[] = $payload;
                }
            );
        }
        $this->loadWarnings = [];
        FuzzingContext::reset();
        CmpLog::reset();
        $this->wire->send($ready);
    }

    private function instrumentedSource(string $path): ?string
    {
        if (\strncmp($path, $this->runtimeDir, \strlen($this->runtimeDir)) === 0) {
            return null;
        }
        $this->wire->send(\pack('V', Wire::EV_SOURCE_REQUEST) . Wire::bytes($path));
        while (true) {
            $reply = $this->wire->receive();
            if ($reply === null) {
                exit(70);
            }
            $r = new WireReader($reply);
            if ($r->u32() === Wire::REQ_SOURCE) {
                return $r->u8() === 1 ? $r->bytes() : null;
            }
            // The engine queues the next batch early; it runs after this one.
            $this->deferred[] = $reply;
        }
    }

    /** @param list<string> $inputs */
    private function runBatch(array $inputs): void
    {
        $target = $this->target;
        $handler = $this->errorHandler;
        $traceStyle = $this->style === self::STYLE_TRACE;
        $this->phase = 'batch';
        $this->pending = '';
        $this->pendingFirst = 0;
        $this->pendingCount = 0;
        if ($this->signals) {
            \pcntl_alarm(\max(1, (int) \ceil($this->timeoutNs / 1e9)));
        }
        $nextFlush = \hrtime(true) + $this->flushIntervalNs;

        foreach ($inputs as $i => $input) {
            FuzzingContext::$trace = '';
            if (!$traceStyle) {
                FuzzingContext::$edges = [];
                FuzzingContext::$prev = 0;
            }
            $this->index = $i;
            $this->warning = null;
            $problem = null;
            $status = Wire::OK;
            \set_error_handler($handler);
            $this->runStart = \hrtime(true);
            $this->running = true;
            try {
                $target($input);
                $this->running = false;
            } catch (\Throwable $e) {
                $this->running = false;
                if (!$this->isAllowed($e)) {
                    $status = Wire::EXCEPTION;
                    $problem = $this->throwableProblem($e);
                }
            }
            \restore_error_handler();
            if ($this->warning !== null) {
                $status = Wire::WARNING;
                $problem = $this->warning;
            }
            if (CmpLog::$log !== '') {
                // Code in the cmplog rendering logged comparisons.
                $this->wire->send(\pack('VV', Wire::EV_CMP_LOG, $i) . Wire::bytes(CmpLog::$log));
                CmpLog::reset();
            }
            if ($problem === null && $traceStyle && $this->dedupTraces) {
                // A run that went exactly like an earlier one is sent as its
                // trace's hash alone: most mutants take known paths.
                $coverage = FuzzingContext::$trace;
                $hash = \hash('xxh3', $coverage, true);
                if (isset($this->seenTraces[$hash])) {
                    $this->pending .= "\0\1" . $hash . "\0\0\0\0\0\0\0\0\0";
                } else {
                    if (++$this->seenCount > self::MAX_SEEN_TRACES) {
                        $this->seenTraces = [];
                        $this->seenCount = 1;
                    }
                    $this->seenTraces[$hash] = true;
                    $this->pending .= "\0\0" . $hash . \pack('P', \strlen($coverage)) . $coverage . "\0";
                }
            } else {
                $coverage = $traceStyle ? FuzzingContext::$trace : FuzzingContext::packedEdges();
                $this->pending .= \chr($status) . "\0\0\0\0\0\0\0\0\0" . \pack('P', \strlen($coverage)) . $coverage
                    . ($problem === null ? "\0" : "\1" . $problem);
            }
            $this->pendingCount++;
            if (\hrtime(true) >= $nextFlush) {
                $this->flush();
                $nextFlush = \hrtime(true) + $this->flushIntervalNs;
            }
        }
        $this->flush();
        if ($this->signals) {
            \pcntl_alarm(0);
        }
        FuzzingContext::$trace = '';
        $this->phase = 'idle';
    }

    private function flush(): void
    {
        if ($this->pendingCount === 0) {
            return;
        }
        $payload = \pack('VVP', Wire::EV_OUTCOMES, $this->pendingFirst, $this->pendingCount) . $this->pending;
        $this->pendingFirst += $this->pendingCount;
        $this->pendingCount = 0;
        $this->pending = '';
        $this->wire->send($payload);
    }

    private function isAllowed(\Throwable $e): bool
    {
        if ($e instanceof WarningRaised) {
            return false;
        }
        foreach ($this->allowed as $class) {
            if ($e instanceof $class) {
                return true;
            }
        }
        return false;
    }

    private function onAlarm(): void
    {
        if ($this->phase !== 'batch') {
            return;
        }
        $elapsed = \hrtime(true) - $this->runStart;
        if (!$this->running || $elapsed < $this->timeoutNs) {
            $left = $this->running ? $this->timeoutNs - $elapsed : $this->timeoutNs;
            \pcntl_alarm(\max(1, (int) \ceil($left / 1e9)));
            return;
        }
        $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
        \array_shift($frames);
        $top = $frames[0] ?? [];
        $seconds = \round($elapsed / 1e9, 2);
        $problem = $this->problem(
            'Timeout',
            "the target ran for {$seconds} s, longer than the timeout",
            $top['file'] ?? '',
            $top['line'] ?? 0,
            \array_slice($frames, 1)
        );
        $this->die(Wire::TIMEOUT, $problem);
        \posix_kill(\getmypid(), \SIGKILL);
    }

    private function onCoverageRequest(): void
    {
        if (!$this->running) {
            return;
        }
        $trace = $this->style === self::STYLE_TRACE;
        $chunk = $trace ? FuzzingContext::$trace : FuzzingContext::packedEdges();
        // Reset only once sent: a target that has used up its memory can
        // die building the frame, and its last blocks must then still be
        // there for the dying report (they show a runaway recursion).
        $this->wire->send(\pack('VV', Wire::EV_COVERAGE_CHUNK, $this->index) . Wire::bytes($chunk));
        if ($trace) {
            FuzzingContext::$trace = '';
        } else {
            FuzzingContext::$edges = [];
        }
    }

    public static function shutdownHook(): void
    {
        self::$instance->reserve = null;
        self::$instance->onShutdown();
    }

    private function onShutdown(): void
    {
        $error = \error_get_last();
        $fatal = $error !== null && ($error['type'] & self::FATAL_ERRORS) !== 0 ? $error : null;
        if ($fatal !== null) {
            // Room for reporting, past a limit the target may have just exhausted.
            @\ini_set('memory_limit', (string) (\memory_get_usage(true) + (64 << 20)));
        }
        if ($this->phase === 'load') {
            $problem = $fatal !== null
                ? $this->problem(self::errorName($fatal['type']), $fatal['message'], $fatal['file'], $fatal['line'], [])
                : $this->problem('Exit', 'the target file called exit() or die() while loading', '', 0, []);
            $this->wire->send(\pack('V', Wire::EV_LOAD_FAILED) . $problem);
            return;
        }
        if ($this->phase !== 'batch') {
            return;
        }
        if ($fatal !== null) {
            $oom = \strpos($fatal['message'], 'Allowed memory size of') === 0
                || \strpos($fatal['message'], 'Out of memory') === 0;
            $status = $oom ? Wire::OUT_OF_MEMORY : Wire::FATAL;
            $problem = $this->problem(self::errorName($fatal['type']), $fatal['message'], $fatal['file'], $fatal['line'], []);
        } elseif ($this->running) {
            $status = Wire::EXIT;
            $problem = $this->problem('Exit', 'the target called exit() or die()', '', 0, []);
        } else {
            return;
        }
        $this->die($status, $problem);
    }

    /** Sends what is pending, then the reason this harness is about to die. */
    private function die(int $status, string $problem): void
    {
        $this->running = false;
        $this->flush();
        $coverage = $this->style === self::STYLE_TRACE
            ? FuzzingContext::packedTrace(self::DYING_TRACE_BLOCKS)
            : FuzzingContext::packedEdges();
        $this->wire->send(
            \pack('VVC', Wire::EV_DIED, $this->index, $status) . $problem . Wire::bytes($coverage)
        );
        $this->phase = 'dead';
    }

    private function throwableProblem(\Throwable $e): string
    {
        $message = $e->getMessage();
        $previous = $e->getPrevious();
        while ($previous !== null) {
            $message .= "\nCaused by " . \get_class($previous) . ': ' . $previous->getMessage()
                . ' at ' . $previous->getFile() . ':' . $previous->getLine();
            $previous = $previous->getPrevious();
        }
        return $this->problem(\get_class($e), $message, $e->getFile(), $e->getLine(), $e->getTrace());
    }

    /**
     * Encodes a Problem. $calls is a debug_backtrace()-style list whose first
     * entry is the call into the function that was executing at $file:$line.
     *
     * @param list<array<string, mixed>> $calls
     */
    private function problem(string $class, string $message, string $file, int $line, array $calls): string
    {
        $frames = [];
        $where = [$file, $line];
        foreach ($calls as $call) {
            $frames[] = [$where[0], $where[1], self::functionName($call)];
            $callFile = $call['file'] ?? '';
            if ($callFile !== '' && \strncmp($callFile, $this->runtimeDir, \strlen($this->runtimeDir)) === 0) {
                $where = null;
                break;
            }
            $where = [$callFile, $call['line'] ?? 0];
        }
        if ($calls !== [] && $where !== null && $where[0] !== '') {
            $frames[] = [$where[0], $where[1], '{main}'];
        }
        $trace = '';
        $encoded = \pack('P', \count($frames));
        foreach ($frames as $n => [$frameFile, $frameLine, $function]) {
            $trace .= "#$n $function at " . ($frameFile === '' ? '[internal]' : "$frameFile:$frameLine") . "\n";
            $encoded .= Wire::bytes($frameFile) . \pack('V', $frameLine) . Wire::bytes($function);
        }
        return Wire::bytes($class) . Wire::bytes($message) . Wire::bytes($file) . \pack('V', $line)
            . Wire::bytes($trace) . $encoded;
    }

    /** @param array<string, mixed> $call */
    private static function functionName(array $call): string
    {
        $function = $call['function'] ?? '{main}';
        if (isset($call['class'])) {
            return $call['class'] . ($call['type'] ?? '::') . $function . '()';
        }
        return \in_array($function, ['include', 'include_once', 'require', 'require_once'], true)
            ? $function
            : $function . '()';
    }

    public static function errorName(int $type): string
    {
        switch ($type) {
            case \E_ERROR: return 'Fatal error';
            case \E_WARNING: return 'Warning';
            case \E_PARSE: return 'Parse error';
            case \E_NOTICE: return 'Notice';
            case \E_CORE_ERROR: return 'Core error';
            case \E_CORE_WARNING: return 'Core warning';
            case \E_COMPILE_ERROR: return 'Compile error';
            case \E_COMPILE_WARNING: return 'Compile warning';
            case \E_USER_ERROR: return 'User error';
            case \E_USER_WARNING: return 'User warning';
            case \E_USER_NOTICE: return 'User notice';
            case 2048: return 'Strict standards';
            case \E_RECOVERABLE_ERROR: return 'Recoverable error';
            case \E_DEPRECATED: return 'Deprecated';
            case \E_USER_DEPRECATED: return 'User deprecated';
        }
        return "Error $type";
    }
}
