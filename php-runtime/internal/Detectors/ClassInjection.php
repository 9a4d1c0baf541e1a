<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `class-injection`: a class or function the input named (`PhpFuzzClass`)
 * is loaded or called: `new $x`, `$x::m()`, `new ReflectionClass($x)`,
 * `$x(…)`, `call_user_func($x)`. An allow-list or a subclass check keeps
 * the canary away, so checked code raises no alarm.
 *
 * @internal php-fuzz's harness, not an API
 */
final class ClassInjection
{
    /** @param mixed $class */
    public static function className($class): void
    {
        if (!\is_string($class) || !Detectors::on('class-injection')) {
            return;
        }
        if (self::isCanary($class)) {
            Detectors::report('class-injection', 'the class ' . Detectors::quote($class)
                . ' named by the input would be loaded');
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
            if (self::isCanary($name)) {
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
     * php-fuzz's autoloader, asked for every class PHP cannot find: loading
     * a class the input named (`class_exists($x)`, `new $x` of an unknown
     * class) is the injection, whatever check comes after. It loads nothing.
     */
    public static function autoload(string $class): void
    {
        if (!Detectors::on('class-injection')) {
            return;
        }
        if (self::isCanary($class)) {
            Detectors::report('class-injection', 'the class ' . Detectors::quote($class)
                . ' named by the input would be autoloaded');
        }
        Detectors::guide($class, Detectors::CLASS_NAME);
    }

    private static function isCanary(string $name): bool
    {
        return \strcasecmp(\ltrim($name, '\\'), Detectors::CLASS_NAME) === 0;
    }
}
