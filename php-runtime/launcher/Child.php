<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * Runs a child process to its end, forwarding SIGINT and SIGTERM to it, and
 * returns its exit status the way a shell reports it (128 + signal when a
 * signal ended it).
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Child
{
    /**
     * @param list<string> $command
     * @param array<int, mixed> $descriptors
     */
    public static function run(array $command, array $descriptors): int
    {
        $process = \proc_open($command, $descriptors, $pipes);
        if ($process === false) {
            throw new LauncherError('cannot start ' . $command[0]);
        }
        $forwarded = self::forwardSignals($process);
        try {
            do {
                $status = \proc_get_status($process);
                if ($status['running']) {
                    \usleep(10_000);
                }
            } while ($status['running']);
        } finally {
            self::restoreSignals($forwarded);
            \proc_close($process);
        }
        if ($status['signaled']) {
            return 128 + $status['termsig'];
        }

        return $status['exitcode'];
    }

    /** @return list<int> */
    private static function forwardSignals($process): array
    {
        if (!\function_exists('pcntl_signal')) {
            return [];
        }
        \pcntl_async_signals(true);
        $signals = [\SIGINT, \SIGTERM];
        foreach ($signals as $signal) {
            \pcntl_signal($signal, static function (int $signal) use ($process): void {
                \proc_terminate($process, $signal);
            });
        }

        return $signals;
    }

    /** @param list<int> $signals */
    private static function restoreSignals(array $signals): void
    {
        foreach ($signals as $signal) {
            \pcntl_signal($signal, \SIG_DFL);
        }
    }
}
