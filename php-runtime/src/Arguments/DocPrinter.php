<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * A schema type (docs/autofuzz.md) written back as the PHPDoc type PHPStan
 * reads, for the fuzz tests `autofuzz --write-test` writes: reading the
 * written type again gives the same schema type.
 *
 * @internal php-fuzz's own, not an API
 */
final class DocPrinter
{
    /** @param array<string, mixed> $type */
    public static function type(array $type): string
    {
        return match ($type['kind']) {
            'null', 'bool', 'float', 'mixed' => $type['kind'],
            'int' => self::int($type['min'] ?? null, $type['max'] ?? null),
            'string' => ($type['non_empty'] ?? false) ? 'non-empty-string' : (($type['numeric'] ?? false) ? 'numeric-string' : 'string'),
            'literal' => self::literal((string) $type['value']),
            'union' => \implode('|', \array_map(static fn (array $t): string => self::member($t), $type['of'])),
            'list' => (($type['non_empty'] ?? false) ? 'non-empty-list<' : 'list<') . self::type($type['of']) . '>',
            'array' => (($type['non_empty'] ?? false) ? 'non-empty-array<' : 'array<') . self::type($type['key']) . ', ' . self::type($type['value']) . '>',
            'shape' => self::shape($type['items']),
            'enum' => '\\' . $type['class'],
            'object' => \implode('|', \array_map(static fn (string $c): string => '\\' . $c, $type['classes'])),
            'date' => '\\' . $type['class'],
            'stringable' => '\\Stringable',
            'closure' => '\\Closure(): ' . self::member($type['returns']),
            default => 'mixed',
        };
    }

    /** A union member: a callable's type in parentheses, so `|` binds outside it. */
    private static function member(array $type): string
    {
        $text = self::type($type);

        return $type['kind'] === 'closure' || $type['kind'] === 'union' ? "($text)" : $text;
    }

    private static function int(?int $min, ?int $max): string
    {
        if ($min === null && $max === null) {
            return 'int';
        }

        return 'int<' . ($min ?? 'min') . ', ' . ($max ?? 'max') . '>';
    }

    /** A literal in the corpus syntax: strings become single-quoted PHPDoc strings. */
    private static function literal(string $value): string
    {
        if ($value === '' || $value[0] !== '"') {
            return $value;
        }
        $bytes = (string) Entry::parse(Entry::HEADER . "\n" . $value . "\n")[0];

        return "'" . \addcslashes($bytes, "'\\") . "'";
    }

    /** @param list<array<string, mixed>> $items */
    private static function shape(array $items): string
    {
        $parts = [];
        foreach ($items as $item) {
            $key = self::literal((string) $item['key']);
            $parts[] = $key . (($item['optional'] ?? false) ? '?' : '') . ': ' . self::type($item['type']);
        }

        return 'array{' . \implode(', ', $parts) . '}';
    }
}
