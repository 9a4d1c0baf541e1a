<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Reads a function's parameters: for each, its type (the PHPDoc type where
 * the declared type accepts every value it allows, else the declared type)
 * and what to do when it cannot be built. A PHPDoc type php-fuzz
 * understands is kept even if it cannot be built (`callable-string`, a
 * class with a private constructor): the declared type would give values
 * the function does not expect.
 *
 * A parameter read here (a "raw" parameter):
 *  - name, optional, variadic: as declared;
 *  - candidates: its schema types, best first (ClassTable prunes them; one
 *    for now);
 *  - fallback: for an optional parameter, the type of its default value
 *    (null: its default cannot be written, the schema stops before it);
 *  - text: the type as written, for messages; function: `X::y()`.
 *
 * @internal php-fuzz's own, not an API
 */
final class ParameterReader
{
    /**
     * @param list<string> $roots more folders to look for implementations in
     * @return list<array{name: string, optional: bool, variadic: bool, candidates: list<array>, fallback: ?array, text: string, function: string}>
     */
    public static function read(\ReflectionFunctionAbstract $function, array $roots): array
    {
        $self = $function instanceof \ReflectionMethod ? $function->getDeclaringClass()->getName() : null;
        $parameters = [];
        foreach ($function->getParameters() as $parameter) {
            $parameters[] = self::parameter($function, $parameter, $self, $roots);
        }

        return $parameters;
    }

    /** `X::y()` or `f()`. */
    public static function label(\ReflectionFunctionAbstract $function): string
    {
        return ($function instanceof \ReflectionMethod ? $function->getDeclaringClass()->getName() . '::' : '') . $function->getName() . '()';
    }

    /** @param list<string> $roots */
    private static function parameter(\ReflectionFunctionAbstract $function, \ReflectionParameter $parameter, ?string $self, array $roots): array
    {
        $declared = self::backingType($function) ?? $parameter->getType();
        [$doc, $docText] = self::docType($function, $parameter, $roots);
        $useDoc = $doc !== null && (DeclaredTypes::isOpen($declared) || DeclaredTypes::accepts($declared, $doc, $self));

        $type = match (true) {
            $useDoc => $doc,
            $declared === null && $docText === '' => self::untyped($parameter),
            default => DeclaredTypes::map($declared, $self, $roots),
        };

        return [
            'name' => $parameter->getName(),
            'optional' => $parameter->isOptional(),
            'variadic' => $parameter->isVariadic(),
            'candidates' => [$type],
            'fallback' => self::fallback($parameter),
            'text' => $useDoc ? $docText : ($declared === null ? 'mixed' : (string) $declared),
            'function' => self::label($function),
        ];
    }

    /**
     * A parameter with no declared type and no PHPDoc promises nothing, and
     * an array or a float where the library reads text is noise a
     * maintainer rejects: it takes the kind of value its default has
     * (`$name = 'default'`: a string, `$options = []`: an array), else a
     * string, what such a parameter of an older library holds most often.
     * A declared `mixed` keeps its meaning: any value.
     */
    private static function untyped(\ReflectionParameter $parameter): array
    {
        $default = $parameter->isDefaultValueAvailable() ? $parameter->getDefaultValue() : null;

        return match (true) {
            \is_int($default) => Types::int(),
            \is_float($default) => Types::float(),
            \is_bool($default) => Types::bool(),
            \is_array($default) => Types::anyArray(),
            default => Types::string(),
        };
    }

    /**
     * A backed enum's from() and tryFrom() take `int|string`, but only its
     * backing type passes under strict_types: that type, for them.
     */
    private static function backingType(\ReflectionFunctionAbstract $function): ?\ReflectionNamedType
    {
        if (!$function instanceof \ReflectionMethod || !\in_array(\strtolower($function->getName()), ['from', 'tryfrom'], true)
            || !$function->getDeclaringClass()->isEnum()) {
            return null;
        }

        return (new \ReflectionEnum($function->getDeclaringClass()->getName()))->getBackingType();
    }

    /**
     * The parameter's PHPDoc type (its own function's, else the nearest
     * overridden method's, else a promoted property's `@var`) and its text;
     * [null, ''] when there is none php-fuzz understands.
     *
     * @param list<string> $roots
     * @return array{?array, string}
     */
    private static function docType(\ReflectionFunctionAbstract $function, \ReflectionParameter $parameter, array $roots): array
    {
        $name = $parameter->getName();
        foreach (self::documented($function) as $source) {
            $node = DocTypes::params($source->getDocComment())[$name] ?? null;
            if ($node !== null) {
                return [DocTypeMapper::map($node, NameContext::of($source, $roots)), (string) $node];
            }
        }
        if ($parameter->isPromoted() && $function instanceof \ReflectionMethod) {
            $property = $function->getDeclaringClass()->getProperty($name);
            $node = DocTypes::var($property->getDocComment());
            if ($node !== null) {
                return [DocTypeMapper::map($node, NameContext::of($function, $roots)), (string) $node];
            }
        }

        return [null, ''];
    }

    /**
     * The function, then for a method the methods it overrides or
     * implements (parents first, then interfaces), whose PHPDoc it inherits.
     *
     * @return list<\ReflectionFunctionAbstract>
     */
    public static function documented(\ReflectionFunctionAbstract $function): array
    {
        if (!$function instanceof \ReflectionMethod) {
            return [$function];
        }
        $sources = [$function];
        $class = $function->getDeclaringClass();
        $ancestors = [];
        for ($parent = $class->getParentClass(); $parent !== false; $parent = $parent->getParentClass()) {
            $ancestors[] = $parent;
        }
        foreach ([...$ancestors, ...\array_values($class->getInterfaces())] as $ancestor) {
            if ($ancestor->hasMethod($function->getName())) {
                $method = $ancestor->getMethod($function->getName());
                if ($method->getDeclaringClass()->getName() === $ancestor->getName()) {
                    $sources[] = $method;
                }
            }
        }

        return $sources;
    }

    /** The type of an optional parameter's default value, or null when it cannot be written. */
    private static function fallback(\ReflectionParameter $parameter): ?array
    {
        if (!$parameter->isOptional() || $parameter->isVariadic() || !$parameter->isDefaultValueAvailable()) {
            return null;
        }
        try {
            return Literal::typeOfValue($parameter->getDefaultValue());
        } catch (\Throwable) {
            return null;
        }
    }
}
