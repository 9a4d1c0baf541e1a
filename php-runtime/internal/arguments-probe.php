<?php declare(strict_types=1);

// php-fuzz's look at typed entry points before it fuzzes them
// (docs/autofuzz.md): `php arguments-probe.php write-test CALLEE AUTOLOAD DIR [ALLOWED…]`
// loads the project's autoloader, writes the callee's fuzz test and prints
// one line, "PHP-FUZZ-PROBE " and JSON: {"ok": {...}} or {"error": {...}}.

require __DIR__ . '/FuzzedDataProvider.php';
require __DIR__ . '/Config.php';
\spl_autoload_register(static function (string $class): void {
    $prefix = 'PhpFuzz\\Arguments\\';
    if (\strncmp($class, $prefix, \strlen($prefix)) === 0 && \is_file($file = __DIR__ . '/Arguments/' . \substr($class, \strlen($prefix)) . '.php')) {
        require $file;
    }
}, true, true);

try {
    $mode = $argv[1] ?? '';
    if ($mode !== 'write-test' || \count($argv) < 5) {
        throw new \InvalidArgumentException('usage: arguments-probe.php write-test CALLEE AUTOLOAD DIR [ALLOWED…]');
    }
    require_once $argv[3];
    $result = ['ok' => ['path' => \PhpFuzz\Arguments\TestWriter::write($argv[2], $argv[3], $argv[4], \array_slice($argv, 5))]];
} catch (\Throwable $e) {
    $result = ['error' => ['class' => \get_class($e), 'message' => $e->getMessage(), 'file' => $e->getFile(), 'line' => $e->getLine()]];
}
echo "\nPHP-FUZZ-PROBE ", \json_encode($result, \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE), "\n";
