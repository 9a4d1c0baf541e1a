<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

/**
 * Replays a security finding (`security-<detector>-<sha1>` in a fuzz test's
 * folder). Only php-fuzz's detectors see such a bug, and they need its
 * instrumented code, so phpunit asks `php-fuzz run-single`: the case fails
 * while the detector still reports the input, naming the detector, and
 * passes once the bug is fixed (docs/phpunit.md).
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class SecurityReplay
{
    /** What php-fuzz reports for the input, or null once it reports nothing. */
    public static function problem(string $test, string $inputFile, string $launcher): ?string
    {
        $detector = \preg_match('/^security-(.+)-[0-9a-f]{40}$/', \basename($inputFile), $m) === 1 ? $m[1] : 'unknown';
        $command = \array_merge(self::command($launcher), ['run-single', $test, $inputFile]);
        $process = @\proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if (!\is_resource($process)) {
            return "this input is a security finding of php-fuzz's $detector detector, which only php-fuzz can replay, "
                . 'and ' . \implode(' ', $command) . " could not be started\n";
        }
        $output = \stream_get_contents($pipes[1]) . \stream_get_contents($pipes[2]);
        \fclose($pipes[1]);
        \fclose($pipes[2]);
        $status = \proc_close($process);
        if ($status === 0) {
            return null;
        }
        $what = $status === 77
            ? "php-fuzz's $detector detector reports a security bug"
            : "php-fuzz could not replay this security finding of its $detector detector (exit $status)";
        return "$what:\n" . \rtrim($output) . "\n";
    }

    /** @return list<string> how to run the launcher: vendor/bin/php-fuzz is a PHP script */
    private static function command(string $launcher): array
    {
        if (\is_file($launcher)) {
            return [\PHP_BINARY, $launcher];
        }
        return [$launcher];
    }
}
