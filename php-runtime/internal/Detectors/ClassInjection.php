<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `class-injection`: a class or function the input named (`PhpFuzzClass`)
 * is *used*: instantiated (`new $x`, `ReflectionClass::newInstance*()`),
 * called statically (`$x::m()`) or called (`$x(…)`, `call_user_func($x)`).
 *
 * A lookup is no finding: `class_exists($x)`, `is_subclass_of($x, …)` and
 * the autoload they trigger define the canary class (PhpFuzzClass.php), so
 * the library goes on as it would with any class that exists. The canary
 * extends nothing, implements nothing and carries no marker, so a subclass,
 * interface or marker check keeps it from any use.
 *
 * A name that climbs to the canary (`../PhpFuzzClass`, `x/../PhpFuzzClass`)
 * is a use too: only `new` and `::` hand such a name to the autoloaders
 * (class_exists() and its kin refuse it), and an autoloader that builds a
 * path from it includes a file the library never meant to load.
 *
 * @internal php-fuzz's harness, not an API
 */
final class ClassInjection
{
    /** @var string the file that defines the canary class */
    public static $canaryFile = __DIR__ . '/../PhpFuzzClass.php';

    /** The class of `new $x` and `$x::m()`: a use. @param mixed $class */
    public static function className($class): void
    {
        if (!\is_string($class) || !Detectors::on('class-injection')) {
            return;
        }
        if (self::named($class)) {
            Detectors::report('class-injection', 'the class ' . Detectors::quote($class)
                . ' named by the input would be instantiated or called');
        }
        Detectors::guide($class, Detectors::CLASS_NAME);
    }

    /** @param mixed $callee */
    public static function callee($callee): void
    {
        if (\is_string($callee)) {
            if (!Detectors::on('class-injection')) {
                return;
            }
            $colons = \strpos($callee, '::');
            $name = $colons === false ? $callee : \substr($callee, 0, $colons);
            if (self::named($name)) {
                $what = $colons === false ? 'function' : 'class';
                Detectors::report('class-injection', "the $what " . Detectors::quote($name)
                    . ' named by the input would be called');
            }
            Detectors::guide($name, Detectors::CLASS_NAME);
        } elseif (\is_array($callee) && \is_string($callee[0] ?? null)) {
            self::className($callee[0]);
        }
    }

    /**
     * The class a `ReflectionClass` is made of (a lookup: only steered),
     * and, with $use (`newInstanceWithoutConstructor()`…), an instance made.
     */
    public static function reflected(string $class, string $use = ''): void
    {
        if (!Detectors::on('class-injection')) {
            return;
        }
        if ($use !== '' && self::isCanary($class)) {
            Detectors::report('class-injection', 'the class ' . Detectors::quote($class)
                . " named by the input would be instantiated by ReflectionClass::$use()");
        }
        Detectors::guide($class, Detectors::CLASS_NAME);
    }

    /**
     * The canary class's own methods, for code php-fuzz does not rewrite:
     * its constructor (`new`, `newInstance()`) and static calls.
     */
    public static function canaryUsed(string $how): void
    {
        if (Detectors::on('class-injection')) {
            Detectors::report('class-injection', 'the class ' . Detectors::quote(Detectors::CLASS_NAME)
                . " named by the input would be $how");
        }
    }

    /**
     * php-fuzz's autoloader, asked first for every class PHP cannot find.
     * The canary is defined, so a lookup of it succeeds and reports
     * nothing; a name that climbs to it reaches an autoloader only from
     * `new` or `::` (a use), and is reported. It loads nothing else.
     */
    public static function autoload(string $class): void
    {
        if (!Detectors::on('class-injection')) {
            return;
        }
        if (self::isCanary($class)) {
            require_once self::$canaryFile;
            return;
        }
        if (self::climbs($class)) {
            Detectors::report('class-injection', 'the class ' . Detectors::quote($class)
                . ' named by the input would be autoloaded from outside the library');
        }
        Detectors::guide($class, Detectors::CLASS_NAME);
    }

    /** The canary, or a name that climbs to it. */
    private static function named(string $name): bool
    {
        return self::isCanary($name) || self::climbs($name);
    }

    private static function isCanary(string $name): bool
    {
        return \strcasecmp(\ltrim($name, '\\'), Detectors::CLASS_NAME) === 0;
    }

    /** `../PhpFuzzClass`, `A\..\PhpFuzzClass`, `/PhpFuzzClass`: a path out. */
    private static function climbs(string $name): bool
    {
        $parts = \explode('/', \strtr($name, '\\', '/'));
        if (\count($parts) < 2
            || \strcasecmp((string) \end($parts), Detectors::CLASS_NAME) !== 0) {
            return false;
        }
        return $name[0] === '/' || \in_array('..', $parts, true);
    }
}
