<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * PHP values written in the corpus syntax (docs/autofuzz.md), for the
 * `literal` types of the schema, and the schema type of exactly one value.
 *
 * @internal php-fuzz's own, not an API
 */
final class Literal
{
    /** A scalar or null in the corpus syntax: `null`, `true`, `-3`, `1.5`, `"a\x00"`. */
    public static function of(null|bool|int|float|string $value): string
    {
        return match (true) {
            $value === null => 'null',
            \is_bool($value) => $value ? 'true' : 'false',
            \is_int($value) => (string) $value,
            \is_float($value) => self::float($value),
            default => self::string($value),
        };
    }

    /** A `literal` schema type. */
    public static function type(null|bool|int|float|string $value): array
    {
        return ['kind' => 'literal', 'value' => self::of($value)];
    }

    /**
     * The schema type whose only value is $value: a literal, a shape of
     * them for an array, an enum type of one case; null for other objects.
     */
    public static function typeOfValue(mixed $value): ?array
    {
        if ($value === null) {
            return Types::null();
        }
        if (\is_scalar($value)) {
            return self::type($value);
        }
        if ($value instanceof \UnitEnum) {
            return ['kind' => 'enum', 'class' => $value::class, 'cases' => [$value->name]];
        }
        if (!\is_array($value)) {
            return null;
        }
        $items = [];
        foreach ($value as $key => $item) {
            $type = self::typeOfValue($item);
            if ($type === null) {
                return null;
            }
            $items[] = ['key' => self::of($key), 'optional' => false, 'type' => $type];
        }

        return ['kind' => 'shape', 'items' => $items];
    }

    /** What a literal's text is: 'null', 'bool', 'int', 'float' or 'string'. */
    public static function kind(string $literal): string
    {
        return match (true) {
            $literal === 'null' => 'null',
            $literal === 'true' || $literal === 'false' => 'bool',
            $literal !== '' && $literal[0] === '"' => 'string',
            \is_numeric($literal) && !\str_contains($literal, '.') && !\str_contains(\strtolower($literal), 'e') => 'int',
            default => 'float',
        };
    }

    /**
     * The shortest decimal that reads back as $value, with `.0` where it
     * would read as an integer; `INF`, `-INF`, `NAN`.
     */
    public static function float(float $value): string
    {
        if (\is_nan($value)) {
            return 'NAN';
        }
        if (\is_infinite($value)) {
            return $value > 0 ? 'INF' : '-INF';
        }
        $precision = \ini_get('serialize_precision');
        \ini_set('serialize_precision', '-1');
        $text = \var_export($value, true);
        \ini_set('serialize_precision', (string) $precision);

        return \str_replace(['E+', 'E'], ['e', 'e'], $text);
    }

    /**
     * A double-quoted string: printable ASCII and valid UTF-8 as is, `"`,
     * `\` and `$` escaped, every other byte as `\xhh`
     * (lower-case hex, as Entry writes it).
     */
    public static function string(string $value): string
    {
        $text = '"';
        $length = \strlen($value);
        for ($i = 0; $i < $length;) {
            $byte = \ord($value[$i]);
            if ($byte >= 0x80 && ($sequence = self::utf8At($value, $i)) > 0) {
                $text .= \substr($value, $i, $sequence);
                $i += $sequence;
                continue;
            }
            $text .= match (true) {
                $value[$i] === '"', $value[$i] === '\\', $value[$i] === '$' => '\\' . $value[$i],
                $byte >= 0x20 && $byte < 0x7f => $value[$i],
                default => \sprintf('\\x%02x', $byte),
            };
            $i++;
        }

        return $text . '"';
    }

    /** The length of the valid UTF-8 sequence at $i (a non-ASCII lead byte), 0 if there is none. */
    private static function utf8At(string $value, int $i): int
    {
        $lead = \ord($value[$i]);
        [$length, $low, $high] = match (true) {
            $lead >= 0xC2 && $lead <= 0xDF => [2, 0x80, 0xBF],
            $lead === 0xE0 => [3, 0xA0, 0xBF],
            $lead === 0xED => [3, 0x80, 0x9F],
            $lead >= 0xE1 && $lead <= 0xEF => [3, 0x80, 0xBF],
            $lead === 0xF0 => [4, 0x90, 0xBF],
            $lead >= 0xF1 && $lead <= 0xF3 => [4, 0x80, 0xBF],
            $lead === 0xF4 => [4, 0x80, 0x8F],
            default => [0, 0, 0],
        };
        if ($length === 0 || $i + $length > \strlen($value)) {
            return 0;
        }
        for ($k = 1; $k < $length; $k++) {
            $byte = \ord($value[$i + $k]);
            if ($byte < ($k === 1 ? $low : 0x80) || $byte > ($k === 1 ? $high : 0xBF)) {
                return 0;
            }
        }

        return $length;
    }
}
