<?php declare(strict_types=1);

/*
 * Runs PHP files, instrumented or not, one after the other in this process,
 * and prints for each what it printed and which blocks it recorded:
 *
 *   @@file FILE
 *   ...what FILE printed, PHP's own messages included...
 *   @@blocks ID,ID,...     (the distinct block ids, trace or edge-map stub)
 *   @@comparisons N        (cmplog records logged)
 *
 * Usage: php run.php PHP_RUNTIME_INTERNAL_DIR FILE...
 * The files must not declare the same names (each has its own namespace).
 */

[, $runtime] = $argv;
require $runtime . '/FuzzingContext.php';
require $runtime . '/CmpLog.php';

use PhpFuzz\CmpLog;
use PhpFuzz\FuzzingContext;

\ini_set('display_errors', '1');
\error_reporting(\E_ALL);

$drained = '';
FuzzingContext::$drainer = static function () use (&$drained): void {
    $drained .= FuzzingContext::$trace;
    FuzzingContext::$trace = '';
};

foreach (\array_slice($argv, 2) as $file) {
    FuzzingContext::reset();
    CmpLog::reset();
    $drained = '';
    echo "@@file {$file}\n";
    \ob_start();
    try {
        (static function (string $file): void {
            require $file;
        })($file);
    } catch (\Throwable $e) {
        echo 'Uncaught ', \get_class($e), ': ', $e->getMessage(), "\n";
    }
    echo \ob_get_clean();
    $blocks = [];
    foreach (\unpack('V*', $drained . FuzzingContext::$trace) ?: [] as $id) {
        $blocks[$id] = true;
    }
    foreach (FuzzingContext::$edges as $edge => $count) {
        $blocks[$edge & 0xFFFFFFF] = true;
    }
    \ksort($blocks);
    echo "\n@@blocks ", \implode(',', \array_keys($blocks)), "\n";
    echo '@@comparisons ', \strlen(CmpLog::$log), "\n";
}
