<?php declare(strict_types=1);

/*
 * `php -l` for many files in one process, for PHP versions whose `-l` takes
 * one file (before 8.3): compiles each file without running it, and prints
 * what `php -l` prints. Messages PHP raises while compiling a file (parse
 * errors, compile errors, deprecations) come before the file's last line:
 * "No syntax errors detected in FILE" or "Errors parsing FILE".
 *
 * Functions and some classes stay declared after their file is compiled,
 * so a file that declares a name an earlier file declared cannot be linted
 * in the same process: for it, the last line is "Lint again in a new
 * process: FILE".
 *
 * Usage: php -d opcache.enable_cli=1 -d display_errors=1 lint.php FILE...
 */

if (!\function_exists('opcache_compile_file') || !\ini_get('opcache.enable_cli')) {
    \fwrite(\STDERR, "lint.php needs OPcache with opcache.enable_cli=1\n");
    exit(2);
}
// Whether compiling $file failed on a name another file declared (a
// closure: a function of this file's own would be declared twice when this
// file lints itself).
$declaredElsewhere = static function (string $error, string $file): bool {
    if (\preg_match('/^Cannot redeclare (?:function )?(\S+)\(\)/', $error, $m)) {
        $declared = \function_exists($m[1]) ? new \ReflectionFunction($m[1]) : null;
    } elseif (\preg_match('/^Cannot declare \w+ (\S+), because the name is already in use/', $error, $m)) {
        $name = $m[1];
        $exists = \class_exists($name, false) || \interface_exists($name, false) || \trait_exists($name, false);
        $declared = $exists ? new \ReflectionClass($name) : null;
    } else {
        return false;
    }
    return $declared !== null && $declared->getFileName() !== (\realpath($file) ?: $file);
};

// OPcache's own warning when a file does not compile repeats what PHP said.
\set_error_handler(static function (int $type, string $message): bool {
    return \str_starts_with($message, 'Zend OPcache could not compile file');
});
foreach (\array_slice($argv, 1) as $file) {
    \error_clear_last();
    try {
        $compiled = \opcache_compile_file($file);
    } catch (\ParseError $e) {
        echo "\nParse error: {$e->getMessage()} in {$file} on line {$e->getLine()}\n";
        $compiled = false;
    }
    if (!$compiled && $declaredElsewhere(\error_get_last()['message'] ?? '', $file)) {
        echo "Lint again in a new process: {$file}\n";
        continue;
    }
    echo $compiled ? "No syntax errors detected in {$file}\n" : "Errors parsing {$file}\n";
}
