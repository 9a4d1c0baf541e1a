<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

use PHPStan\PhpDocParser\Ast\ConstExpr;
use PHPStan\PhpDocParser\Ast\Type;

/**
 * The schema type of a PHPDoc type (phpstan/phpdoc-parser's AST), with
 * PHPStan's meaning: `list<T>`, `int<0, 100>`, shapes, literals, class
 * constants, `class-string<T>`… A type it does not understand (an unknown
 * class, a conditional type…) makes the whole PHPDoc type unknown: the
 * declared type is used instead.
 *
 * @internal php-fuzz's own, not an API
 */
final class DocTypeMapper
{
    /** The most class names a `class-string` stands for. */
    public const MAX_CLASS_NAMES = 100;

    private int $templateDepth = 0;

    private function __construct(private readonly NameContext $context)
    {
    }

    /**
     * The schema type of $node written in $context, or null when php-fuzz
     * does not understand it. A type php-fuzz understands but cannot build
     * (`resource`, `object`) is the `none` kind.
     */
    public static function map(Type\TypeNode $node, NameContext $context): ?array
    {
        try {
            return (new self($context))->type($node);
        } catch (\UnexpectedValueException) {
            return null;
        }
    }

    private static function unknown(): \UnexpectedValueException
    {
        return new \UnexpectedValueException('a PHPDoc type php-fuzz does not understand');
    }

    private function type(Type\TypeNode $node): array
    {
        return match (true) {
            $node instanceof Type\IdentifierTypeNode => $this->identifier($node->name),
            $node instanceof Type\NullableTypeNode => Types::union([$this->type($node->type), Types::null()]),
            $node instanceof Type\UnionTypeNode => Types::union(\array_map(fn (Type\TypeNode $t): array => $this->type($t), $node->types)),
            $node instanceof Type\IntersectionTypeNode => $this->intersection($node->types),
            $node instanceof Type\ArrayTypeNode => Types::list($this->type($node->type)),
            $node instanceof Type\ArrayShapeNode => $this->shape($node),
            $node instanceof Type\GenericTypeNode => $this->generic($node),
            $node instanceof Type\ConstTypeNode => $this->constant($node->constExpr),
            $node instanceof Type\CallableTypeNode => $this->callable($node),
            $node instanceof Type\ThisTypeNode => $this->classType('self'),
            default => throw self::unknown(),
        };
    }

    private function identifier(string $name): array
    {
        $builtin = self::builtin(\strtolower($name));
        if ($builtin !== null) {
            return $builtin;
        }
        if (\strtolower($name) === 'class-string') {
            return $this->classNames(null);
        }
        if (\array_key_exists($name, $this->context->templates)) {
            return $this->template($this->context->templates[$name]);
        }

        return $this->classType($name);
    }

    /** The PHPDoc keywords that are not class names, or null. */
    private static function builtin(string $lower): ?array
    {
        return match ($lower) {
            'int', 'integer' => Types::int(),
            'positive-int' => Types::int(1, null),
            'negative-int' => Types::int(null, -1),
            'non-negative-int' => Types::int(0, null),
            'non-positive-int' => Types::int(null, 0),
            'non-zero-int' => Types::union([Types::int(null, -1), Types::int(1, null)]),
            'float', 'double' => Types::float(),
            'number' => Types::union([Types::int(), Types::float()]),
            'numeric' => Types::union([Types::int(), Types::float(), Types::string(false, true)]),
            'string', 'lowercase-string', 'uppercase-string', 'literal-string' => Types::string(),
            'non-empty-string', 'non-empty-lowercase-string', 'non-empty-uppercase-string', 'non-empty-literal-string',
            'truthy-string', 'non-falsy-string' => Types::string(true),
            'numeric-string' => Types::string(false, true),
            'bool', 'boolean' => Types::bool(),
            'true', 'false' => Literal::type($lower === 'true'),
            'null' => Types::null(),
            'mixed' => Types::mixed(),
            'array', 'associative-array', 'iterable' => Types::anyArray(),
            'non-empty-array' => Types::anyArray(true),
            'list' => Types::list(Types::mixed()),
            'non-empty-list' => Types::list(Types::mixed(), true),
            'scalar' => Types::union([Types::int(), Types::float(), Types::string(), Types::bool()]),
            'array-key' => Types::arrayKey(),
            'callable', 'pure-callable', 'closure', 'pure-closure' => Types::closure(Types::mixed()),
            'callable-string', 'interface-string', 'trait-string', 'enum-string' => Types::none('', Types::string()),
            'callable-array' => Types::none('', Types::anyArray()),
            'resource', 'closed-resource', 'open-resource', 'object', 'callable-object' => Types::none(),
            default => null,
        };
    }

    private function template(?Type\TypeNode $bound): array
    {
        if ($bound === null) {
            return Types::mixed();
        }
        if (++$this->templateDepth > 8) {
            throw self::unknown();
        }
        try {
            return $this->type($bound);
        } finally {
            $this->templateDepth--;
        }
    }

    private function classType(string $name): array
    {
        $class = $this->context->resolve($name);
        if ($class === null || !ClassFinder::exists($class)) {
            throw self::unknown();
        }

        return ClassTypes::of($class, $this->context->roots);
    }

    private function generic(Type\GenericTypeNode $node): array
    {
        $base = \strtolower($node->type->name);
        $arguments = $node->genericTypes;

        return match ($base) {
            'array', 'non-empty-array', 'associative-array', 'iterable' => $this->arrayOf($arguments, $base === 'non-empty-array'),
            'list', 'non-empty-list' => Types::list($this->type(self::single($arguments)), $base === 'non-empty-list'),
            'int' => $this->range($arguments),
            'class-string' => $this->classNames(self::single($arguments)),
            'value-of', 'key-of' => $this->valuesOf($base === 'key-of', self::single($arguments)),
            default => $this->identifier($node->type->name),
        };
    }

    /** @param list<Type\TypeNode> $arguments */
    private static function single(array $arguments): Type\TypeNode
    {
        if (\count($arguments) !== 1) {
            throw self::unknown();
        }

        return $arguments[0];
    }

    /** @param list<Type\TypeNode> $arguments */
    private function arrayOf(array $arguments, bool $nonEmpty): array
    {
        return match (\count($arguments)) {
            1 => Types::array(Types::arrayKey(), $this->type($arguments[0]), $nonEmpty),
            2 => Types::array($this->key($arguments[0]), $this->type($arguments[1]), $nonEmpty),
            default => throw self::unknown(),
        };
    }

    /** An array's key type: ints, strings and their literals (`mixed`: array-key). */
    private function key(Type\TypeNode $node): array
    {
        $type = $this->type($node);
        if ($type['kind'] === 'mixed') {
            return Types::arrayKey();
        }
        foreach (Types::members($type) as $member) {
            $kind = $member['kind'] === 'literal' ? Literal::kind($member['value']) : $member['kind'];
            if ($kind !== 'int' && $kind !== 'string') {
                throw self::unknown();
            }
        }

        return $type;
    }

    /** `int<min, max>` @param list<Type\TypeNode> $arguments */
    private function range(array $arguments): array
    {
        if (\count($arguments) !== 2) {
            throw self::unknown();
        }

        return Types::int(self::bound($arguments[0], 'min'), self::bound($arguments[1], 'max'));
    }

    private static function bound(Type\TypeNode $node, string $unbounded): ?int
    {
        if ($node instanceof Type\IdentifierTypeNode && \strtolower($node->name) === $unbounded) {
            return null;
        }
        if ($node instanceof Type\ConstTypeNode && $node->constExpr instanceof ConstExpr\ConstExprIntegerNode) {
            return self::integer($node->constExpr->value);
        }
        throw self::unknown();
    }

    /** A PHPDoc integer (`-12`, `0x1F`, `0b101`, `0o17`, `017`, `1_000`), which must fit an int. */
    private static function integer(string $text): int
    {
        $text = \str_replace('_', '', $text);
        $digits = \strtolower(\ltrim($text, '-'));
        if ($digits === '0' || !\str_starts_with($digits, '0')) {
            $value = \filter_var($text, \FILTER_VALIDATE_INT);
        } else {
            $value = match (true) {
                \str_starts_with($digits, '0x') => \hexdec(\substr($digits, 2)),
                \str_starts_with($digits, '0b') => \bindec(\substr($digits, 2)),
                \str_starts_with($digits, '0o') => \octdec(\substr($digits, 2)),
                default => \octdec(\substr($digits, 1)),
            };
            $value = \is_int($value) && \str_starts_with($text, '-') ? -$value : $value;
        }
        if (!\is_int($value)) {
            throw self::unknown();
        }

        return $value;
    }

    private function shape(Type\ArrayShapeNode $node): array
    {
        $items = [];
        $next = 0;
        foreach ($node->items as $item) {
            $key = $item->keyName === null ? $next : self::shapeKey($item->keyName);
            if (\is_int($key) && $key >= $next) {
                $next = $key + 1;
            }
            $items[] = ['key' => Literal::of($key), 'optional' => (bool) $item->optional, 'type' => $this->type($item->valueType)];
        }

        return ['kind' => 'shape', 'items' => $items];
    }

    /** A shape's key as PHP stores it (a decimal string is an int). */
    private static function shapeKey(object $key): int|string
    {
        $value = match (true) {
            $key instanceof ConstExpr\ConstExprIntegerNode => self::integer($key->value),
            $key instanceof ConstExpr\ConstExprStringNode, $key instanceof Type\IdentifierTypeNode => $key instanceof Type\IdentifierTypeNode ? $key->name : $key->value,
            default => throw self::unknown(),
        };

        return \is_string($value) && (string) (int) $value === $value ? (int) $value : $value;
    }

    private function constant(ConstExpr\ConstExprNode $expr): array
    {
        return match (true) {
            $expr instanceof ConstExpr\ConstExprIntegerNode => Literal::type(self::integer($expr->value)),
            $expr instanceof ConstExpr\ConstExprFloatNode => Literal::type((float) \str_replace('_', '', $expr->value)),
            $expr instanceof ConstExpr\ConstExprStringNode => Literal::type($expr->value),
            $expr instanceof ConstExpr\ConstExprTrueNode => Literal::type(true),
            $expr instanceof ConstExpr\ConstExprFalseNode => Literal::type(false),
            $expr instanceof ConstExpr\ConstExprNullNode => Types::null(),
            $expr instanceof ConstExpr\ConstFetchNode => $this->fetch($expr),
            default => throw self::unknown(),
        };
    }

    /** `Foo::BAR`, `self::BAR`, `Foo::BAR_*`, `Foo::class`, `PHP_EOL`: the values as literals. */
    private function fetch(ConstExpr\ConstFetchNode $expr): array
    {
        if ($expr->className === '') {
            return $this->globalConstant($expr->name);
        }
        $class = $this->context->resolve($expr->className);
        if ($class === null || !ClassFinder::exists($class)) {
            throw self::unknown();
        }
        $reflection = new \ReflectionClass($class);
        if (\strtolower($expr->name) === 'class') {
            return Literal::type($reflection->getName());
        }
        $types = [];
        foreach ($reflection->getReflectionConstants() as $constant) {
            if (self::matches($expr->name, $constant->getName())) {
                $types[] = Literal::typeOfValue($constant->getValue()) ?? throw self::unknown();
            }
        }
        if ($types === []) {
            throw self::unknown();
        }

        return Types::union($types);
    }

    private function globalConstant(string $name): array
    {
        $names = \str_contains($name, '\\') ? [\ltrim($name, '\\')] : [$this->context->namespace . '\\' . $name, $name];
        foreach ($names as $candidate) {
            if (\defined($candidate)) {
                return Literal::typeOfValue(\constant($candidate)) ?? throw self::unknown();
            }
        }
        throw self::unknown();
    }

    /** Whether constant $name matches $pattern, whose `*` stand for any characters. */
    private static function matches(string $pattern, string $name): bool
    {
        $parts = \explode('*', $pattern);
        if (\count($parts) === 1) {
            return $pattern === $name;
        }
        $last = \array_pop($parts);
        $at = 0;
        foreach ($parts as $i => $part) {
            $found = $i === 0 ? (\str_starts_with($name, $part) ? 0 : false) : \strpos($name, $part, $at);
            if ($found === false) {
                return false;
            }
            $at = $found + \strlen($part);
        }

        return \strlen($name) - \strlen($last) >= $at && \str_ends_with($name, $last);
    }

    private function callable(Type\CallableTypeNode $node): array
    {
        $name = \strtolower(\ltrim($node->identifier->name, '\\'));
        if (!\in_array($name, ['callable', 'closure', 'pure-callable', 'pure-closure'], true)) {
            throw self::unknown();
        }
        $returns = $node->returnType;
        if ($returns instanceof Type\IdentifierTypeNode && \in_array(\strtolower($returns->name), ['void', 'never'], true)) {
            return Types::closure(Types::null());
        }
        try {
            return Types::closure($this->type($returns));
        } catch (\UnexpectedValueException) {
            return Types::closure(Types::mixed());
        }
    }

    /** `non-empty-string&lowercase-string` (one string type) or `A&B` (classes). @param list<Type\TypeNode> $types */
    private function intersection(array $types): array
    {
        $mapped = \array_map(fn (Type\TypeNode $t): array => $this->type($t), $types);
        if (\array_filter($mapped, static fn (array $t): bool => $t['kind'] !== 'string') === []) {
            return Types::string(\in_array(true, \array_column($mapped, 'non_empty'), true), \in_array(true, \array_column($mapped, 'numeric'), true));
        }
        $classes = [];
        foreach ($types as $type) {
            $class = $type instanceof Type\IdentifierTypeNode ? $this->context->resolve($type->name) : null;
            if ($class === null || self::builtin(\strtolower($type->name)) !== null || !ClassFinder::exists($class)) {
                throw self::unknown();
            }
            $classes[] = $class;
        }

        return ClassTypes::intersection($classes, $this->context->roots);
    }

    /** `class-string<T>`: the names of the classes that are a T; bare `class-string`: the package's. */
    private function classNames(?Type\TypeNode $of): array
    {
        if ($of instanceof Type\IdentifierTypeNode && \array_key_exists($of->name, $this->context->templates)) {
            $of = $this->context->templates[$of->name];
        }
        if ($of === null) {
            return self::stringLiterals($this->packageClasses(), 'php-fuzz found no class in the package');
        }
        if ($of instanceof Type\UnionTypeNode) {
            return Types::union(\array_map(fn (Type\TypeNode $t): array => $this->classNames($t), $of->types));
        }
        $class = $of instanceof Type\IdentifierTypeNode ? $this->context->resolve($of->name) : null;
        if ($class === null || !ClassFinder::exists($class)) {
            throw self::unknown();
        }
        $reflection = new \ReflectionClass($class);
        $names = ClassFinder::implementationsOf($reflection->getName(), $this->context->roots);
        if (!$reflection->isAbstract() && !$reflection->isInterface()) {
            \array_unshift($names, $reflection->getName());
        }

        return self::stringLiterals($names, 'php-fuzz found no class that is a ' . $reflection->getName());
    }

    /** @return list<string> the concrete classes and enums declared under the roots */
    private function packageClasses(): array
    {
        $names = [];
        foreach ($this->context->roots as $root) {
            foreach (ClassFinder::declarationsIn($root) as $declaration) {
                if (($declaration['kind'] === 'class' && !$declaration['abstract']) || $declaration['kind'] === 'enum') {
                    $names[$declaration['name']] = true;
                }
            }
        }
        $names = \array_keys($names);
        \sort($names, \SORT_STRING);

        return $names;
    }

    /** @param list<string> $names */
    private static function stringLiterals(array $names, string $why): array
    {
        $types = \array_map(static fn (string $name): array => Literal::type($name), \array_slice($names, 0, self::MAX_CLASS_NAMES));

        return $types === [] ? Types::none($why, Types::string()) : Types::union($types);
    }

    /** `value-of<BackedEnum>`, `value-of<Foo::ARRAY>`, `key-of<Foo::ARRAY>`. */
    private function valuesOf(bool $keys, Type\TypeNode $of): array
    {
        if (!$keys && $of instanceof Type\IdentifierTypeNode) {
            $class = $this->context->resolve($of->name);
            if ($class !== null && \enum_exists($class) && (new \ReflectionEnum($class))->isBacked()) {
                return Types::union(\array_map(
                    static fn (\UnitEnum $case): array => Literal::type($case->value),
                    $class::cases(),
                ));
            }
        }
        $type = $this->type($of);
        if ($type['kind'] !== 'shape' || $type['items'] === []) {
            throw self::unknown();
        }

        return Types::union(\array_map(
            static fn (array $item): array => $keys ? ['kind' => 'literal', 'value' => $item['key']] : $item['type'],
            $type['items'],
        ));
    }
}
