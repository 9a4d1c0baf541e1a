<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * Reads and writes "php-fuzz arguments v1" entries (docs/autofuzz.md): a
 * header line, then one PHP-literal value per line, one line per argument.
 *
 * parse() runs once per fuzzing execution: it is one pass over the string
 * with an index, jumping over runs of plain bytes with strspn/strcspn, and
 * works out a line and column only when it reports an error.
 *
 * Grammar details docs/autofuzz.md leaves open, as decided here:
 * - `null`, `true` and `false` are read in any case, as PHP reads them;
 *   `INF` and `NAN` only in upper case;
 * - an integer has no leading zero (`07` would be octal to PHP) and no `+`;
 *   `-0` is the integer 0; a float's digits may have leading zeros;
 * - `\0` followed by an octal digit is an error (PHP would read an octal
 *   escape), `\x` takes exactly two hex digits, and a raw `$` or newline in
 *   a string stands for itself;
 * - a trailing comma is accepted in arrays, argument lists and closures;
 * - blanks are spaces, tabs and `\r`; inside an open `[` or `(`, between
 *   a class name and its `(`, and between the tokens of `fn(...) => [`,
 *   line breaks and comment lines too (a line whose first non-blank byte
 *   is `#`); a value's line may not end in a comment;
 * - a key that is neither an integer nor a string is an error; an item
 *   without a key takes the largest integer key so far + 1 (0 when there is
 *   none), as PHP 8.3 does, whichever PHP runs this;
 * - a date is `YYYY-MM-DDTHH:MM:SS.` 1-6 digits `+HH:MM` (or `-HH:MM`), and
 *   is rejected when PHP reads it with a warning (2021-02-30);
 * - enum case and class names are as PHP spells them (any case for classes,
 *   a leading `\` or none); `Class::CONSTANT` that is not a case is an error;
 * - closures' lists are read like constructor arguments (no keys);
 * - at most 256 brackets nest.
 *
 * write() prints what docs/autofuzz.md says (`\n`, `\r`, `\t`, other
 * control bytes as `\xHH` in lower case), keys for every item of an array that is not a
 * list, floats as the engine prints them (see float()); a date as
 * `new DateTimeImmutable(…)` or `new DateTime(…)` (a subclass as the class
 * it extends, a named time zone as its offset).
 */
final class Entry
{
    public const HEADER = 'php-fuzz arguments v1';

    /** the ASCII bytes of names; PHP's strspn() tries them in order, so the common first */
    private const NAME_BYTES = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_\\0123456789";
    public const DATE_FORMAT = 'Y-m-d\TH:i:s.uP';
    /** DATE_FORMAT's text: 1 to 6 digits of microseconds, as `u` reads them */
    private const DATE_SHAPE = '/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,6}[+-]\d\d:\d\d\z/';
    public const MAX_DEPTH = 256;

    /** @var array<string, \UnitEnum> enum cases by the text that named them */
    private static array $cases = [];
    /** @var array<string, string> classes that can be built, by the name written, to the name to build */
    private static array $classes = [];

    /** the entry's text */
    private string $s;
    /** the offset of the next byte to read */
    private int $i = 0;

    private function __construct(string $text)
    {
        $this->s = $text;
    }

    /** Whether $data starts with the header line. */
    public static function isEntry(string $data): bool
    {
        if (\strncmp($data, self::HEADER, 21) !== 0) {
            return false;
        }
        $next = $data[21] ?? "\n";

        return $next === "\n" || ($next === "\r" && ($data[22] ?? '') === "\n");
    }

    /**
     * The values of an entry, in order. Objects are built as it reads them:
     * a constructor that throws lets its exception through.
     *
     * @return list<mixed>
     * @throws EntryError when the text does not parse, names an unknown
     *         class or enum case, or holds a bad date
     * @throws CallRejected when PHP refuses a constructor's arguments
     */
    public static function parse(string $text): array
    {
        if (!self::isEntry($text)) {
            throw new EntryError('expected the header line "' . self::HEADER . '"', 1, 1);
        }
        $p = new self($text);
        $s = $text;
        $n = \strlen($s);
        $i = \strpos($s, "\n") ?: $n;
        $values = [];
        while ($i < $n) {
            // $i is on a line break: go to the next line and skip its indent
            $i += 1 + \strspn($s, " \t\r", $i + 1);
            if ($i >= $n) {
                break;
            }
            $c = $s[$i];
            if ($c === "\n") {
                continue;
            }
            if ($c === '#') {
                $i = \strpos($s, "\n", $i);
                if ($i === false) {
                    break;
                }
                continue;
            }
            $p->i = $i;
            $values[] = $p->value(0);
            $i = $p->i + \strspn($s, " \t\r", $p->i);
            if ($i < $n && $s[$i] !== "\n") {
                throw $p->error('expected the end of the line after a value', $i);
            }
        }

        return $values;
    }

    /**
     * One value, $this->i on its first byte; leaves $this->i just past it.
     * $depth counts the open brackets around it.
     */
    private function value(int $depth): mixed
    {
        $s = $this->s;
        $i = $this->i;
        $c = $s[$i] ?? '';
        if ($c === '"') {
            // the common case, a string without escapes, here; the rest in string()
            $run = \strcspn($s, "\"\\", $i + 1);
            if (($s[$i + 1 + $run] ?? '') === '"') {
                $this->i = $i + 2 + $run;

                return \substr($s, $i + 1, $run);
            }

            return $this->string();
        }
        if ($c === '[') {
            return $this->array($depth + 1);
        }
        $digits = \strspn($s, '0123456789', $i);
        if ($digits > 0) {
            // the common case, a short integer, here; the rest in number()
            $c = $s[$i + $digits] ?? '';
            if ($digits < 19 && $c !== '.' && $c !== 'e' && $c !== 'E' && ($digits === 1 || $s[$i] !== '0')) {
                $this->i = $i + $digits;

                return (int) \substr($s, $i, $digits);
            }

            return $this->number();
        }
        if ($c === '-') {
            return $this->number();
        }
        $length = \strspn($s, self::NAME_BYTES, $i);
        if (\ord($s[$i + $length] ?? "\0") >= 0x80) {
            $length = self::nameLength($s, $i);
        }
        if ($length === 0) {
            throw $this->error('expected a value', $i);
        }
        $name = \substr($s, $i, $length);
        $this->i = $i + $length;
        if (($s[$this->i] ?? '') === ':' && ($s[$this->i + 1] ?? '') === ':') {
            return $this->enumCase($name, $i);
        }
        if ($name === 'INF') {
            return \INF;
        }
        if ($name === 'NAN') {
            return \NAN;
        }
        $word = $length <= 5 ? \strtolower($name) : '';
        if ($word === 'new') {
            return $this->object($depth, $i);
        }
        if ($word === 'null') {
            return null;
        }
        if ($word === 'true') {
            return true;
        }
        if ($word === 'false') {
            return false;
        }
        if ($word === 'fn') {
            return $this->closure($depth);
        }
        throw $this->error('expected a value', $i);
    }

    /** A string literal, $this->i on its opening quote. */
    private function string(): string
    {
        $s = $this->s;
        $start = $this->i;
        $i = $start + 1;
        $out = '';
        while (true) {
            $run = \strcspn($s, "\"\\", $i);
            if ($run > 0) {
                $out .= \substr($s, $i, $run);
                $i += $run;
            }
            $c = $s[$i] ?? '';
            if ($c === '"') {
                $this->i = $i + 1;

                return $out;
            }
            // a backslash
            $e = $s[$i + 1] ?? '';
            if ($c === '' || $e === '') {
                throw $this->error('expected a closing " for this string', $start);
            }
            switch ($e) {
                case '\\':
                case '"':
                case '$':
                    $out .= $e;
                    break;
                case 'n':
                    $out .= "\n";
                    break;
                case 'r':
                    $out .= "\r";
                    break;
                case 't':
                    $out .= "\t";
                    break;
                case 'v':
                    $out .= "\v";
                    break;
                case 'e':
                    $out .= "\e";
                    break;
                case 'f':
                    $out .= "\f";
                    break;
                case '0':
                    if (\strspn($s, '01234567', $i + 2, 1) === 1) {
                        throw $this->error('expected \x00, not \0, before an octal digit (PHP would read an octal escape)', $i);
                    }
                    $out .= "\0";
                    break;
                case 'x':
                    if (\strspn($s, '0123456789abcdefABCDEF', $i + 2, 2) !== 2) {
                        throw $this->error('expected two hex digits after \x', $i);
                    }
                    $out .= \chr(\hexdec(\substr($s, $i + 2, 2)));
                    $i += 2;
                    break;
                default:
                    throw $this->error('expected an escape after \ (\\\\ \" \$ \n \r \t \v \e \f \0 \xHH)', $i);
            }
            $i += 2;
        }
    }

    /** An integer or float, $this->i on its `-` or first digit. */
    private function number(): int|float
    {
        $s = $this->s;
        $start = $this->i;
        $i = $start;
        if ($s[$i] === '-') {
            $i++;
            if (($s[$i] ?? '') === 'I' && self::nameLength($s, $i) === 3 && \substr($s, $i, 3) === 'INF') {
                $this->i = $i + 3;

                return -\INF;
            }
        }
        $digits = \strspn($s, '0123456789', $i);
        if ($digits === 0) {
            throw $this->error('expected a digit', $i);
        }
        $first = $i;
        $i += $digits;
        $c = $s[$i] ?? '';
        if ($c !== '.' && $c !== 'e' && $c !== 'E') {
            if ($digits > 1 && $s[$first] === '0') {
                throw $this->error('expected an integer without a leading zero', $start);
            }
            if ($digits >= 19) {
                $limit = $first === $start ? '9223372036854775807' : '9223372036854775808';
                if ($digits > 19 || \strcmp(\substr($s, $first, 19), $limit) > 0) {
                    throw $this->error('expected an integer within 64 bits', $start);
                }
            }
            $this->i = $i;

            return (int) \substr($s, $start, $i - $start);
        }
        if ($c === '.') {
            $fraction = \strspn($s, '0123456789', $i + 1);
            if ($fraction === 0) {
                throw $this->error('expected a digit after "."', $i + 1);
            }
            $i += 1 + $fraction;
            $c = $s[$i] ?? '';
        }
        if ($c === 'e' || $c === 'E') {
            $i++;
            $sign = $s[$i] ?? '';
            if ($sign === '+' || $sign === '-') {
                $i++;
            }
            $exponent = \strspn($s, '0123456789', $i);
            if ($exponent === 0) {
                throw $this->error('expected a digit in the exponent', $i);
            }
            $i += $exponent;
        }
        $this->i = $i;

        return (float) \substr($s, $start, $i - $start);
    }

    /**
     * An array literal, $this->i on its `[`.
     *
     * @return array<mixed>
     */
    private function array(int $depth): array
    {
        if ($depth > self::MAX_DEPTH) {
            throw $this->error('expected at most ' . self::MAX_DEPTH . ' nested brackets', $this->i);
        }
        $s = $this->s;
        $i = $this->i + 1;
        $i += \strspn($s, " \t\r\n", $i);
        if (($s[$i] ?? '') === '#') {
            $i = $this->comments($i);
        }
        $array = [];
        if (($s[$i] ?? '') === ']') {
            $this->i = $i + 1;

            return $array;
        }
        /** @var int|false|null the key of the next item without one: null before any integer key (0), false past PHP_INT_MAX */
        $next = null;
        while (true) {
            $this->i = $itemStart = $i;
            $item = $this->value($depth);
            $i = $this->i + \strspn($s, " \t\r\n", $this->i);
            if (($s[$i] ?? '') === '#') {
                $i = $this->comments($i);
            }
            $c = $s[$i] ?? '';
            if ($c === '=' && ($s[$i + 1] ?? '') === '>') {
                if (\is_string($item)) {
                    $key = (int) $item;
                    if ((string) $key !== $item) {
                        $key = $item;
                    }
                } elseif (\is_int($item)) {
                    $key = $item;
                } else {
                    throw $this->error('expected an integer or a string as the key', $itemStart);
                }
                $i += 2;
                $i += \strspn($s, " \t\r\n", $i);
                if (($s[$i] ?? '') === '#') {
                    $i = $this->comments($i);
                }
                $this->i = $i;
                $array[$key] = $this->value($depth);
                if (\is_int($key) && ($next === null || ($next !== false && $key >= $next))) {
                    $next = $key === \PHP_INT_MAX ? false : $key + 1;
                }
                $i = $this->i + \strspn($s, " \t\r\n", $this->i);
                if (($s[$i] ?? '') === '#') {
                    $i = $this->comments($i);
                }
                $c = $s[$i] ?? '';
            } else {
                $key = $next ?? 0;
                if ($key === false) {
                    throw $this->error('expected a key: the next integer key would be past PHP_INT_MAX', $itemStart);
                }
                $array[$key] = $item;
                $next = $key === \PHP_INT_MAX ? false : $key + 1;
            }
            if ($c === ',') {
                $i++;
                $i += \strspn($s, " \t\r\n", $i);
                if (($s[$i] ?? '') === '#') {
                    $i = $this->comments($i);
                }
                $c = $s[$i] ?? '';
            } elseif ($c !== ']') {
                throw $this->error('expected "," or "]" in an array', $i);
            }
            if ($c === ']') {
                $this->i = $i + 1;

                return $array;
            }
        }
    }

    /**
     * `Class::Case`, $this->i on the `::`.
     */
    private function enumCase(string $name, int $start): \UnitEnum
    {
        $s = $this->s;
        $i = $this->i + 2;
        $length = self::nameLength($s, $i);
        $case = \substr($s, $i, $length);
        $this->i = $i + $length;
        $key = $name . '::' . $case;
        if (isset(self::$cases[$key])) {
            return self::$cases[$key];
        }
        if ($length === 0 || \str_contains($case, '\\') || \strspn($case, '0123456789', 0, 1) === 1) {
            throw $this->error('expected the name of an enum case after "::"', $i);
        }
        $class = self::className($name);
        if ($class === null) {
            throw $this->error("expected an enum name, not \"{$name}\"", $start);
        }
        if (!\enum_exists($class)) {
            throw $this->error("expected an enum: {$class} is not one (or not found)", $start);
        }
        $value = \defined("{$class}::{$case}") ? \constant("{$class}::{$case}") : null;
        if (!$value instanceof $class || !$value instanceof \UnitEnum || $value->name !== $case) {
            throw $this->error("expected a case of enum {$class}: it has no case {$case}", $i);
        }

        return self::$cases[$key] = $value;
    }

    /** `new Class(args)`, $this->i just past `new`; $start on the `n`. */
    private function object(int $depth, int $start): object
    {
        $s = $this->s;
        $i = $this->i;
        $space = \strspn($s, " \t", $i);
        if ($space === 0) {
            throw $this->error('expected a class name after "new "', $i);
        }
        $i += $space;
        $length = self::nameLength($s, $i);
        $name = \substr($s, $i, $length);
        $nameAt = $i;
        $i += $length;
        $i += \strspn($s, " \t\r\n", $i);
        if (($s[$i] ?? '') === '#') {
            $i = $this->comments($i);
        }
        if ($length === 0 || ($s[$i] ?? '') !== '(') {
            throw $this->error($length === 0 ? 'expected a class name after "new "' : 'expected "(" after the class name', $length === 0 ? $nameAt : $i);
        }
        $this->i = $i;
        $arguments = $this->list($depth + 1, ')', 'expected "," or ")" in the arguments');
        $class = self::$classes[$name] ?? null;
        if ($class === null) {
            $class = $this->buildable($name, $nameAt);
            self::$classes[$name] = $class;
        }
        if ($class === \DateTimeImmutable::class || $class === \DateTime::class) {
            if (\count($arguments) !== 1 || !\is_string($arguments[0])) {
                throw $this->error("expected one string for new {$class}(…), in the format " . self::DATE_FORMAT, $start);
            }
            // the shape first: what createFromFormat() lets through varies
            // between PHP versions (8.2 reads "+00:00)"), and it refuses a
            // NUL byte with a ValueError
            $date = \preg_match(self::DATE_SHAPE, $arguments[0]) === 1
                ? $class::createFromFormat(self::DATE_FORMAT, $arguments[0])
                : false;
            $errors = $date === false ? false : $class::getLastErrors(); // false on PHP 8.2+ when clean, an array on 8.1
            if ($date === false || ($errors !== false && ($errors['warning_count'] > 0 || $errors['error_count'] > 0))) {
                throw $this->error('expected a date in the format ' . self::DATE_FORMAT . ', not ' . EntryWriter::quote($arguments[0]), $start);
            }

            return $date;
        }
        if ($class === Text::class) {
            if (\count($arguments) !== 1 || !\is_string($arguments[0])) {
                throw $this->error('expected one string for new ' . Text::class . '(…)', $start);
            }

            return new Text($arguments[0]);
        }

        return Invoker::construct($class, $arguments);
    }

    /** The class $name names, checked it can be built, as `new` spells it; an EntryError if not. */
    private function buildable(string $name, int $at): string
    {
        $class = self::className($name);
        if ($class === null) {
            throw $this->error("expected a class name, not \"{$name}\"", $at);
        }
        switch (\strtolower($class)) {
            case 'datetimeimmutable':
                return \DateTimeImmutable::class;
            case 'datetime':
                return \DateTime::class;
            case 'phpfuzz\arguments\text':
                return Text::class;
        }
        if (!\class_exists($class) && !\interface_exists($class, false)) {
            throw $this->error("expected a class: {$class} is not found", $at);
        }
        $reflection = new \ReflectionClass($class);
        if (!$reflection->isInstantiable()) {
            throw $this->error("expected a class that can be built: {$class} is abstract, an interface, an enum or has a constructor that is not public", $at);
        }

        return $reflection->getName();
    }

    /** `fn(...) => [value, …]`, $this->i just past `fn`. */
    private function closure(int $depth): \Closure
    {
        $s = $this->s;
        $i = $this->i;
        foreach (['(', '...', ')', '=>', '['] as $token) {
            $i += \strspn($s, " \t\r\n", $i);
            if (($s[$i] ?? '') === '#') {
                $i = $this->comments($i);
            }
            if (\substr($s, $i, \strlen($token)) !== $token) {
                throw $this->error("expected \"{$token}\" in \"fn(...) => [value, …]\"", $i);
            }
            $i += \strlen($token);
        }
        $this->i = $i - 1;
        $values = $this->list($depth + 1, ']', 'expected "," or "]" in the values of a closure');

        return self::pick($values);
    }

    /**
     * A comma-separated list of values without keys, $this->i on its
     * opening bracket; leaves $this->i past $close.
     *
     * @return list<mixed>
     */
    private function list(int $depth, string $close, string $expected): array
    {
        if ($depth > self::MAX_DEPTH) {
            throw $this->error('expected at most ' . self::MAX_DEPTH . ' nested brackets', $this->i);
        }
        $s = $this->s;
        $i = $this->i + 1;
        $i += \strspn($s, " \t\r\n", $i);
        if (($s[$i] ?? '') === '#') {
            $i = $this->comments($i);
        }
        $values = [];
        while (($s[$i] ?? '') !== $close) {
            $this->i = $i;
            $values[] = $this->value($depth);
            $i = $this->i + \strspn($s, " \t\r\n", $this->i);
            if (($s[$i] ?? '') === '#') {
                $i = $this->comments($i);
            }
            $c = $s[$i] ?? '';
            if ($c === ',') {
                $i++;
                $i += \strspn($s, " \t\r\n", $i);
                if (($s[$i] ?? '') === '#') {
                    $i = $this->comments($i);
                }
            } elseif ($c !== $close) {
                throw $this->error($expected, $i);
            }
        }
        $this->i = $i + 1;

        return $values;
    }

    /**
     * Past the comment lines from the `#` at $i, and the blanks after them;
     * $i itself if that `#` is not the first non-blank byte of its line.
     */
    private function comments(int $i): int
    {
        $s = $this->s;
        while (($s[$i] ?? '') === '#') {
            $back = $i - 1;
            while ($back >= 0 && ($s[$back] === ' ' || $s[$back] === "\t" || $s[$back] === "\r")) {
                $back--;
            }
            if ($back < 0 || $s[$back] !== "\n") {
                return $i;
            }
            $end = \strpos($s, "\n", $i);
            if ($end === false) {
                return \strlen($s);
            }
            $i = $end + \strspn($s, " \t\r\n", $end);
        }

        return $i;
    }

    /** The length of the name at $i: ASCII letters, digits, `_`, `\` and bytes 0x80-0xff. */
    private static function nameLength(string $s, int $i): int
    {
        $j = $i + \strspn($s, self::NAME_BYTES, $i);
        while (\ord($s[$j] ?? "\0") >= 0x80) {
            $j += 1 + \strspn($s, self::NAME_BYTES, $j + 1);
        }

        return $j - $i;
    }

    /** A name as written, without its leading `\`, or null if it is not a class name. */
    private static function className(string $name): ?string
    {
        if ($name[0] === '\\') {
            $name = \substr($name, 1);
        }
        if ($name === '' || $name[0] === '\\' || \str_ends_with($name, '\\') || \str_contains($name, '\\\\')) {
            return null;
        }
        foreach (\explode('\\', $name) as $segment) {
            if (\strspn($segment, '0123456789', 0, 1) === 1) {
                return null;
            }
        }

        return $name;
    }

    /**
     * The closure `fn(...) => [$values…]`: a pure function of its arguments
     * that returns $values[hash(arguments) mod count], null if there are none.
     *
     * @param list<mixed> $values
     */
    private static function pick(array $values): \Closure
    {
        $count = \count($values);
        if ($count === 0) {
            return static fn (mixed ...$arguments): mixed => null;
        }
        if ($count === 1) {
            $value = $values[0];

            return static fn (mixed ...$arguments): mixed => $value;
        }

        return static fn (mixed ...$arguments): mixed => $values[\crc32(self::render($arguments, 0)) % $count];
    }

    /**
     * A text for $value that is the same in every process and run: what the
     * closures hash. Objects are their class (enum cases their case,
     * closures "closure"); arrays deeper than 16 levels are cut.
     */
    private static function render(mixed $value, int $depth): string
    {
        if (\is_string($value)) {
            return 's' . \strlen($value) . ':' . $value;
        }
        if (\is_int($value)) {
            return 'i' . $value . ';';
        }
        if (\is_array($value)) {
            if ($depth > 16) {
                return 'a…;';
            }
            $text = 'a' . \count($value) . '{';
            foreach ($value as $key => $item) {
                $text .= (\is_int($key) ? 'i' . $key . ';' : 's' . \strlen($key) . ':' . $key) . self::render($item, $depth + 1);
            }

            return $text . '}';
        }
        if (\is_float($value)) {
            return \is_nan($value) ? 'dNAN;' : 'd' . \bin2hex(\pack('E', $value)) . ';';
        }
        if (\is_bool($value)) {
            return $value ? 'b1;' : 'b0;';
        }
        if ($value === null) {
            return 'N;';
        }
        if ($value instanceof \Closure) {
            return 'closure;';
        }
        if ($value instanceof \UnitEnum) {
            return 'e' . $value::class . '::' . $value->name . ';';
        }
        if (\is_object($value)) {
            return 'o' . $value::class . ';';
        }

        return 'r' . \get_resource_type($value) . ';';
    }

    /** An EntryError at byte $offset of the text. */
    private function error(string $expected, int $offset): EntryError
    {
        $before = \substr($this->s, 0, $offset);
        $lineStart = \strrpos($before, "\n");
        $lineStart = $lineStart === false ? 0 : $lineStart + 1;

        return new EntryError($expected, \substr_count($before, "\n") + 1, $offset - $lineStart + 1);
    }

    /**
     * The canonical text of $values: the header, then one line per value
     * (EntryWriter).
     *
     * @param array<mixed> $values in parameter order (keys are ignored)
     * @throws \InvalidArgumentException for a value the format cannot hold
     */
    public static function write(array $values): string
    {
        return EntryWriter::write($values);
    }

    /**
     * The canonical literal of one value, as write() prints it.
     *
     * @throws \InvalidArgumentException for a value the format cannot hold
     */
    public static function literal(mixed $value): string
    {
        return EntryWriter::literal($value);
    }
}
