<?php declare(strict_types=1);

// php-fuzz's look at typed entry points before it fuzzes them
// (docs/autofuzz.md). Two modes, each printing one line, "PHP-FUZZ-PROBE "
// and JSON: {"ok": …} or {"error": {"class", "message", "file", "line"}}.
//
// `php arguments-probe.php write-test CALLEE AUTOLOAD DIR [ALLOWED…]` loads
// the project's autoloader and writes the callee's fuzz test ({"ok": {"path"}}).
//
// `php arguments-probe.php scan DIR AUTOLOAD` loads the autoloader and lists
// the entry points of the package in DIR, ranked (EntryPointScan's JSON). A
// file whose loading stops PHP (a fatal error) is left out: the probe runs
// itself again with the files to leave out and their errors as a fifth
// argument (JSON, file => reason), and that run prints the line.

require __DIR__ . '/FuzzedDataProvider.php';
require __DIR__ . '/Config.php';
require __DIR__ . '/arguments-autoload.php';

/** The most times a scan runs itself again, one file left out more each time. */
const PHP_FUZZ_MAX_RESCANS = 50;

/** Prints the probe's line. */
function phpFuzzProbeAnswer(array $result): void
{
    $GLOBALS['phpFuzzProbeAnswered'] = true;
    echo "\nPHP-FUZZ-PROBE ", \json_encode($result, \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_PRESERVE_ZERO_FRACTION), "\n";
}

/**
 * `scan DIR AUTOLOAD [BROKEN]`: the scan's result.
 *
 * @param list<string> $argv
 */
function phpFuzzScan(array $argv): array
{
    $broken = isset($argv[4]) ? \json_decode($argv[4], true, 512, \JSON_THROW_ON_ERROR) : [];
    if (!\is_array($broken)) {
        throw new \InvalidArgumentException('scan: the files to leave out must be a JSON object');
    }
    \register_shutdown_function(static function () use ($argv, $broken): void {
        phpFuzzRescanAfterFatal($argv, $broken);
    });
    require_once $argv[3];

    return \PhpFuzz\Arguments\EntryPointScan::scan($argv[2], $broken);
}

/**
 * After a fatal error in a scan: runs the scan again without the file that
 * caused it (the file PHP names, if it is in the package, else the one the
 * scan was loading), and passes its output on; or answers with the error.
 *
 * @param list<string> $argv
 * @param array<string, string> $broken
 */
function phpFuzzRescanAfterFatal(array $argv, array $broken): void
{
    $error = \error_get_last();
    $fatal = [\E_ERROR, \E_PARSE, \E_CORE_ERROR, \E_COMPILE_ERROR, \E_USER_ERROR];
    if (!empty($GLOBALS['phpFuzzProbeAnswered']) || $error === null || !\in_array($error['type'], $fatal, true)) {
        return;
    }
    $root = \realpath($argv[2]);
    $file = \realpath($error['file']);
    $culprit = $root !== false && $file !== false && \str_starts_with($file, $root . '/') ? $file : \PhpFuzz\Arguments\EntryPointScan::current();
    $rescans = (int) \getenv('PHP_FUZZ_SCAN_RESCANS');
    if ($culprit === null || isset($broken[$culprit]) || \max($rescans, \count($broken)) >= PHP_FUZZ_MAX_RESCANS) {
        phpFuzzProbeAnswer(['error' => ['class' => 'FatalError', 'message' => $error['message'], 'file' => $error['file'], 'line' => $error['line']]]);

        return;
    }
    $broken[$culprit] = "loading it stops PHP: {$error['message']} ({$error['file']}:{$error['line']})";
    $command = [\PHP_BINARY, __FILE__, 'scan', $argv[2], $argv[3], \json_encode($broken, \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE)];
    \putenv('PHP_FUZZ_SCAN_RESCANS=' . ($rescans + 1));
    $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => \STDOUT, 2 => \STDERR], $pipes);
    if (!\is_resource($process)) {
        phpFuzzProbeAnswer(['error' => ['class' => 'FatalError', 'message' => $error['message'] . ' (and the scan could not run again)', 'file' => $error['file'], 'line' => $error['line']]]);

        return;
    }
    $GLOBALS['phpFuzzProbeAnswered'] = true;
    exit(\proc_close($process));
}

try {
    $mode = $argv[1] ?? '';
    if ($mode === 'write-test' && \count($argv) >= 5) {
        require_once $argv[3];
        $result = ['ok' => ['path' => \PhpFuzz\Arguments\TestWriter::write($argv[2], $argv[3], $argv[4], \array_slice($argv, 5))]];
    } elseif ($mode === 'scan' && \count($argv) >= 4) {
        $result = ['ok' => phpFuzzScan($argv)];
    } else {
        throw new \InvalidArgumentException('usage: arguments-probe.php write-test CALLEE AUTOLOAD DIR [ALLOWED…] | scan DIR AUTOLOAD');
    }
} catch (\Throwable $e) {
    $result = ['error' => ['class' => \get_class($e), 'message' => $e->getMessage(), 'file' => $e->getFile(), 'line' => $e->getLine()]];
}
phpFuzzProbeAnswer($result);
