<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * The schema type of a class name, as a declared type or a PHPDoc type
 * writes it: an enum's cases, a date, a `\Stringable`, a closure, or the
 * concrete classes that are one (an interface or abstract class: its
 * implementations). Whether those classes can be built is ClassTable's to say.
 *
 * @internal php-fuzz's own, not an API
 */
final class ClassTypes
{
    /** The most classes one interface or abstract class stands for (the first ones by name). */
    public const MAX_IMPLEMENTATIONS = 50;

    /** Built-in classes whose constructor is safe to call with any values. */
    private const BUILT_IN_CONSTRUCTORS = ['exception', 'error', 'errorexception'];

    /**
     * @param list<string> $roots more folders to look for implementations in
     */
    public static function of(string $class, array $roots): array
    {
        $class = \ltrim($class, '\\');
        $special = self::special(\strtolower($class));
        if ($special !== null) {
            return $special;
        }
        if (!ClassFinder::exists($class)) {
            return Types::none("class $class does not exist");
        }
        $reflection = new \ReflectionClass($class);
        if ($reflection->isEnum()) {
            return self::enum($reflection->getName());
        }
        if (!$reflection->isInterface() && !$reflection->isAbstract()) {
            return Types::object([$reflection->getName()]);
        }

        return self::implementations($reflection->getName(), $roots);
    }

    /**
     * A value that is all of $classes (`A&B`): the concrete classes of the
     * first that are the others too.
     *
     * @param list<string> $classes
     * @param list<string> $roots
     */
    public static function intersection(array $classes, array $roots): array
    {
        $kept = [];
        foreach (Types::members(self::of($classes[0], $roots)) as $member) {
            if ($member['kind'] === 'object') {
                $all = \array_values(\array_filter($member['classes'], static fn (string $c): bool => self::isAll($c, $classes)));
                $kept[] = $all === [] ? Types::none() : Types::object($all);
            } elseif (self::isAll(self::valueClass($member), $classes)) {
                $kept[] = $member;
            }
        }
        $kept[] = Types::none('php-fuzz found no class that is all of ' . \implode(', ', $classes));

        return Types::union($kept);
    }

    /**
     * The class of the values of a class-valued type (object: its first
     * class), or null for a type of other values.
     */
    public static function valueClass(array $type): ?string
    {
        return match ($type['kind']) {
            'object' => $type['classes'][0] ?? null,
            'enum', 'date' => $type['class'],
            'closure' => \Closure::class,
            'stringable' => \Stringable::class,
            default => null,
        };
    }

    /** Whether php-fuzz builds objects of a built-in class (stdClass, exceptions and errors). */
    public static function buildsBuiltIn(\ReflectionClass $class): bool
    {
        $constructor = $class->getConstructor();

        return $class->getName() === \stdClass::class
            || ($constructor !== null && $class->implementsInterface(\Throwable::class)
                && \in_array(\strtolower($constructor->getDeclaringClass()->getName()), self::BUILT_IN_CONSTRUCTORS, true));
    }

    public static function enum(string $class): array
    {
        $cases = \array_map(static fn (\ReflectionEnumUnitCase $case): string => $case->getName(), (new \ReflectionEnum($class))->getCases());

        return $cases === [] ? Types::none("enum $class has no cases", Types::object([$class])) : ['kind' => 'enum', 'class' => $class, 'cases' => $cases];
    }

    private static function special(string $lower): ?array
    {
        return match ($lower) {
            'closure' => Types::closure(Types::mixed()),
            'datetimeinterface', 'datetimeimmutable' => ['kind' => 'date', 'class' => 'DateTimeImmutable'],
            'datetime' => ['kind' => 'date', 'class' => 'DateTime'],
            'stringable' => ['kind' => 'stringable'],
            'throwable' => Types::object([\Error::class, \Exception::class]),
            default => null,
        };
    }

    /**
     * @param list<string> $classes
     */
    private static function isAll(?string $class, array $classes): bool
    {
        if ($class === null) {
            return false;
        }
        foreach ($classes as $other) {
            if (!\is_a($class, \ltrim($other, '\\'), true)) {
                return false;
            }
        }

        return true;
    }

    /** @param list<string> $roots */
    private static function implementations(string $class, array $roots): array
    {
        $found = \array_slice(ClassFinder::implementationsOf($class, $roots), 0, self::MAX_IMPLEMENTATIONS);
        $members = [];
        foreach ($found as $implementation) {
            $members[] = \enum_exists($implementation) ? self::enum($implementation) : Types::object([$implementation]);
        }

        return $members === [] ? Types::none("php-fuzz found no concrete class implementing $class", Types::object([$class])) : Types::union($members);
    }
}
