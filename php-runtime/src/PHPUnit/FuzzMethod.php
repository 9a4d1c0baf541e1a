<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

/**
 * One #[FuzzTest] method of a test class: its options, what it takes, and
 * where its seeds and findings live. The same rules serve phpunit's replay
 * and php-fuzz's fuzzing, so both agree.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class FuzzMethod
{
    private function __construct(
        public readonly string $class,
        public readonly string $name,
        public readonly FuzzTest $options,
        /** 'string' or 'provider' (a \PhpFuzz\FuzzedDataProvider) */
        public readonly string $takes,
        /** why the method cannot be a fuzz test, or null */
        public readonly ?string $error,
    ) {
    }

    /**
     * The #[FuzzTest] methods of $class, in declaration order.
     *
     * @return list<FuzzMethod>
     */
    public static function all(string $class): array
    {
        $methods = [];
        foreach ((new \ReflectionClass($class))->getMethods() as $method) {
            $attributes = $method->getAttributes(FuzzTest::class);
            if ($attributes !== []) {
                $methods[] = self::from($method, $attributes[0]);
            }
        }

        return $methods;
    }

    /** The #[FuzzTest] method $name of $class, or null. */
    public static function named(string $class, string $name): ?FuzzMethod
    {
        foreach (self::all($class) as $method) {
            if ($method->name === $name) {
                return $method;
            }
        }

        return null;
    }

    /** `fuzz/<ShortClassName>/<method>/` in the test file's folder. */
    public function folder(): string
    {
        $reflection = new \ReflectionClass($this->class);

        return \dirname((string) $reflection->getFileName()) . '/fuzz/' . $reflection->getShortName() . '/' . $this->name;
    }

    /** @return list<string> the files of folder(), sorted; dot files skipped */
    public function inputs(): array
    {
        $files = [];
        foreach (\is_dir($this->folder()) ? (\scandir($this->folder()) ?: []) : [] as $entry) {
            $path = $this->folder() . '/' . $entry;
            if ($entry[0] !== '.' && \is_file($path)) {
                $files[] = $path;
            }
        }

        return $files;
    }

    /** The dictionary's absolute path (relative ones are relative to the test file), or null. */
    public function dictionary(): ?string
    {
        $dictionary = $this->options->dictionary;
        if ($dictionary === null || $dictionary === '' || $dictionary[0] === '/') {
            return $dictionary ?: null;
        }

        return \dirname((string) (new \ReflectionClass($this->class))->getFileName()) . '/' . $dictionary;
    }

    /** The argument the method is called with for $input. */
    public function argument(string $input): string|\PhpFuzz\FuzzedDataProvider
    {
        return $this->takes === 'provider' ? new \PhpFuzz\FuzzedDataProvider($input) : $input;
    }

    private static function from(\ReflectionMethod $method, \ReflectionAttribute $attribute): FuzzMethod
    {
        $name = $method->getDeclaringClass()->getName() . '::' . $method->getName() . '()';
        $error = null;
        try {
            $options = $attribute->newInstance();
        } catch (\Throwable $e) {
            $options = new FuzzTest();
            $error = "the #[FuzzTest] of $name is invalid: " . $e->getMessage();
        }
        $takes = self::parameterKind($method);
        $problems = \array_filter([
            $method->isStatic() ? 'is static' : null,
            $method->isPublic() ? null : 'is not public',
            $takes === null ? 'takes (' . self::describeParameters($method) . ')' : null,
        ]);
        if ($error === null && $problems !== []) {
            $error = "$name cannot be a fuzz test: it must be a public, non-static method that takes one parameter, "
                . '`string $input` or `\PhpFuzz\FuzzedDataProvider $data`; this one ' . \implode(' and ', $problems);
        }

        return new FuzzMethod($method->getDeclaringClass()->getName(), $method->getName(), $options, $takes ?? 'string', $error);
    }

    private static function parameterKind(\ReflectionMethod $method): ?string
    {
        $parameters = $method->getParameters();
        if (\count($parameters) < 1 || $method->getNumberOfRequiredParameters() > 1) {
            return null;
        }
        $type = $parameters[0]->getType();
        if (!$type instanceof \ReflectionNamedType) {
            return null;
        }

        return match ($type->getName()) {
            'string' => 'string',
            \PhpFuzz\FuzzedDataProvider::class => 'provider',
            default => null,
        };
    }

    private static function describeParameters(\ReflectionMethod $method): string
    {
        $parts = [];
        foreach ($method->getParameters() as $parameter) {
            $type = $parameter->getType();
            $parts[] = ($type !== null ? $type . ' ' : '') . '$' . $parameter->getName();
        }

        return \implode(', ', $parts);
    }
}
