<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Declared types (reflection) as schema types, and the check that keeps a
 * PHPDoc type only where the declared type accepts every value it allows:
 * a value php-fuzz builds never fails the call with a TypeError.
 *
 * @internal php-fuzz's own, not an API
 */
final class DeclaredTypes
{
    /** The declared builtin types that accept each kind of value (int: float too, as strict_types allows). */
    private const ACCEPTING = [
        'int' => ['int', 'float'],
        'float' => ['float'],
        'string' => ['string'],
        'bool' => ['bool'],
        'true' => ['bool', 'true'],
        'false' => ['bool', 'false'],
        'array' => ['array', 'iterable'],
        'list' => ['array', 'iterable'],
        'shape' => ['array', 'iterable'],
    ];

    /**
     * The schema type of a declared type (none: `mixed`).
     *
     * @param string|null $self the class `self` and `static` mean
     * @param list<string> $roots more folders to look for implementations in
     */
    public static function map(?\ReflectionType $type, ?string $self, array $roots): array
    {
        if ($type === null) {
            return Types::mixed();
        }
        if ($type instanceof \ReflectionUnionType) {
            return Types::union(\array_map(static fn (\ReflectionType $t): array => self::map($t, $self, $roots), $type->getTypes()));
        }
        if ($type instanceof \ReflectionIntersectionType) {
            $classes = \array_map(static fn (\ReflectionNamedType $t): string => self::className($t->getName(), $self) ?? '', $type->getTypes());

            return ClassTypes::intersection($classes, $roots);
        }
        \assert($type instanceof \ReflectionNamedType);
        $named = self::named($type->getName(), $self, $roots);
        $name = \strtolower($type->getName());

        return $type->allowsNull() && $name !== 'null' && $name !== 'mixed' ? Types::union([$named, Types::null()]) : $named;
    }

    /** Whether the type has no say: none declared, or `mixed`. */
    public static function isOpen(?\ReflectionType $type): bool
    {
        return $type === null || ($type instanceof \ReflectionNamedType && $type->getName() === 'mixed');
    }

    /**
     * Whether every value of the schema type $type is accepted by the
     * declared type (none declared: all are).
     */
    public static function accepts(?\ReflectionType $declared, array $type, ?string $self): bool
    {
        if ($declared === null) {
            return true;
        }
        if ($type['kind'] === 'none') {
            return isset($type['like']) && self::accepts($declared, $type['like'], $self);
        }
        if ($type['kind'] === 'union') {
            foreach ($type['of'] as $member) {
                if (!self::accepts($declared, $member, $self)) {
                    return false;
                }
            }

            return true;
        }
        if ($type['kind'] === 'object' && \count($type['classes']) > 1) {
            foreach ($type['classes'] as $class) {
                if (!self::accepts($declared, Types::object([$class]), $self)) {
                    return false;
                }
            }

            return true;
        }

        return self::acceptsMember($declared, $type, $self);
    }

    private static function acceptsMember(\ReflectionType $declared, array $type, ?string $self): bool
    {
        if ($declared instanceof \ReflectionUnionType) {
            foreach ($declared->getTypes() as $member) {
                if (self::acceptsMember($member, $type, $self)) {
                    return true;
                }
            }

            return false;
        }
        if ($declared instanceof \ReflectionIntersectionType) {
            foreach ($declared->getTypes() as $member) {
                if (!self::acceptsMember($member, $type, $self)) {
                    return false;
                }
            }

            return true;
        }
        \assert($declared instanceof \ReflectionNamedType);
        if ($type['kind'] === 'null' || ($type['kind'] === 'literal' && $type['value'] === 'null')) {
            return $declared->allowsNull();
        }

        return self::namedAccepts($declared->getName(), $type, $self);
    }

    private static function namedAccepts(string $name, array $type, ?string $self): bool
    {
        $lower = \strtolower($name);
        if ($lower === 'mixed') {
            return true;
        }
        $class = ClassTypes::valueClass($type);
        if ($class !== null) {
            return $lower === 'object' || ($lower === 'callable' && $type['kind'] === 'closure')
                || (($declared = self::className($name, $self)) !== null && \is_a($class, $declared, true));
        }
        $kind = $type['kind'] === 'literal' ? self::literalKind($type['value']) : $type['kind'];

        return \in_array($lower, self::ACCEPTING[$kind] ?? [], true);
    }

    private static function literalKind(string $literal): string
    {
        $kind = Literal::kind($literal);

        return $kind === 'bool' ? $literal : $kind;
    }

    /** A declared class name, `self`/`static`/`parent` resolved; null for a builtin type. */
    private static function className(string $name, ?string $self): ?string
    {
        return match (\strtolower($name)) {
            'self', 'static' => $self,
            'parent' => $self !== null && ($parent = \get_parent_class($self)) !== false ? $parent : null,
            'int', 'float', 'string', 'bool', 'true', 'false', 'null', 'array', 'iterable', 'callable', 'object', 'mixed', 'void', 'never' => null,
            default => $name,
        };
    }

    /** @param list<string> $roots */
    private static function named(string $name, ?string $self, array $roots): array
    {
        $builtin = match (\strtolower($name)) {
            'int' => Types::int(),
            'float' => Types::float(),
            'string' => Types::string(),
            'bool' => Types::bool(),
            'true' => Literal::type(true),
            'false' => Literal::type(false),
            'null' => Types::null(),
            'mixed' => Types::mixed(),
            'array', 'iterable' => Types::anyArray(),
            'callable' => Types::closure(Types::mixed()),
            'object', 'void', 'never' => Types::none(),
            default => null,
        };
        if ($builtin !== null) {
            return $builtin;
        }
        $class = self::className($name, $self);

        return $class === null ? Types::none() : ClassTypes::of($class, $roots);
    }
}
