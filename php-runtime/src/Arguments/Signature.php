<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * The schema (docs/autofuzz.md) of a function or method's parameters: what
 * the engine generates values from and the harness builds them with.
 *
 * For an instance method, parameter 0 is `this`: the object the method is
 * called on, built through its class's constructor (an abstract class or
 * interface: one of its concrete implementations; an enum: one of its
 * cases). A constructor (`X::__construct`) takes no `this`: it is called
 * as `new X(…)`.
 *
 * `classes` is a \stdClass when no class is named, so that json_encode()
 * writes `{}`; else an array by class name.
 */
final class Signature
{
    /**
     * The schema of `Vendor\Pkg\fn` or `Vendor\Pkg\Class::method`.
     *
     * @return array{version: int, callee: string, parameters: list<array>, classes: array<string, array>|\stdClass}
     * @throws NotFuzzable why php-fuzz cannot call it
     */
    public static function of(string $callee): array
    {
        [$function, $class] = self::resolve($callee);

        return self::build($function, $class, true);
    }

    /**
     * The schema of a function or method as of() reads it: the entry-point
     * rules apply, and an instance method takes `this` (of its declaring class).
     *
     * @return array{version: int, callee: string, parameters: list<array>, classes: array<string, array>|\stdClass}
     * @throws NotFuzzable
     */
    public static function ofMethod(\ReflectionFunctionAbstract $function): array
    {
        $class = $function instanceof \ReflectionMethod ? $function->getDeclaringClass() : null;

        return self::build($function, $class, true);
    }

    /**
     * The schema of a PHPUnit #[FuzzTest] method's parameters: no `this`
     * (the test runner makes the test object), and no entry-point rule
     * (a test class may well be @internal); only the parameters must be buildable.
     *
     * @return array{version: int, callee: string, parameters: list<array>, classes: array<string, array>|\stdClass}
     * @throws NotFuzzable
     */
    public static function ofTestMethod(\ReflectionMethod $method): array
    {
        return self::build($method, $method->getDeclaringClass(), false);
    }

    /** The schema as JSON, as the engine reads it. */
    public static function json(array $schema): string
    {
        return \json_encode($schema, \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_THROW_ON_ERROR);
    }

    /**
     * The function or method `$callee` names, and for a method the class it
     * was named through.
     *
     * @return array{\ReflectionFunctionAbstract, ?\ReflectionClass}
     * @throws NotFuzzable
     */
    public static function resolve(string $callee): array
    {
        $callee = \ltrim(\trim($callee), '\\');
        if (!\str_contains($callee, '::')) {
            if ($callee === '' || !\function_exists($callee)) {
                throw new NotFuzzable("unknown function $callee (expected 'Vendor\\Package\\function' or 'Vendor\\Package\\Class::method')");
            }

            return [new \ReflectionFunction($callee), null];
        }
        [$className, $methodName] = \explode('::', $callee, 2);
        if (!ClassFinder::exists($className) && !\trait_exists($className)) {
            throw new NotFuzzable("unknown class $className (the autoloader cannot find it)");
        }
        $class = new \ReflectionClass($className);
        if (!$class->hasMethod(\rtrim($methodName, '()'))) {
            throw new NotFuzzable("unknown method {$class->getName()}::$methodName()");
        }

        return [$class->getMethod(\rtrim($methodName, '()')), $class];
    }

    /**
     * @return array{version: int, callee: string, parameters: list<array>, classes: array<string, array>|\stdClass}
     * @throws NotFuzzable
     */
    private static function build(\ReflectionFunctionAbstract $function, ?\ReflectionClass $class, bool $entryPoint): array
    {
        if ($entryPoint) {
            $refusal = EntryPoints::refusal($function, $class);
            if ($refusal !== null) {
                throw new NotFuzzable($refusal);
            }
        }
        $roots = self::roots($function, $class);
        $raw = ParameterReader::read($function, $roots);
        $receiver = $entryPoint && $class !== null && self::takesThis($function) ? self::receiver($class, $roots) : null;
        $table = new ClassTable();
        $table->reach(\array_merge($receiver['candidates'] ?? [], ...\array_column($raw, 'candidates')));
        $receiverParameter = $receiver !== null ? [self::thisParameter($table, $receiver, $function, $class)] : [];
        $parameters = [...$receiverParameter, ...$table->parameters($raw)];
        $classes = $table->classes(\array_column($parameters, 'type'));

        return [
            'version' => 1,
            'callee' => $class !== null ? $class->getName() . '::' . $function->getName() : $function->getName(),
            'parameters' => $parameters,
            'classes' => $classes === [] ? new \stdClass() : $classes,
        ];
    }

    /**
     * The `this` parameter of the schema.
     *
     * @throws NotFuzzable its class cannot be built
     */
    private static function thisParameter(ClassTable $table, array $receiver, \ReflectionFunctionAbstract $function, \ReflectionClass $class): array
    {
        $type = $table->choose($receiver);
        if ($type === null || Types::isNone($type)) {
            throw new NotFuzzable(self::receiverRefusal($table, $receiver, $function, $class));
        }

        return ['name' => 'this', 'type' => $type, 'optional' => false, 'variadic' => false];
    }

    private static function takesThis(\ReflectionFunctionAbstract $function): bool
    {
        return $function instanceof \ReflectionMethod && !$function->isStatic() && !$function->isConstructor();
    }

    /**
     * The raw `this` parameter (as ParameterReader reads one): any object of the class.
     *
     * @param list<string> $roots
     */
    private static function receiver(\ReflectionClass $class, array $roots): array
    {
        return [
            'name' => 'this',
            'optional' => false,
            'variadic' => false,
            'candidates' => [ClassTypes::of($class->getName(), $roots)],
            'fallback' => null,
            'text' => $class->getName(),
            'function' => $class->getName(),
        ];
    }

    private static function receiverRefusal(ClassTable $table, array $receiver, \ReflectionFunctionAbstract $function, \ReflectionClass $class): string
    {
        $name = $class->getName() . '::' . $function->getName() . '()';
        $type = $receiver['candidates'][0];
        if (($class->isAbstract() || $class->isInterface()) && Types::isNone($type)) {
            return $function->isAbstract()
                ? "$name is abstract and php-fuzz found no concrete class implementing {$class->getName()}"
                : "$name needs an instance of {$class->getName()}, which is abstract, and php-fuzz found no concrete class extending it";
        }

        return "$name needs an instance of {$class->getName()}, which php-fuzz cannot build" . $table->whyNot($type);
    }

    /**
     * The folders to look for implementations in: the callee's namespace root.
     *
     * @return list<string>
     */
    private static function roots(\ReflectionFunctionAbstract $function, ?\ReflectionClass $class): array
    {
        $file = $class?->getFileName() ?? $function->getFileName();
        $name = $class?->getName() ?? $function->getName();

        return $file !== false && $file !== null ? [ClassFinder::rootOf($name, $file)] : [];
    }
}
