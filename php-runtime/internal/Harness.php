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

/**
 * Thrown into the target when it raises a warning, notice or deprecation.
 *
 * @internal php-fuzz's harness, not an API
 */
final class WarningRaised extends \Error
{
}

/**
 * The harness loop: loads the target, then runs batches of inputs sent by the
 * engine and reports each run's status and coverage. See docs/protocol.md.
 *
 * @internal php-fuzz's harness, not an API
 */
final class Harness
{
    const STYLE_TRACE = 0;
    const STYLE_EDGES = 1;

    const FATAL_ERRORS = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;
    /** How much of a dying run's trace is sent: enough to locate where it died. */
    const DYING_TRACE_BLOCKS = 4096;
    /** How many calls a timeout's or a stack overflow's report lists. */
    const REPORT_CALLS = 100;
    /** Signals that arrived while a frame was being written, handled right after it. */
    const HELD_TIMEOUT = 1;
    const HELD_PROGRESS = 2;
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
    /** Past this (0: never), a SIGALRM asks where the run is and lets it go on. */
    private $stuckNs = 0;
    /** The start of the run whose place was sent (one Stuck per run). */
    private $stuckSentFor = -1;
    /** @var int */
    private $flushIntervalNs = 0;
    /** @var bool */
    private $signals = false;
    /** @var \Closure|null */
    private $target = null;
    /** @var list<class-string<\Throwable>> */
    private $allowed = [];
    /** @var list<string> throwables that are findings even if allowed */
    private $neverAllowed = [];
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
    /** @var string|null encoded Problem of this run's security finding */
    private $security = null;
    /** @var string|null encoded Problem of the first side effect this run was refused */
    private $sideEffect = null;

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
    /** @var int a call stack deeper than this is a runaway recursion */
    private $maxStackDepth = 50000;
    /** @var int the harness's own pid: a child the target forked must not act as the harness */
    private $pid = 0;
    /** @var bool a run re-done to learn where it dies: the engine asks for the trace every few ms */
    private $streaming = false;
    /** @var int HELD_* bits */
    private $heldSignals = 0;
    /** @var \Closure|null */
    private $timeoutHandler = null;
    /** @var \Closure|null */
    private $progressHandler = null;
    /** @var string what a run may change and the next must not see: working directory… */
    private $cwd = '';
    /** @var int …error_reporting()… */
    private $errorReporting = 0;
    /** @var string|false …and two ini settings */
    private $memoryLimit = false;
    /** @var string|false */
    private $timeLimit = false;

    public function __construct(Wire $wire, string $runtimeDir)
    {
        $this->wire = $wire;
        $this->runtimeDir = \rtrim($runtimeDir, '/') . '/';
        $this->errorHandler = function (int $type, string $message, string $file, int $line): bool {
            // Installed for a whole batch: between runs PHP's own handling applies.
            if (!$this->running || !(\error_reporting() & $type)) {
                return false;
            }
            if (SideEffects::failedQuietly($message)) {
                return true; // a refused side effect (docs/detectors.md, docs/sandbox.md)
            }
            if ($this->warning === null) {
                $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
                \array_shift($frames);
                $this->warning = $this->problem(ProblemText::errorName($type), $message, $file, $line, $frames);
            }
            throw new WarningRaised(IncludeInterceptor::withNativeReasons($message));
        };
        Detectors::$reporter = function (int $status, string $class, string $message, string $file, int $line, array $calls): bool {
            $security = $status === Wire::SECURITY;
            if (!$this->running || (!$security && $this->sideEffect !== null)) {
                return false;
            }
            $problem = $this->problem($class, $message, $file, $line, $calls);
            $security ? ($this->security = $this->security ?? $problem) : ($this->sideEffect = $problem);
            return true;
        };
    }

    public function main(): void
    {
        $this->pid = \getmypid();
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
        $this->maxStackDepth = \max(1, $r->u32());
        FatalStack::$enabled = $r->u8() === 1;
        DetectorSetup::readInit($r);

        $this->installSignals();
        FuzzingContext::$drainer = function (): void {
            $this->onTraceFull();
        };
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
                $streaming = $r->u8() === 1;
                $this->timeoutNs = $r->u64() * 1000000;
                $this->stuckNs = $r->u64() * 1000000;
                $this->runBatch($r->byteVectors(), $streaming);
            } elseif ($tag === Wire::REQ_MUTATE && $this->mutation !== null) {
                $this->mutation->run($r);
            } elseif ($tag === Wire::REQ_FORK_SERVER) {
                $wire = (new ForkServer($this->wire))->serve();
                if ($wire === null) {
                    break;
                }
                $this->continueOn($wire);
            } elseif ($tag === Wire::REQ_SHUTDOWN) {
                break;
            } else {
                \fwrite(\STDERR, "php-fuzz harness: unexpected request $tag\n");
                exit(70);
            }
        }
        $this->phase = 'done';
    }

    /** Goes on as the harness on $wire: a child the fork server forked starts clean. */
    private function continueOn(Wire $wire): void
    {
        $this->wire = $wire;
        $this->pid = \getmypid();
        FuzzingContext::reset();
        CmpLog::reset();
    }

    /**
     * The engine signals a harness only when something is wrong: SIGALRM
     * once the current run is past the timeout, SIGUSR1 only to a run
     * re-done to learn where it dies (see docs/protocol.md). A normal run
     * sees neither.
     */
    private function installSignals(): void
    {
        if (!\function_exists('pcntl_signal') || !\function_exists('pcntl_async_signals')
            || !\function_exists('posix_kill')) {
            return;
        }
        $this->timeoutHandler = function (): void {
            $this->onTimeoutSignal();
        };
        $this->progressHandler = function (): void {
            $this->onProgressRequest();
        };
        $this->signals = true;
        $this->reinstallSignals();
    }

    /** Undoes what a target did to the harness's signals: SIG_IGN, its own handlers, pcntl_async_signals(false). */
    private function reinstallSignals(): void
    {
        \pcntl_async_signals(true);
        if (\pcntl_signal_get_handler(\SIGALRM) !== $this->timeoutHandler) {
            \pcntl_signal(\SIGALRM, $this->timeoutHandler);
        }
        if (\pcntl_signal_get_handler(\SIGUSR1) !== $this->progressHandler) {
            \pcntl_signal(\SIGUSR1, $this->progressHandler);
        }
    }

    private function load(string $targetPath): void
    {
        $config = new \PhpFuzzer\Config();
        $this->phase = 'load';
        IncludeInterceptor::enable(function (string $path) use ($config): ?string {
            foreach ($config->uninstrumented as $folder) {
                if (\strncmp($path, $folder, \strlen($folder)) === 0) {
                    return null;
                }
            }
            return $this->instrumentedSource($path);
        });
        \set_error_handler(function (int $type, string $message, string $file, int $line): bool {
            if (\error_reporting() & $type) {
                $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
                \array_shift($frames);
                $this->loadWarnings[] = $this->problem(ProblemText::errorName($type), $message, $file, $line, $frames);
            }
            return false;
        });
        try {
            loadTarget($targetPath, $config);
        } catch (\Throwable $e) {
            $this->phase = 'init';
            $this->send(\pack('V', Wire::EV_LOAD_FAILED) . $this->throwableProblem($e));
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
            $this->send(\pack('V', Wire::EV_LOAD_FAILED) . $problem);
            exit(0);
        }
        $this->target = $config->target;
        [$detectors, $writable] = DetectorSetup::start($config, $this->runtimeDir);
        $this->allowed = $config->allowedExceptions;
        $this->neverAllowed = $config->neverAllowed;
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
            . ($config->customCrossOver !== null ? "\1" : "\0")
            . Wire::stringList($detectors)
            . Wire::stringList($writable) . Wire::bytes($config->arguments ?? '');
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
        $this->send($ready);
    }

    private function instrumentedSource(string $path): ?string
    {
        if (\strncmp($path, $this->runtimeDir, \strlen($this->runtimeDir)) === 0) {
            return null;
        }
        $asked = \hrtime(true);
        $this->send(\pack('V', Wire::EV_SOURCE_REQUEST) . Wire::bytes($path));
        while (true) {
            $reply = $this->wire->receive();
            if ($reply === null) {
                exit(70);
            }
            $r = new WireReader($reply);
            if ($r->u32() === Wire::REQ_SOURCE) {
                // Instrumenting is the engine's time, not the run's.
                $this->runStart += \hrtime(true) - $asked;
                return $r->u8() === 1 ? FatalStack::instrument($r->bytes()) : null;
            }
            // The engine queues the next batch early; it runs after this one.
            $this->deferred[] = $reply;
        }
    }

    /** @param list<string> $inputs */
    private function runBatch(array $inputs, bool $streaming): void
    {
        $target = $this->target;
        $handler = $this->errorHandler;
        $traceStyle = $this->style === self::STYLE_TRACE;
        $this->phase = 'batch';
        $this->pending = '';
        $this->pendingFirst = 0;
        $this->pendingCount = 0;
        if ($this->signals) {
            $this->reinstallSignals();
        }
        DetectorSetup::beforeBatch();
        $this->streaming = $streaming && $this->signals;
        $this->cwd = (string) \getcwd();
        $this->errorReporting = \error_reporting();
        $this->memoryLimit = \ini_get('memory_limit');
        $this->timeLimit = \ini_get('max_execution_time');
        $obLevel = \ob_get_level();
        $nextFlush = \hrtime(true) + $this->flushIntervalNs;
        \set_error_handler($handler);

        foreach ($inputs as $i => $input) {
            // The clock read that times the run also paces the flushes.
            $now = \hrtime(true);
            if ($now >= $nextFlush) {
                $this->flush();
                $nextFlush = $now + $this->flushIntervalNs;
                $now = \hrtime(true);
            }
            FuzzingContext::$trace = '';
            if (!$traceStyle) {
                FuzzingContext::$edges = [];
                FuzzingContext::$prev = 0;
            }
            $this->index = $i;
            $this->warning = null;
            $this->security = null;
            $this->sideEffect = null;
            $problem = null;
            $status = Wire::OK;
            $this->runStart = $now;
            $this->running = true;
            SideEffects::$active = true;
            Detectors::$input = $input;
            try {
                $target($input);
                // Output buffers the run opened are part of the run: their
                // callbacks may throw or warn.
                while (\ob_get_level() > $obLevel && \ob_end_flush()) {
                }
                $this->running = false;
            } catch (\Throwable $e) {
                $this->running = false;
                if (!$this->isAllowed($e)) {
                    $status = Wire::EXCEPTION;
                    $problem = $this->throwableProblem($e);
                }
            }
            $micros = \pack('V', \min(\intdiv(\hrtime(true) - $now, 1000), 0xFFFFFFFF));
            if (\getmypid() !== $this->pid) {
                // A child the target forked came back here: it must not act as the harness.
                \posix_kill(\getmypid(), \SIGKILL);
            }
            SideEffects::$active = false;
            $this->restoreAfterRun($obLevel, $handler);
            if ($this->security !== null) {
                $status = Wire::SECURITY;
                $problem = $this->security;
            } elseif ($this->warning !== null) {
                $status = Wire::WARNING;
                $problem = $this->warning;
            } elseif ($problem === null && $this->sideEffect !== null) {
                $status = Wire::SIDE_EFFECT;
                $problem = $this->sideEffect;
            }
            if (CmpLog::$log !== '') {
                // Code in the cmplog rendering logged comparisons.
                $this->send(\pack('VV', Wire::EV_CMP_LOG, $i) . Wire::bytes(CmpLog::$log));
                CmpLog::reset();
            }
            if ($problem === null && $traceStyle && $this->dedupTraces) {
                // A run that went exactly like an earlier one is sent as its
                // trace's hash alone: most mutants take known paths.
                $coverage = FuzzingContext::$trace;
                $hash = \hash('xxh3', $coverage, true);
                if (isset($this->seenTraces[$hash])) {
                    $this->pending .= "\0\1" . $hash . $micros . "\0\0\0\0\0\0\0\0\0";
                } else {
                    if (++$this->seenCount > self::MAX_SEEN_TRACES) {
                        $this->seenTraces = [];
                        $this->seenCount = 1;
                    }
                    $this->seenTraces[$hash] = true;
                    $this->pending .= "\0\0" . $hash . $micros . \pack('P', \strlen($coverage)) . $coverage . "\0";
                }
            } else {
                $coverage = $traceStyle ? FuzzingContext::$trace : FuzzingContext::packedEdges();
                $this->pending .= \chr($status) . "\0\0\0\0\0\0\0\0\0" . $micros . \pack('P', \strlen($coverage)) . $coverage
                    . ($problem === null ? "\0" : "\1" . $problem);
            }
            $this->pendingCount++;
        }
        self::clearErrorHandlers();
        $this->flush();
        $this->streaming = false;
        FuzzingContext::$trace = '';
        $this->phase = 'idle';
    }

    /**
     * Puts back what a run changed that would leak into the next one: the
     * error handler stack, output buffers, error_reporting(), the memory
     * and time limits, the working directory.
     */
    private function restoreAfterRun(int $obLevel, \Closure $handler): void
    {
        if (\ini_get('memory_limit') !== $this->memoryLimit) {
            \ini_set('memory_limit', (string) $this->memoryLimit);
        }
        // Ours stays installed for the batch. Pushing it again returns the
        // handler on top: ours, unless the run left handlers of its own (or
        // removed ours), which then go.
        if (\set_error_handler($handler) === $handler) {
            \restore_error_handler();
        } else {
            self::clearErrorHandlers();
            \set_error_handler($handler);
        }
        while (\ob_get_level() > $obLevel) {
            try {
                if (!@\ob_end_clean()) {
                    break;
                }
            } catch (\Throwable $e) {
            }
        }
        if (\error_reporting() !== $this->errorReporting) {
            \error_reporting($this->errorReporting);
        }
        if (\ini_get('max_execution_time') !== $this->timeLimit) {
            \ini_set('max_execution_time', (string) $this->timeLimit);
        }
        if (\getcwd() !== $this->cwd) {
            @\chdir($this->cwd);
        }
    }

    /** Pops every error handler: ours and whatever a run left. */
    private static function clearErrorHandlers(): void
    {
        for ($left = 0; \set_error_handler(null) !== null && $left < 1000; $left++) {
            \restore_error_handler();
            \restore_error_handler();
        }
        \restore_error_handler();
    }

    private function flush(): void
    {
        if ($this->pendingCount === 0) {
            return;
        }
        $head = \pack('VVP', Wire::EV_OUTCOMES, $this->pendingFirst, $this->pendingCount);
        $outcomes = $this->pending;
        $this->pendingFirst += $this->pendingCount;
        $this->pendingCount = 0;
        $this->pending = '';
        $this->send($head, $outcomes);
    }

    private function isAllowed(\Throwable $e): bool
    {
        if ($e instanceof WarningRaised || $e instanceof SecurityIssue) {
            return false;
        }
        foreach ($this->neverAllowed as $class) {
            if ($e instanceof $class) {
                return false;
            }
        }
        foreach ($this->allowed as $class) {
            if ($e instanceof $class) {
                return true;
            }
        }
        return false;
    }

    /** Writes a frame, then handles the signals that arrived meanwhile. */
    private function send(string $head, string $tail = ''): void
    {
        $this->wire->send($head, $tail);
        if ($this->heldSignals !== 0) {
            $held = $this->heldSignals;
            $this->heldSignals = 0;
            if ($held & self::HELD_TIMEOUT) {
                $this->onTimeoutSignal();
            }
            if ($held & self::HELD_PROGRESS) {
                $this->onProgressRequest();
            }
        }
    }

    /** SIGALRM: the engine has waited past the timeout. Dies with where the run is stuck. */
    private function onTimeoutSignal(): void
    {
        if ($this->phase !== 'batch' || !$this->running || \getmypid() !== $this->pid) {
            return;
        }
        if ($this->wire->busy()) {
            $this->heldSignals |= self::HELD_TIMEOUT;
            return;
        }
        // A runaway recursion is one whenever the engine looks, early or
        // late: which of the timeout and the memory limit it meets first
        // must not decide what it is (a loaded machine makes it slow).
        [$file, $line, $calls] = $this->interruptedAt(\debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS, $this->maxStackDepth + 3));
        if (\count($calls) > $this->maxStackDepth) {
            $this->dieOfDeepStack($file, $line, $calls);
        }
        $elapsed = \hrtime(true) - $this->runStart;
        if ($elapsed < $this->timeoutNs) {
            if ($this->stuckNs > 0 && $elapsed >= $this->stuckNs && $this->stuckSentFor !== $this->runStart) {
                $this->sendStuck($elapsed, $file, $line, $calls);
            }
            // Time spent waiting for instrumented source does not count; the engine asks again.
            return;
        }
        $seconds = \round($elapsed / 1e9, 2);
        $problem = $this->timeoutProblem("the target ran for {$seconds} s, longer than the timeout", $file, $line, $calls);
        $this->die(Wire::TIMEOUT, $problem);
        \posix_kill(\getmypid(), \SIGKILL);
    }

    /**
     * Past the engine's known-hang limit: says where the run is, and goes on.
     * The engine stops the run if a known hang was stuck there, else lets it
     * reach the timeout. What finished before is sent first.
     */
    private function sendStuck(int $elapsed, string $file, int $line, array $calls): void
    {
        $this->stuckSentFor = $this->runStart;
        $this->flush();
        $millis = \intdiv($elapsed, 1000000);
        $problem = $this->timeoutProblem("the target ran for {$millis} ms, past the known-hang limit", $file, $line, $calls);
        $this->send(\pack('VVP', Wire::EV_STUCK, $this->index, \intdiv($elapsed, 1000)) . $problem);
    }

    /**
     * A Timeout problem at $file:$line with the top of the stack.
     *
     * @param list<array<string, mixed>> $calls
     */
    private function timeoutProblem(string $message, string $file, int $line, array $calls): string
    {
        $top = \array_slice($calls, 0, self::REPORT_CALLS);
        return $this->problem('Timeout', $message, $file, $line, $top, \count($calls) > self::REPORT_CALLS);
    }

    /**
     * SIGUSR1, in streaming mode only (a run re-done to learn where it
     * dies): the engine asks for the trace every few milliseconds.
     */
    private function onProgressRequest(): void
    {
        if (!$this->running || \getmypid() !== $this->pid) {
            return;
        }
        if ($this->wire->busy()) {
            $this->heldSignals |= self::HELD_PROGRESS;
            return;
        }
        $this->sendTraceSoFar();
    }

    /**
     * FuzzingContext::drain(), called by the target's own counters once its
     * trace passes a chunk: checks the stack for a runaway recursion, then
     * sends the trace so far so it stops piling up. Synchronous: no signal.
     */
    private function onTraceFull(): void
    {
        if (!$this->running || \getmypid() !== $this->pid || $this->wire->busy()) {
            return;
        }
        $this->sendTraceSoFar();
    }

    private function sendTraceSoFar(): void
    {
        if (!$this->streaming) {
            $frames = \debug_backtrace(\DEBUG_BACKTRACE_IGNORE_ARGS, $this->maxStackDepth + 3);
            if (\count($frames) > $this->maxStackDepth + 2) {
                [$file, $line, $calls] = $this->interruptedAt($frames);
                $this->dieOfDeepStack($file, $line, $calls);
            }
            unset($frames);
        }
        $trace = $this->style === self::STYLE_TRACE;
        $chunk = $trace ? FuzzingContext::$trace : FuzzingContext::packedEdges();
        // Reset only once sent: a target that has used up its memory can
        // die building the frame, and its last blocks must then still be
        // there for the dying report (they show a runaway recursion).
        $this->send(\pack('VVP', Wire::EV_COVERAGE_CHUNK, $this->index, \strlen($chunk)), $chunk);
        unset($chunk);
        if ($trace) {
            FuzzingContext::$trace = '';
        } else {
            FuzzingContext::$edges = [];
        }
    }

    /**
     * Where a signal handler interrupted the target, from its backtrace:
     * the file and line, and the calls below (as debug_backtrace() lists them).
     *
     * @param list<array<string, mixed>> $frames
     * @return array{0: string, 1: int, 2: list<array<string, mixed>>}
     */
    private function interruptedAt(array $frames): array
    {
        // [0] this method's caller, [1] the closure pcntl called at the
        // interrupted line; one that landed in php-fuzz's own code (a trace
        // drain) is placed at the target's call into it.
        $at = 1;
        while (isset($frames[$at + 1]) && \strncmp($frames[$at]['file'] ?? '', $this->runtimeDir, \strlen($this->runtimeDir)) === 0) {
            $at++;
        }
        $top = $frames[$at] ?? [];
        return [$top['file'] ?? '', $top['line'] ?? 0, \array_slice($frames, $at + 1)];
    }

    /** @param list<array<string, mixed>> $calls */
    private function dieOfDeepStack(string $file, int $line, array $calls): void
    {
        $problem = $this->problem(
            'StackOverflow',
            "the call stack is more than {$this->maxStackDepth} calls deep: unbounded recursion",
            $file,
            $line,
            \array_slice($calls, 0, self::REPORT_CALLS),
            true
        );
        unset($calls);
        $this->die(Wire::STACK_OVERFLOW, $problem);
        \posix_kill(\getmypid(), \SIGKILL);
    }

    public static function shutdownHook(): void
    {
        if (\getmypid() !== self::$instance->pid) {
            return;
        }
        if (\function_exists('pcntl_sigprocmask')) {
            // The engine follows its first SIGPROF with a second, which makes
            // PHP _exit() at once: on a loaded machine that could cut this
            // report short and leave the engine to search for the culprit.
            // From here on the process ends by itself, or by SIGKILL.
            \pcntl_sigprocmask(\SIG_BLOCK, [\SIGPROF]);
        }
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
                ? $this->problem(ProblemText::errorName($fatal['type']), $fatal['message'], $fatal['file'], $fatal['line'], [])
                : $this->problem('Exit', 'the target file called exit() or die() while loading', '', 0, []);
            $this->send(\pack('V', Wire::EV_LOAD_FAILED) . $problem);
            return;
        }
        if ($this->phase !== 'batch') {
            return;
        }
        if ($fatal !== null) {
            $oom = \strpos($fatal['message'], 'Allowed memory size of') === 0
                || \strpos($fatal['message'], 'Out of memory') === 0;
            // PHP's own time limit: a target's set_time_limit(), or the engine's SIGPROF.
            $timeout = \strpos($fatal['message'], 'Maximum execution time') === 0;
            $status = $oom ? Wire::OUT_OF_MEMORY : ($timeout ? Wire::TIMEOUT : Wire::FATAL);
            $problem = $this->problem(ProblemText::errorName($fatal['type']), $fatal['message'], $fatal['file'], $fatal['line'], FatalStack::calls($fatal));
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
        $this->send(
            \pack('VVC', Wire::EV_DIED, $this->index, $status) . $problem . \pack('P', \strlen($coverage)),
            $coverage
        );
        $this->phase = 'dead';
    }

    private function throwableProblem(\Throwable $e): string
    {
        return ProblemText::throwable($this->runtimeDir, $e);
    }

    /**
     * Encodes a Problem (see ProblemText::encode()).
     *
     * @param list<array<string, mixed>> $calls
     */
    private function problem(string $class, string $message, string $file, int $line, array $calls, bool $truncated = false): string
    {
        return ProblemText::encode($this->runtimeDir, $class, $message, $file, $line, $calls, $truncated);
    }
}
