<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Calls what php-fuzz fuzzes with the arguments an entry holds, and tells
 * a TypeError PHP raises AT THE CALL (the arguments do not fit the
 * parameters: php-fuzz built them wrong, a CallRejected) from one raised
 * INSIDE the callee (a finding), which it rethrows unchanged.
 *
 * At the call, the error's first trace frame is the callee itself, called
 * from a line of this file, and:
 * - for a user function or method, PHP's message names the call site:
 *   "…, called in Invoker.php on line N" (a parameter's type) or
 *   "…, 1 passed in Invoker.php on line N and exactly 2 expected" (too few);
 * - for an internal function, the error is raised at that very line of this
 *   file and reads "f(): Argument #…" or "f() expects …".
 * A TypeError thrown by the callee's own body (a return type, an operand,
 * `throw new \TypeError`) has the same first frame but neither of these, and
 * one from a function the callee calls has another first frame.
 *
 * The calls run in this file's strict_types mode: a string for an `int`
 * parameter is refused, not converted. Nothing is reflected per call.
 */
final class Invoker
{
    /**
     * Calls a function name, `'Class::method'`, `[ClassName, method]`
     * (static), `[$object, method]` or a closure with the values as
     * positional arguments.
     *
     * @param list<mixed> $arguments (string keys would be named arguments)
     * @throws CallRejected when PHP refuses the arguments at the call
     */
    public static function call(callable|array $callee, array $arguments): mixed
    {
        try {
            return $callee(...$arguments);
        } catch (\TypeError $error) {
            throw self::rejected($error);
        }
    }

    /**
     * `new $class(...$arguments)`. Whatever the constructor throws goes
     * through, but a TypeError at the call is a CallRejected.
     *
     * @param class-string $class
     * @param list<mixed> $arguments
     * @throws CallRejected when PHP refuses the arguments at the call
     */
    public static function construct(string $class, array $arguments): object
    {
        try {
            return new $class(...$arguments);
        } catch (\TypeError $error) {
            throw self::rejected($error);
        }
    }

    /**
     * A call of the function $name with an entry's values.
     *
     * @return \Closure(list<mixed>): mixed
     */
    public static function function(string $name): \Closure
    {
        return static function (array $values) use ($name): mixed {
            try {
                return $name(...$values);
            } catch (\TypeError $error) {
                throw self::rejected($error);
            }
        };
    }

    /**
     * A call of the static method $class::$method with an entry's values.
     *
     * @return \Closure(list<mixed>): mixed
     */
    public static function staticMethod(string $class, string $method): \Closure
    {
        return static function (array $values) use ($class, $method): mixed {
            try {
                return $class::$method(...$values);
            } catch (\TypeError $error) {
                throw self::rejected($error);
            }
        };
    }

    /**
     * A call of the instance method $class::$method: the entry's first value
     * is the object (`$this`), the others are the arguments. A first value
     * that is not a $class is a CallRejected.
     *
     * @return \Closure(list<mixed>): mixed
     */
    public static function method(string $class, string $method): \Closure
    {
        $class = \ltrim($class, '\\');

        return static function (array $values) use ($class, $method): mixed {
            $object = $values[0] ?? null;
            if (!$object instanceof $class) {
                throw new CallRejected(
                    "{$class}::{$method}()",
                    "the object to call it on is " . \get_debug_type($object) . ", not a {$class}",
                );
            }
            $arguments = \array_slice($values, 1);
            try {
                return $object->$method(...$arguments);
            } catch (\TypeError $error) {
                throw self::rejected($error);
            }
        };
    }

    /** $error as a CallRejected when PHP raised it at a call in this file, else $error. */
    private static function rejected(\TypeError $error): \Throwable
    {
        $frame = $error->getTrace()[0] ?? null;
        if ($frame === null || ($frame['file'] ?? null) !== __FILE__ || !isset($frame['line'])) {
            return $error;
        }
        $line = $frame['line'];
        $message = $error->getMessage();
        $site = ' in ' . __FILE__ . ' on line ' . $line;
        $atCall = \str_contains($message, ', called' . $site)
            || \str_contains($message, ' passed' . $site . ' and ')
            || ($error->getFile() === __FILE__ && $error->getLine() === $line
                && (\str_contains($message, '(): Argument #') || \str_contains($message, '() expects ')));
        if (!$atCall) {
            return $error;
        }
        $callee = isset($frame['class']) ? $frame['class'] . '::' . $frame['function'] : $frame['function'];

        return new CallRejected($callee . '()', $message, $error);
    }
}
