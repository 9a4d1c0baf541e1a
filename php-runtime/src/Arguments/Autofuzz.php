<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Sets a target up to call a function or method with typed arguments, as
 * `php-fuzz autofuzz 'App\Parser::parse'` writes it (docs/autofuzz.md):
 * the callee's parameters go to the engine as a schema, and each input, a
 * `php-fuzz arguments v1` entry, becomes the call's arguments.
 *
 * @internal php-fuzz's generated targets call it, not an API
 */
final class Autofuzz
{
    /**
     * @param list<string> $allowed exception classes that are normal results,
     *        besides \Exception and the callee's (and its constructor's) @throws
     */
    public static function configure(\PhpFuzzer\Config $config, string $callee, array $allowed = []): void
    {
        $schema = Signature::of($callee);
        $function = self::reflect($callee);
        $config->setAllowedExceptions(\array_values(\array_unique(\array_merge(
            [\Exception::class],
            EntryPoints::throws($function),
            \array_map(static fn (string $c): string => \ltrim($c, '\\'), $allowed),
        ))));
        self::describe($config, $schema);
        $call = self::caller($function);
        $config->setTarget(static function (string $input) use ($call): void {
            try {
                $values = Entry::parse($input);
            } catch (EntryError $e) {
                return; // only a byte-level replacement makes one; the engine checks what it sends
            }
            $call($values);
        });
    }

    /**
     * Gives the engine the schema and keeps the PHPDoc parser's files out
     * of the instrumented code.
     *
     * @param array<string, mixed> $schema
     */
    public static function describe(\PhpFuzzer\Config $config, array $schema): void
    {
        $config->arguments = \json_encode($schema, \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_THROW_ON_ERROR);
        $folder = DocTypes::libraryFolder();
        if ($folder !== null) {
            $config->uninstrumented[] = \rtrim($folder, '/') . '/';
        }
        $reason = DocTypes::unavailable();
        if ($reason !== null) {
            \fwrite(\STDERR, "php-fuzz: $reason\n");
        }
    }

    /**
     * Loads every class of this folder now, before the project's autoloader
     * is: a project that installed php-fuzz with composer would otherwise
     * load its own copy of them (instrumented, and perhaps of another
     * release) instead of the harness's.
     */
    public static function preload(): void
    {
        foreach (\glob(__DIR__ . '/*.php') ?: [] as $file) {
            require_once $file;
        }
    }

    /** The function or method `$callee` names (Signature::of() checked it). */
    public static function reflect(string $callee): \ReflectionFunctionAbstract
    {
        $callee = \ltrim($callee, '\\');
        if (\str_contains($callee, '::')) {
            [$class, $method] = \explode('::', $callee, 2);

            return new \ReflectionMethod($class, $method);
        }

        return new \ReflectionFunction($callee);
    }

    /**
     * How an entry's values call the callee: a constructor builds its
     * class, an instance method takes its object from the first value.
     *
     * @return \Closure(list<mixed>): mixed
     */
    private static function caller(\ReflectionFunctionAbstract $function): \Closure
    {
        if ($function instanceof \ReflectionMethod && $function->isConstructor()) {
            $class = $function->getDeclaringClass()->getName();

            return static fn (array $values): object => Invoker::construct($class, $values);
        }
        if ($function instanceof \ReflectionMethod && !$function->isStatic()) {
            return Invoker::method($function->getDeclaringClass()->getName(), $function->getName());
        }

        return self::staticCall($function);
    }

    /** @return \Closure(list<mixed>): mixed */
    private static function staticCall(\ReflectionFunctionAbstract $function): \Closure
    {
        $callee = $function instanceof \ReflectionMethod
            ? [$function->getDeclaringClass()->getName(), $function->getName()]
            : $function->getName();

        return static fn (array $values) => Invoker::call($callee, $values);
    }
}
