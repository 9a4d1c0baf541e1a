<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `object-injection`: unserialize() would create an object of a class the
 * input named (`PhpFuzzObject`). The data is first read with every class
 * refused, which creates nothing of any class and runs no magic method;
 * the report comes only if the call's own `allowed_classes` would let the
 * class through (`false`, or a list without it, is safe).
 *
 * @internal php-fuzz's harness, not an API
 */
final class ObjectInjection
{
    /** @var mixed the data of an unserialize() whose options come next */
    public static $data = null;

    /** @param mixed $options */
    public static function unserialize(string $data, $options): void
    {
        if (!Detectors::on('object-injection')) {
            return;
        }
        if (\stripos($data, Detectors::OBJECT) === false) {
            if (\PhpFuzz\CmpLog::$enabled) {
                Detectors::guide($data, 'O:13:"' . Detectors::OBJECT . '":0:{}');
            }
            return;
        }
        if (!self::allows($options)) {
            return;
        }
        \set_error_handler(static function (): bool {
            return true;
        });
        try {
            $probe = \unserialize($data, ['allowed_classes' => false]);
        } catch (\Throwable $e) {
            return;
        } finally {
            \restore_error_handler();
        }
        if (self::holdsCanary($probe, 0)) {
            Detectors::report('object-injection', 'unserialize() would create an object of class '
                . Detectors::OBJECT . ' named by the input, in ' . Detectors::quote($data));
        }
    }

    /** @param mixed $options */
    private static function allows($options): bool
    {
        if (!\is_array($options) || !\array_key_exists('allowed_classes', $options)) {
            return true;
        }
        $allowed = $options['allowed_classes'];
        if (\is_array($allowed)) {
            foreach ($allowed as $class) {
                if (\is_string($class) && \strcasecmp(\ltrim($class, '\\'), Detectors::OBJECT) === 0) {
                    return true;
                }
            }
            return false;
        }
        return $allowed === true;
    }

    /** @param mixed $value */
    private static function holdsCanary($value, int $depth): bool
    {
        if ($depth > 64) {
            return false;
        }
        if ($value instanceof \__PHP_Incomplete_Class) {
            $fields = (array) $value;
            if (\strcasecmp((string) ($fields['__PHP_Incomplete_Class_Name'] ?? ''), Detectors::OBJECT) === 0) {
                return true;
            }
            $value = $fields;
        }
        if (\is_array($value)) {
            foreach ($value as $item) {
                if (self::holdsCanary($item, $depth + 1)) {
                    return true;
                }
            }
        }
        return false;
    }
}
