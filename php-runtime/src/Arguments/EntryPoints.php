<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

use PHPStan\PhpDocParser\Ast\Type\GenericTypeNode;
use PHPStan\PhpDocParser\Ast\Type\IdentifierTypeNode;
use PHPStan\PhpDocParser\Ast\Type\IntersectionTypeNode;
use PHPStan\PhpDocParser\Ast\Type\NullableTypeNode;
use PHPStan\PhpDocParser\Ast\Type\TypeNode;
use PHPStan\PhpDocParser\Ast\Type\UnionTypeNode;

/**
 * Which functions and methods php-fuzz calls as entry points, and the
 * exceptions they document: the rules autofuzz and scan share.
 */
final class EntryPoints
{
    /** Magic methods php-fuzz never calls directly. */
    private const MAGIC = [
        '__call', '__callstatic', '__get', '__set', '__isset', '__unset', '__sleep', '__wakeup',
        '__serialize', '__unserialize', '__set_state', '__clone', '__debuginfo',
    ];

    /**
     * Why php-fuzz cannot fuzz $function (a method: as a method of its
     * declaring class), or null when it can: the entry-point rules, then
     * whether every required parameter can be built.
     */
    public static function whyNotCallable(\ReflectionFunctionAbstract $function): ?string
    {
        try {
            Signature::ofMethod($function);

            return null;
        } catch (NotFuzzable $e) {
            return $e->getMessage();
        }
    }

    /**
     * The entry-point rules alone: public, not @internal (nor its class), not
     * a magic method other than `__construct`, `__invoke` and `__toString`,
     * not a trait's, not a static abstract method, not the constructor of an
     * abstract class. Null when they pass.
     *
     * @param \ReflectionClass|null $class the class the method is named through (null: its declaring class)
     */
    public static function refusal(\ReflectionFunctionAbstract $function, ?\ReflectionClass $class = null): ?string
    {
        if (!$function instanceof \ReflectionMethod) {
            return DocTypes::isInternal($function->getDocComment()) ? "function {$function->getName()}() is @internal" : null;
        }
        $class ??= $function->getDeclaringClass();
        $name = $class->getName() . '::' . $function->getName() . '()';
        $lower = \strtolower($function->getName());

        return match (true) {
            $lower === '__destruct' => "$name is a destructor: php-fuzz never calls one",
            \in_array($lower, self::MAGIC, true) => "$name is a magic method: php-fuzz calls only __construct, __invoke and __toString",
            !$function->isPublic() => "$name is " . ($function->isPrivate() ? 'private' : 'protected'),
            $class->isTrait() => "{$class->getName()} is a trait: fuzz a method of a class that uses it",
            DocTypes::isInternal($function->getDocComment()) => "$name is @internal",
            self::internalClass($class, $function) !== null => self::internalClass($class, $function) . ' is @internal',
            $function->isStatic() && $function->isAbstract() => "$name is abstract",
            $function->isConstructor() && ($class->isAbstract() || $class->isInterface()) => "{$class->getName()} is abstract: php-fuzz cannot call new {$class->getName()}()",
            $class->isAnonymous() => "$name is a method of an anonymous class",
            default => null,
        };
    }

    /**
     * The classes the `@throws` tags of $function name, and for an instance
     * method or constructor also those of its class's constructor: fully
     * qualified, only those that exist and are \Throwable. A method with no
     * `@throws` of its own inherits those of the method it overrides.
     *
     * @return list<string>
     */
    public static function throws(\ReflectionFunctionAbstract $function): array
    {
        $names = self::throwsOf($function);
        if ($function instanceof \ReflectionMethod && !$function->isStatic()) {
            $constructor = $function->getDeclaringClass()->getConstructor();
            if ($constructor !== null && $constructor->getName() !== $function->getName()) {
                \array_push($names, ...self::throwsOf($constructor));
            }
        }

        return \array_values(\array_unique($names));
    }

    /** @return list<string> */
    private static function throwsOf(\ReflectionFunctionAbstract $function): array
    {
        foreach (ParameterReader::documented($function) as $source) {
            $types = DocTypes::throws($source->getDocComment());
            if ($types !== []) {
                return self::throwableNames($types, NameContext::of($source, []));
            }
        }

        return [];
    }

    /**
     * The \Throwable classes named in `@throws` types (unions spread).
     *
     * @param list<TypeNode> $types
     * @return list<string>
     */
    private static function throwableNames(array $types, NameContext $context): array
    {
        $names = [];
        while ($types !== []) {
            $type = \array_shift($types);
            if ($type instanceof UnionTypeNode || $type instanceof IntersectionTypeNode) {
                \array_push($types, ...$type->types);
            } elseif ($type instanceof GenericTypeNode || $type instanceof NullableTypeNode) {
                $types[] = $type->type;
            } elseif ($type instanceof IdentifierTypeNode) {
                $class = $context->resolve($type->name);
                if ($class !== null && ClassFinder::exists($class) && \is_a($class, \Throwable::class, true)) {
                    $names[] = (new \ReflectionClass($class))->getName();
                }
            }
        }

        return $names;
    }

    /** The @internal class among the method's class and its declaring class, or null. */
    private static function internalClass(\ReflectionClass $class, \ReflectionMethod $method): ?string
    {
        foreach ([$class, $method->getDeclaringClass()] as $candidate) {
            if (DocTypes::isInternal($candidate->getDocComment())) {
                return "class {$candidate->getName()}";
            }
        }

        return null;
    }
}
