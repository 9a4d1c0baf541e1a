<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * `php-fuzz autofuzz --write-test DIR`: the fuzz test that does what the
 * autofuzz campaign does, for the user to commit. Where PHPUnit is
 * installed, a typed PHPUnit fuzz test (docs/phpunit.md); else a
 * php-fuzzer target file calling the same callee.
 *
 * @internal php-fuzz's arguments probe calls it, not an API
 */
final class TestWriter
{
    /**
     * Writes the test into $dir and returns its path. An existing file with
     * other contents is never overwritten.
     *
     * @param list<string> $allowed
     */
    public static function write(string $callee, string $autoload, string $dir, array $allowed): string
    {
        $callee = \ltrim($callee, '\\');
        $schema = Signature::of($callee);
        $function = Autofuzz::reflect($callee);
        $allowed = \array_values(\array_unique(\array_merge(
            [\Exception::class],
            EntryPoints::throws($function),
            \array_map(static fn (string $c): string => \ltrim($c, '\\'), $allowed),
        )));
        [$name, $source] = self::usesPhpunit($autoload)
            ? self::phpunitTest($function, $schema, $allowed)
            : self::targetFile($callee, $autoload, $allowed);
        $path = \rtrim($dir, '/') . '/' . $name;
        if (\is_file($path) && \file_get_contents($path) !== $source) {
            throw new \RuntimeException("$path exists with other contents: remove it or choose another --write-test folder");
        }
        if (\file_put_contents($path, $source) === false) {
            throw new \RuntimeException("cannot write $path");
        }

        return $path;
    }

    /**
     * Whether the project tests with PHPUnit: its autoloader loads PHPUnit,
     * or its root (the folder above `vendor/`) has a phpunit.xml(.dist), as
     * a project run by a PHPUnit installed elsewhere (Debian's) has.
     */
    private static function usesPhpunit(string $autoload): bool
    {
        if (\class_exists('PHPUnit\\Framework\\TestCase')) {
            return true;
        }
        $root = \dirname($autoload, \basename(\dirname($autoload)) === 'vendor' ? 2 : 1);

        return \is_file($root . '/phpunit.xml') || \is_file($root . '/phpunit.xml.dist');
    }

    /**
     * @param array<string, mixed> $schema
     * @param list<string> $allowed
     * @return array{string, string}
     */
    private static function phpunitTest(\ReflectionFunctionAbstract $function, array $schema, array $allowed): array
    {
        $short = $function instanceof \ReflectionMethod ? $function->getDeclaringClass()->getShortName() : '';
        $class = $short . \ucfirst($function->getShortName()) . 'FuzzTest';
        $method = 'fuzz' . \ucfirst($function->getShortName());
        $parameters = [];
        $docs = [];
        $names = [];
        foreach ($schema['parameters'] as $i => $parameter) {
            $name = $parameter['name'] === 'this' ? 'subject' : $parameter['name'];
            $declared = self::declaredType($function, $i, $parameter);
            $parameters[] = ($declared !== '' ? $declared . ' ' : '') . ($parameter['variadic'] ? '...' : '') . '$' . $name
                . ($parameter['optional'] && !$parameter['variadic'] ? ' = ' . self::defaultOf($function, $parameter['name']) : '');
            $docs[] = '     * @param ' . DocPrinter::type($parameter['type']) . ($parameter['variadic'] ? ' ...$' : ' $') . $name;
            if ($parameter['name'] !== 'this') {
                $names[] = ($parameter['variadic'] ? '...$' : '$') . $name;
            }
        }
        $call = self::callExpression($function, \implode(', ', $names));
        $exceptions = \implode(', ', \array_map(static fn (string $c): string => '\\' . $c . '::class', $allowed));
        $source = "<?php declare(strict_types=1);\n\n"
            . '// Written by `php-fuzz autofuzz --write-test` for ' . self::calleeName($function) . " (docs/autofuzz.md).\n\n"
            . "use PhpFuzz\\PHPUnit\\FuzzTest;\nuse PhpFuzz\\PHPUnit\\Fuzzing;\nuse PHPUnit\\Framework\\TestCase;\n\n"
            . "final class $class extends TestCase\n{\n    use Fuzzing;\n\n"
            . "    /**\n" . \implode("\n", $docs) . "\n     */\n"
            . "    #[FuzzTest(allowedExceptions: [$exceptions])]\n"
            . "    public function $method(" . \implode(', ', $parameters) . "): void\n    {\n"
            . "        $call;\n    }\n}\n";

        return [$class . '.php', $source];
    }

    /**
     * @param list<string> $allowed
     * @return array{string, string}
     */
    private static function targetFile(string $callee, string $autoload, array $allowed): array
    {
        $name = \strtolower(\preg_replace('/[^A-Za-z0-9]+/', '-', $callee) ?? 'target') . '.php';
        $list = \implode(', ', \array_map(static fn (string $c): string => \var_export($c, true), $allowed));
        $source = "<?php declare(strict_types=1);\n"
            . "// Written by `php-fuzz autofuzz --write-test` for $callee (docs/autofuzz.md).\n"
            . "/** @var PhpFuzzer\\Config \$config */\n"
            . "\\PhpFuzz\\Arguments\\Autofuzz::preload();\n"
            . 'require_once ' . \var_export($autoload, true) . ";\n"
            . '\\PhpFuzz\\Arguments\\Autofuzz::configure($config, ' . \var_export($callee, true) . ", [$list]);\n";

        return [$name, $source];
    }

    /** @param array<string, mixed> $parameter */
    private static function declaredType(\ReflectionFunctionAbstract $function, int $index, array $parameter): string
    {
        if ($parameter['name'] === 'this') {
            return '\\' . $function->getDeclaringClass()->getName();
        }
        $offset = $function instanceof \ReflectionMethod && !$function->isStatic() && !$function->isConstructor() ? 1 : 0;
        $type = $function->getParameters()[$index - $offset]->getType();

        return $type === null ? '' : self::typeText($type, $function);
    }

    private static function typeText(\ReflectionType $type, \ReflectionFunctionAbstract $function): string
    {
        if ($type instanceof \ReflectionUnionType || $type instanceof \ReflectionIntersectionType) {
            $glue = $type instanceof \ReflectionUnionType ? '|' : '&';
            $parts = \array_map(static fn (\ReflectionType $t): string => self::typeText($t, $function), $type->getTypes());

            return \implode($glue, \array_map(static fn (string $p): string => \str_contains($p, '&') ? "($p)" : $p, $parts));
        }
        \assert($type instanceof \ReflectionNamedType);
        $name = $type->getName();
        if (\in_array(\strtolower($name), ['self', 'static'], true) && $function instanceof \ReflectionMethod) {
            $name = $function->getDeclaringClass()->getName();
        }
        $text = $type->isBuiltin() ? $name : '\\' . $name;

        return $type->allowsNull() && $name !== 'mixed' && $name !== 'null' ? '?' . $text : $text;
    }

    private static function defaultOf(\ReflectionFunctionAbstract $function, string $name): string
    {
        foreach ($function->getParameters() as $parameter) {
            if ($parameter->getName() === $name && $parameter->isDefaultValueAvailable()) {
                return $parameter->isDefaultValueConstant()
                    ? '\\' . \ltrim((string) $parameter->getDefaultValueConstantName(), '\\')
                    : \var_export($parameter->getDefaultValue(), true);
            }
        }

        return 'null';
    }

    private static function callExpression(\ReflectionFunctionAbstract $function, string $arguments): string
    {
        if (!$function instanceof \ReflectionMethod) {
            return '\\' . $function->getName() . "($arguments)";
        }
        if ($function->isConstructor()) {
            return 'new \\' . $function->getDeclaringClass()->getName() . "($arguments)";
        }
        if ($function->isStatic()) {
            return '\\' . $function->getDeclaringClass()->getName() . '::' . $function->getName() . "($arguments)";
        }

        return '$subject->' . $function->getName() . "($arguments)";
    }

    private static function calleeName(\ReflectionFunctionAbstract $function): string
    {
        return $function instanceof \ReflectionMethod
            ? $function->getDeclaringClass()->getName() . '::' . $function->getName()
            : $function->getName();
    }
}
