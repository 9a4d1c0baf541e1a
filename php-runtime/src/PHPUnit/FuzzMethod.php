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
        /** 'string', 'provider' (a \PhpFuzz\FuzzedDataProvider) or 'arguments' (typed, docs/autofuzz.md) */
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

    /**
     * The arguments the method is called with for $input: the input, a
     * FuzzedDataProvider over it, or the values of a typed entry.
     *
     * @return list<mixed>
     * @throws \PhpFuzz\Arguments\EntryError a typed method's input is no entry
     */
    public function arguments(string $input): array
    {
        return match ($this->takes) {
            'provider' => [new \PhpFuzz\FuzzedDataProvider($input)],
            'arguments' => \PhpFuzz\Arguments\Entry::parse($input),
            default => [$input],
        };
    }

    /** A typed method's parameters as the engine reads them (docs/autofuzz.md). */
    public function schema(): array
    {
        return \PhpFuzz\Arguments\Signature::ofTestMethod(new \ReflectionMethod($this->class, $this->name));
    }

    /**
     * Seeds of a typed method: the rows of its #[TestWith] / @testWith and
     * the sets of its #[DataProvider] / @dataProvider, as entries; rows that
     * cannot be written (objects of other classes) are left out.
     *
     * @return list<string>
     */
    public function seeds(): array
    {
        return $this->takes === 'arguments' ? \PhpFuzz\Arguments\Seeds::of(new \ReflectionMethod($this->class, $this->name)) : [];
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
        [$takes, $typeProblem] = self::parameterKind($method);
        $problems = \array_filter([
            $method->isStatic() ? 'is static' : null,
            $method->isPublic() ? null : 'is not public',
            $takes === null ? 'takes no parameter' : null,
        ]);
        if ($error === null && $problems !== []) {
            $error = "$name cannot be a fuzz test: it must be a public, non-static method that takes "
                . '`string $input`, a `\PhpFuzz\FuzzedDataProvider $data` or typed parameters; this one ' . \implode(' and ', $problems);
        } elseif ($error === null && $typeProblem !== null) {
            $error = "$name cannot be a fuzz test: $typeProblem";
        }

        return new FuzzMethod($method->getDeclaringClass()->getName(), $method->getName(), $options, $takes ?? 'string', $error);
    }

    /**
     * What the method takes: 'string' (one `string $input`), 'provider', or
     * 'arguments' (any other typed parameters, read as autofuzz reads them),
     * and why typed parameters cannot be built, if they cannot.
     *
     * @return array{?string, ?string}
     */
    private static function parameterKind(\ReflectionMethod $method): array
    {
        $parameters = $method->getParameters();
        if ($parameters === []) {
            return [null, null];
        }
        $type = $parameters[0]->getType();
        if (\count($parameters) === 1 && $type instanceof \ReflectionNamedType) {
            if ($type->getName() === 'string' && !$type->allowsNull()) {
                return ['string', null];
            }
            if ($type->getName() === \PhpFuzz\FuzzedDataProvider::class) {
                return ['provider', null];
            }
        }
        try {
            \PhpFuzz\Arguments\Signature::ofTestMethod($method);
        } catch (\PhpFuzz\Arguments\NotFuzzable $e) {
            return ['arguments', $e->getMessage() . ' (' . self::describeParameters($method) . ')'];
        }

        return ['arguments', null];
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
