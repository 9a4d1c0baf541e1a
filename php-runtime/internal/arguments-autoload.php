<?php declare(strict_types=1);

// The harness's own typed-arguments classes (`PhpFuzz\Arguments\…`, in
// Arguments/ beside this file), loaded when a typed target first uses
// them; prepended, so the runtime's copy wins over a project's composer
// install of php-fuzz (docs/autofuzz.md).
\spl_autoload_register(static function (string $class): void {
    $prefix = 'PhpFuzz\\Arguments\\';
    if (\strncmp($class, $prefix, \strlen($prefix)) === 0 && \is_file($file = __DIR__ . '/Arguments/' . \substr($class, \strlen($prefix)) . '.php')) {
        require $file;
    }
}, true, true);
