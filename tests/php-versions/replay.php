<?php declare(strict_types=1);

/*
 * Runs a php-fuzzer style target (target.php calling $config->setTarget())
 * on input files, the way php-fuzz's harness judges a run: a warning or
 * notice is an ErrorException, a throwable of an allowed class is not a
 * finding. Prints one line per input, then the number of distinct blocks
 * the runs recorded:
 *
 *   INPUT: ok | allowed CLASS | finding CLASS: MESSAGE
 *   @@blocks N
 *
 * Usage: php replay.php PHP_RUNTIME_DIR TARGET INPUT...
 */

[, $runtime, $target] = $argv;
require $runtime . '/internal/FuzzingContext.php';
require $runtime . '/php-fuzzer/Config.php';

use PhpFuzz\FuzzingContext;

\ini_set('display_errors', '1');
\error_reporting(\E_ALL);
\set_error_handler(static function (int $type, string $message, string $file, int $line): bool {
    throw new \ErrorException($message, 0, $type, $file, $line);
});

$seen = [];
FuzzingContext::$drainer = static function () use (&$seen): void {
    foreach (\unpack('V*', FuzzingContext::$trace) ?: [] as $id) {
        $seen[$id] = true;
    }
    FuzzingContext::$trace = '';
};

$config = new \PhpFuzzer\Config();
(static function (string $target) use ($config): void {
    require $target;
})($target);

foreach (\array_slice($argv, 3) as $input) {
    $verdict = 'ok';
    try {
        ($config->target)((string) \file_get_contents($input));
    } catch (\Throwable $e) {
        $allowed = false;
        foreach ($config->allowedExceptions as $class) {
            $allowed = $allowed || $e instanceof $class;
        }
        $verdict = $allowed ? 'allowed ' . \get_class($e) : 'finding ' . \get_class($e) . ': ' . $e->getMessage();
    }
    echo \basename($input), ': ', $verdict, "\n";
}
(FuzzingContext::$drainer)();
echo '@@blocks ', \count($seen), "\n";
