<?php
// Runs one catalog entry once, outside php-fuzz, and prints one line:
//   "BUG <kind>: <message> @ <file>:<line>"  (file relative to the library root), exit 1
//   "OK: ..."                                   (no error, or a documented exception), exit 0
// usage: php bugs/repro.php SPEC.json INPUT_FILE
// SPEC: {"root": DIR, "psr4": {"Prefix\\": "dir/" (relative to root, or absolute)},
//        "files": [...], "entry": "PHP statements using $input", "allowed": [classes],
//        "error_reporting": int, "timeout": seconds}
// No composer: a PSR-4 map (a "" prefix means PSR-0 with underscores under that dir).
$spec = json_decode(file_get_contents($argv[1]), true);
$input = file_get_contents($argv[2]);
$root = rtrim(realpath($spec['root']), '/') . '/';
$map = $spec['psr4'];
$path = fn(string $dir) => str_starts_with($dir, "/") ? $dir : $root . $dir;
spl_autoload_register(function ($class) use ($map, $path) {
    foreach ($map as $prefix => $dir) {
        if ($prefix === '') {
            $file = $path($dir) . str_replace(['\\', '_'], '/', $class) . '.php';
        } elseif (strncmp($class, $prefix, strlen($prefix)) === 0) {
            $file = $path($dir) . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        } else {
            continue;
        }
        if (is_file($file)) {
            require $file;
            return;
        }
    }
});
foreach ($spec['files'] ?? [] as $file) {
    require_once $path($file);
}
error_reporting($spec['error_reporting'] ?? E_ALL);
ini_set('memory_limit', '256M');
set_time_limit($spec['timeout'] ?? 10);
$rel = fn(string $f) => str_starts_with($f, $root) ? substr($f, strlen($root)) : $f;
set_error_handler(function ($no, $msg, $file, $line) {
    if (!(error_reporting() & $no)) {
        return false; // @-suppressed or masked: php-fuzz respects both too
    }
    throw new ErrorException($msg, 0, $no, $file, $line);
});
register_shutdown_function(function () use ($rel) {
    $e = error_get_last();
    if ($e && in_array($e['type'], [E_ERROR, E_CORE_ERROR, E_COMPILE_ERROR], true)) {
        $kind = str_contains($e['message'], 'Maximum execution time') ? 'timeout'
            : (str_contains($e['message'], 'Allowed memory size') ? 'oom' : 'fatal');
        echo "BUG $kind: {$e['message']} @ {$rel($e['file'])}:{$e['line']}\n";
        exit(1);
    }
});
$names = [E_WARNING => 'Warning', E_NOTICE => 'Notice', E_DEPRECATED => 'Deprecated',
    E_USER_WARNING => 'User warning', E_USER_NOTICE => 'User notice', E_USER_DEPRECATED => 'User deprecated'];
$one = fn(string $s) => str_replace(["\r", "\n", $root], [" ", " ", ""], substr($s, 0, 240));
try {
    (function (string $input) use ($spec) {
        eval($spec['entry']);
    })($input);
    echo "OK: no error\n";
} catch (Throwable $t) {
    foreach ($spec['allowed'] ?? [] as $class) {
        if ($t instanceof $class) {
            echo 'OK: documented ' . get_class($t) . ': ' . $one($t->getMessage()) . "\n";
            exit(0);
        }
    }
    $kind = $t instanceof ErrorException ? ($names[$t->getSeverity()] ?? 'Error') : get_class($t);
    echo "BUG $kind: {$one($t->getMessage())} @ {$rel($t->getFile())}:{$t->getLine()}\n";
    exit(1);
}
