<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * The seeds of a typed fuzz method, as Go's `f.Add()` gives them: the rows
 * of its `#[TestWith]` / `#[TestWithJson]` / `@testWith` and the sets of
 * its `#[DataProvider]` / `#[DataProviderExternal]` / `@dataProvider`, each
 * written as a `php-fuzz arguments v1` entry (docs/autofuzz.md).
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class Seeds
{
    private const ATTRIBUTES = 'PHPUnit\\Framework\\Attributes\\';

    /** @return list<string> one entry per row that can be written */
    public static function of(\ReflectionMethod $method): array
    {
        $entries = [];
        foreach (self::rows($method) as $row) {
            try {
                $entries[] = Entry::write(\array_values($row));
            } catch (\InvalidArgumentException $e) {
                // An object of a class the corpus syntax cannot build: no seed.
            }
        }

        return \array_values(\array_unique($entries));
    }

    /** @return list<array<mixed>> */
    private static function rows(\ReflectionMethod $method): array
    {
        $rows = [];
        foreach ($method->getAttributes() as $attribute) {
            $arguments = $attribute->getArguments();
            switch ($attribute->getName()) {
                case self::ATTRIBUTES . 'TestWith':
                    $rows[] = (array) ($arguments[0] ?? $arguments['data'] ?? []);
                    break;
                case self::ATTRIBUTES . 'TestWithJson':
                    $rows[] = (array) \json_decode((string) ($arguments[0] ?? $arguments['json'] ?? '[]'), true);
                    break;
                case self::ATTRIBUTES . 'DataProvider':
                    \array_push($rows, ...self::provided($method->getDeclaringClass()->getName(), (string) ($arguments[0] ?? $arguments['methodName'] ?? '')));
                    break;
                case self::ATTRIBUTES . 'DataProviderExternal':
                    \array_push($rows, ...self::provided((string) ($arguments[0] ?? ''), (string) ($arguments[1] ?? '')));
                    break;
            }
        }
        foreach (self::docTags((string) $method->getDocComment()) as [$tag, $text]) {
            if ($tag === 'testWith') {
                foreach (\preg_split('/\R/', $text) ?: [] as $line) {
                    $row = \json_decode(\trim($line), true);
                    if (\is_array($row)) {
                        $rows[] = $row;
                    }
                }
            } elseif ($tag === 'dataProvider') {
                $name = \trim(\strtok($text, " \t\n") ?: '');
                [$class, $provider] = \str_contains($name, '::')
                    ? \explode('::', $name, 2)
                    : [$method->getDeclaringClass()->getName(), $name];
                \array_push($rows, ...self::provided($class, $provider));
            }
        }

        return $rows;
    }

    /**
     * The sets a data provider returns; none if it cannot be called.
     *
     * @return list<array<mixed>>
     */
    private static function provided(string $class, string $method): array
    {
        if ($method === '' || !\method_exists($class, $method)) {
            return [];
        }
        try {
            $reflection = new \ReflectionMethod($class, $method);
            $sets = $reflection->isStatic()
                ? $reflection->invoke(null)
                : $reflection->invoke((new \ReflectionClass($class))->newInstance($method));
        } catch (\Throwable $e) {
            \fwrite(\STDERR, "php-fuzz: the data provider $class::$method() failed, its sets are no seeds: " . $e->getMessage() . "\n");

            return [];
        }
        $rows = [];
        foreach (\is_iterable($sets) ? $sets : [] as $set) {
            if (\is_array($set)) {
                $rows[] = $set;
            }
        }

        return $rows;
    }

    /**
     * The `@testWith` and `@dataProvider` tags of a docblock: each tag with
     * its text up to the next tag or the end, the leading `*` of each line
     * taken off. These two tags are PHPUnit's own format, not PHPDoc types.
     *
     * @return list<array{string, string}>
     */
    private static function docTags(string $doc): array
    {
        $tags = [];
        $current = null;
        foreach (\preg_split('/\R/', $doc) ?: [] as $line) {
            $line = \ltrim(\trim($line), '/*');
            $line = \trim($line);
            if (\str_starts_with($line, '@')) {
                $name = \strtok(\substr($line, 1), " \t") ?: '';
                $tags[] = [$name, \trim(\substr($line, \strlen($name) + 1))];
                $current = \count($tags) - 1;
            } elseif ($current !== null && $line !== '') {
                $tags[$current][1] .= "\n" . $line;
            }
        }

        return \array_values(\array_filter($tags, static fn (array $t): bool => \in_array($t[0], ['testWith', 'dataProvider'], true)));
    }
}
