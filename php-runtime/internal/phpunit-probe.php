<?php declare(strict_types=1);

// php-fuzz's look at a PHPUnit fuzz test before it fuzzes it:
// `php phpunit-probe.php TEST_FILE` loads the test as phpunit would and prints
// one line, "PHP-FUZZ-PROBE " and JSON: {"ok": {...}} or {"error": {...}}.

require __DIR__ . '/FuzzedDataProvider.php';
require __DIR__ . '/Config.php';
require __DIR__ . '/arguments-autoload.php';
foreach (['FuzzTest', 'Fuzzing', 'FuzzMethod', 'Replay', 'Bootstrap', 'HookMethods', 'FuzzTarget'] as $class) {
    require __DIR__ . '/PHPUnit/' . $class . '.php';
}

try {
    $result = ['ok' => \PhpFuzz\PHPUnit\FuzzTarget::describe($argv[1] ?? '')];
} catch (\Throwable $e) {
    $result = ['error' => ['class' => \get_class($e), 'message' => $e->getMessage(), 'file' => $e->getFile(), 'line' => $e->getLine()]];
}
echo "\nPHP-FUZZ-PROBE ", \json_encode($result, \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE), "\n";
