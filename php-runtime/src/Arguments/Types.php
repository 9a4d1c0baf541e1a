<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Schema types (docs/autofuzz.md) as PHP arrays, and unions kept flat.
 *
 * While a signature is read, one more kind stands for a type php-fuzz
 * cannot build: `['kind' => 'none', 'why' => reason or '', 'like' => type]`,
 * `like` (if known) a type of the values it stands for (`callable-string`:
 * a string), to tell whether a declared type accepts them. It never
 * reaches the schema: a union drops it, a parameter of that type has no
 * value.
 *
 * @internal php-fuzz's own, not an API
 */
final class Types
{
    public static function null(): array
    {
        return ['kind' => 'null'];
    }

    public static function bool(): array
    {
        return ['kind' => 'bool'];
    }

    public static function float(): array
    {
        return ['kind' => 'float'];
    }

    public static function mixed(): array
    {
        return ['kind' => 'mixed'];
    }

    public static function int(?int $min = null, ?int $max = null): array
    {
        if ($min !== null && $max !== null && $min > $max) {
            return self::none("int<$min, $max> is empty", ['kind' => 'int', 'min' => null, 'max' => null]);
        }

        return ['kind' => 'int', 'min' => $min, 'max' => $max];
    }

    public static function string(bool $nonEmpty = false, bool $numeric = false): array
    {
        return ['kind' => 'string', 'non_empty' => $nonEmpty, 'numeric' => $numeric];
    }

    /** `int|string`, PHPStan's array-key. */
    public static function arrayKey(): array
    {
        return self::union([self::int(), self::string()]);
    }

    /** `array`: any keys, mixed values. */
    public static function anyArray(bool $nonEmpty = false): array
    {
        return self::array(self::arrayKey(), self::mixed(), $nonEmpty);
    }

    public static function array(array $key, array $value, bool $nonEmpty = false): array
    {
        return ['kind' => 'array', 'key' => $key, 'value' => $value, 'non_empty' => $nonEmpty];
    }

    public static function list(array $of, bool $nonEmpty = false): array
    {
        return ['kind' => 'list', 'of' => $of, 'non_empty' => $nonEmpty];
    }

    public static function closure(array $returns): array
    {
        return ['kind' => 'closure', 'returns' => $returns];
    }

    /** @param list<string> $classes */
    public static function object(array $classes): array
    {
        return ['kind' => 'object', 'classes' => $classes];
    }

    /** @param array|null $like a type of the values it stands for, if known */
    public static function none(string $why = '', ?array $like = null): array
    {
        return $like === null ? ['kind' => 'none', 'why' => $why] : ['kind' => 'none', 'why' => $why, 'like' => $like];
    }

    public static function isNone(array $type): bool
    {
        return $type['kind'] === 'none';
    }

    /**
     * The union of $types, flat: nested unions spread, repeated members and
     * `none` members dropped, the classes of `object` members and the cases
     * of one enum's members merged; one member left is that member, none
     * left is `none`.
     *
     * @param list<array> $types
     */
    public static function union(array $types): array
    {
        $members = [];
        $nones = [];
        foreach (self::flatten($types) as $type) {
            if (self::isNone($type)) {
                $nones[] = $type;
            } else {
                $members = self::add($members, $type);
            }
        }
        $members = \array_values($members);
        if ($members === []) {
            return self::noneOf($nones);
        }

        return \count($members) === 1 ? $members[0] : ['kind' => 'union', 'of' => $members];
    }

    /** @param list<array> $nones */
    private static function noneOf(array $nones): array
    {
        $why = \implode('; ', \array_unique(\array_filter(\array_column($nones, 'why'))));
        $likes = \array_column($nones, 'like');

        return self::none($why, $nones !== [] && \count($likes) === \count($nones) ? self::union($likes) : null);
    }

    /**
     * The members of a type: a union's, or the type itself.
     *
     * @return list<array>
     */
    public static function members(array $type): array
    {
        return $type['kind'] === 'union' ? $type['of'] : [$type];
    }

    /**
     * @param list<array> $types
     * @return list<array>
     */
    private static function flatten(array $types): array
    {
        $flat = [];
        foreach ($types as $type) {
            \array_push($flat, ...self::members($type));
        }

        return $flat;
    }

    /**
     * @param array<string, array> $members by key
     * @return array<string, array>
     */
    private static function add(array $members, array $type): array
    {
        $key = match ($type['kind']) {
            'object' => 'object',
            'enum' => 'enum ' . $type['class'],
            default => \json_encode($type, \JSON_THROW_ON_ERROR),
        };
        $existing = $members[$key] ?? null;
        if ($existing === null) {
            $members[$key] = $type;
        } elseif ($type['kind'] === 'object') {
            $members[$key]['classes'] = \array_values(\array_unique([...$existing['classes'], ...$type['classes']]));
        } elseif ($type['kind'] === 'enum') {
            $members[$key]['cases'] = \array_values(\array_unique([...$existing['cases'], ...$type['cases']]));
        }

        return $members;
    }
}
