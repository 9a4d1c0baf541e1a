<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * The fork server (docs/protocol.md, "The fork server"): a harness that has
 * loaded the target and is asked to serve forks never runs an input itself.
 * For each Fork request it forks a child, which opens the pair of named
 * pipes the engine made for it and goes on as a fresh harness, so a target that kills
 * its harness costs a fork instead of a PHP start and a reload.
 *
 * @internal php-fuzz's harness, not an API
 */
final class ForkServer
{
    /**
     * Signals a target sends its parent (`posix_kill(posix_getppid(), …)`):
     * the server passes them on to php-fuzz, which would have got them from
     * a plain harness (it ignores them, with a warning). SIGUSR1 is among
     * them: the child gets the harness's own handler back.
     */
    const PASSED_ON = [\SIGTERM, \SIGINT, \SIGHUP, \SIGQUIT, \SIGUSR1, \SIGUSR2];

    /**
     * Seconds a child waits for the engine to open its ends of the named
     * pipes: past the engine's own wait for `Started` (its load timeout,
     * 60 s), the engine is gone, and the child ends instead of waiting in
     * open() for good.
     */
    const OPEN_DEADLINE = 120;

    /** @var Wire the pipes to the engine this process was started with */
    private $control;
    /** @var array<int, mixed> the handlers the server replaced, by signal */
    private $handlers = [];

    public function __construct(Wire $control)
    {
        $this->control = $control;
    }

    /**
     * Serves forks until the engine shuts the server down (returns null).
     * Returns the pipes to go on with as a harness: a forked child's own,
     * or the control pipes where this PHP cannot fork.
     */
    public function serve(): ?Wire
    {
        if (!\function_exists('pcntl_fork') || !\function_exists('pcntl_waitpid')
            || !\function_exists('posix_setpgid')) {
            $this->control->send(\pack('V', Wire::EV_FORK_SERVING) . "\0" . Wire::bytes('pcntl_fork() is not available'));
            return $this->control;
        }
        $this->control->send(\pack('V', Wire::EV_FORK_SERVING) . "\1" . Wire::bytes(''));
        $this->passSignalsOn();
        while (true) {
            $this->control->awaitInput();
            $payload = $this->control->receive();
            $r = new WireReader($payload ?? \pack('V', Wire::REQ_SHUTDOWN));
            $tag = $r->u32();
            if ($tag === Wire::REQ_SHUTDOWN) {
                $this->reap();
                return null;
            }
            if ($tag !== Wire::REQ_FORK) {
                \fwrite(\STDERR, "php-fuzz fork server: unexpected request $tag\n");
                exit(70);
            }
            $inPath = $r->bytes();
            $outPath = $r->bytes();
            // The engine has read the exit status of the last child (from
            // /proc, while it was a zombie) before it asks for the next one.
            $this->reap();
            $pid = \pcntl_fork();
            if ($pid === 0) {
                return $this->becomeChild($inPath, $outPath);
            }
            $error = $pid < 0 ? \pcntl_strerror(\pcntl_get_last_error()) : '';
            $this->control->send(\pack('VV', Wire::EV_FORKED, \max($pid, 0)) . Wire::bytes($error));
        }
    }

    private function passSignalsOn(): void
    {
        if (!\function_exists('pcntl_signal') || !\function_exists('posix_getppid')) {
            return;
        }
        foreach (self::PASSED_ON as $signal) {
            $this->handlers[$signal] = \pcntl_signal_get_handler($signal);
            \pcntl_signal($signal, static function (int $signal): void {
                \posix_kill(\posix_getppid(), $signal);
            });
        }
    }

    /** In the child: a process group of its own, its own pipes, and a first word on them. */
    private function becomeChild(string $inPath, string $outPath): Wire
    {
        foreach ($this->handlers as $signal => $handler) {
            \pcntl_signal($signal, $handler);
        }
        \posix_setpgid(0, 0);
        // The harness's SIGALRM handler would let open() go on waiting:
        // the default action ends the process.
        $deadline = \function_exists('pcntl_alarm') && \function_exists('pcntl_signal_get_handler');
        $alarm = $deadline ? \pcntl_signal_get_handler(\SIGALRM) : null;
        if ($deadline) {
            \pcntl_signal(\SIGALRM, \SIG_DFL);
            \pcntl_alarm(self::OPEN_DEADLINE);
        }
        $wire = IncludeInterceptor::bypassed(static function () use ($inPath, $outPath): ?Wire {
            return Wire::openForked($inPath, $outPath);
        });
        if ($deadline) {
            \pcntl_alarm(0);
            \pcntl_signal(\SIGALRM, $alarm);
        }
        if ($wire === null) {
            \fwrite(\STDERR, "php-fuzz harness: cannot open the named pipes $inPath and $outPath\n");
            exit(70);
        }
        $this->control->close();
        $wire->send(\pack('VV', Wire::EV_STARTED, \getmypid()));
        return $wire;
    }

    /** Reaps the children that ended, so none is left a zombie. */
    private function reap(): void
    {
        while (\pcntl_waitpid(-1, $status, \WNOHANG) > 0) {
        }
    }
}
