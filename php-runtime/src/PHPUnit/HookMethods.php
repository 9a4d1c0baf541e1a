<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

use PHPUnit\Framework\Assert;
use PHPUnit\Framework\TestCase;

/**
 * The hook methods PHPUnit runs around the tests of a class, found and
 * ordered as the installed PHPUnit finds and orders them (9.6:
 * Util\Test::getHookMethods(); 10 and later: Metadata\Api\HookMethods), so
 * that php-fuzz runs around an input what phpunit runs around a replay.
 *
 * - Each kind starts with TestCase's method: setUpBeforeClass(), setUp(),
 *   assertPreConditions(), assertPostConditions(), tearDown(),
 *   tearDownAfterClass().
 * - A method marked `@before` (docblock) or `#[Before]`
 *   (PHPUnit\Framework\Attributes) joins its kind, and so do `beforeClass`,
 *   `preCondition`, `postCondition`, `after` and `afterClass`; the class
 *   hooks only on static methods. PHPUnit 9.6 reads docblocks only; 10 and
 *   11 read a method's attributes, and its docblock only when it has no
 *   PHPUnit attribute; 12 reads attributes only.
 * - Methods are visited as ReflectionClass::getMethods() lists them (the
 *   class's own, then its parent's); `before*` and `preCondition` put each
 *   one first, the others last. So a parent's @before runs before its
 *   child's, both before setUp(), and tearDown() runs before every @after.
 *   Within a class, @before methods run in reverse order of declaration.
 * - No method is dropped for appearing twice: a setUp() that is also
 *   marked @before runs twice, in phpunit as here.
 * - PHPUnit 11's `#[Before(priority: N)]` sorts a kind, highest first,
 *   keeping that order among equals.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class HookMethods
{
    /** Each kind and the TestCase method it starts with. */
    private const DEFAULTS = [
        'beforeClass' => 'setUpBeforeClass',
        'before' => 'setUp',
        'preCondition' => 'assertPreConditions',
        'postCondition' => 'assertPostConditions',
        'after' => 'tearDown',
        'afterClass' => 'tearDownAfterClass',
    ];

    /** Kinds whose marked methods go first (PHPUnit's array_unshift). */
    private const PREPENDED = ['beforeClass', 'before', 'preCondition'];

    private const ATTRIBUTES = 'PHPUnit\\Framework\\Attributes\\';

    /** @param array<string, list<string>> $methods kind => method names, in the order they run */
    private function __construct(private readonly array $methods)
    {
    }

    /** @param class-string<TestCase> $class */
    public static function of(string $class): self
    {
        $major = self::phpunitMajor();
        $found = [];
        foreach (self::DEFAULTS as $kind => $default) {
            $found[$kind] = [[$default, 0]];
        }
        foreach ((new \ReflectionClass($class))->getMethods() as $method) {
            $declaring = $method->getDeclaringClass()->getName();
            if ($declaring === TestCase::class || $declaring === Assert::class) {
                continue;
            }
            foreach (self::marks($method, $major) as $kind => $priority) {
                if (\str_ends_with($kind, 'Class') && !$method->isStatic()) {
                    continue;
                }
                if (\in_array($kind, self::PREPENDED, true)) {
                    \array_unshift($found[$kind], [$method->getName(), $priority]);
                } else {
                    $found[$kind][] = [$method->getName(), $priority];
                }
            }
        }

        return new self(\array_map(static function (array $entries): array {
            \usort($entries, static fn (array $a, array $b): int => $b[1] <=> $a[1]);

            return \array_column($entries, 0);
        }, $found));
    }

    /** @return list<string> the methods of $kind ('before', 'afterClass', …), in the order they run */
    public function get(string $kind): array
    {
        return $this->methods[$kind];
    }

    /**
     * What calls a list of hook methods on $test as PHPUnit does: from
     * TestCase's scope, in order, the first to throw ending the list.
     *
     * @return \Closure(list<string>): void
     */
    public static function caller(TestCase $test): \Closure
    {
        return \Closure::bind(function (array $methods): void {
            foreach ($methods as $method) {
                $this->{$method}();
            }
        }, $test, TestCase::class);
    }

    /** @return array<string, int> the kinds $method is marked for, with their priorities */
    private static function marks(\ReflectionMethod $method, int $major): array
    {
        $marks = $major >= 10 ? self::attributeMarks($method) : null;
        if ($marks === null && $major <= 11) {
            $marks = self::annotationMarks((string) $method->getDocComment(), $major);
        }

        return $marks ?? [];
    }

    /** @return array<string, int>|null null when the method has no PHPUnit attribute at all */
    private static function attributeMarks(\ReflectionMethod $method): ?array
    {
        $marks = null;
        foreach ($method->getAttributes() as $attribute) {
            $name = $attribute->getName();
            if (!\str_starts_with($name, self::ATTRIBUTES) || !\class_exists($name)) {
                continue;
            }
            $marks ??= [];
            $kind = \lcfirst(\substr($name, \strlen(self::ATTRIBUTES)));
            if (isset(self::DEFAULTS[$kind]) && !isset($marks[$kind])) {
                $arguments = $attribute->getArguments();
                $marks[$kind] = (int) ($arguments['priority'] ?? $arguments[0] ?? 0);
            }
        }

        return $marks;
    }

    /** @return array<string, int> */
    private static function annotationMarks(string $docComment, int $major): array
    {
        // PHPUnit 10's DocBlock::parseDocBlock(); 9.6 matches each name on its own (Util\Annotation\DocBlock).
        \preg_match_all('/@(?P<name>[A-Za-z_-]+)(?:[ \t]+(?P<value>.*?))?[ \t]*\r?$/m', $docComment, $matches);
        $marks = [];
        foreach (\array_keys(self::DEFAULTS) as $kind) {
            $marked = match (true) {
                $major >= 10 => \in_array($kind, $matches['name'], true),
                \str_ends_with($kind, 'Class') => \str_contains($docComment, '@' . $kind),
                default => \preg_match('/@' . $kind . '\b/', $docComment) === 1,
            };
            if ($marked) {
                $marks[$kind] = 0;
            }
        }

        return $marks;
    }

    private static function phpunitMajor(): int
    {
        return \class_exists(\PHPUnit\Runner\Version::class) ? (int) \PHPUnit\Runner\Version::id() : 9;
    }
}
