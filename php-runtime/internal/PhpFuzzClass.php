<?php declare(strict_types=1);

/**
 * The class-injection canary, defined when code looks up a class named
 * `PhpFuzzClass` (php-fuzz's autoloader, docs/detectors.md). A lookup of
 * it succeeds, as of any class that exists; making an instance of it or
 * calling it is the finding. It extends nothing, implements nothing and
 * carries no marker, so a subclass, interface or marker check rejects it.
 *
 * @internal php-fuzz's harness, not an API
 */
final class PhpFuzzClass
{
    public function __construct()
    {
        \PhpFuzz\Detectors\ClassInjection::canaryUsed('instantiated');
    }

    /** @param list<mixed> $arguments */
    public static function __callStatic(string $name, array $arguments): void
    {
        \PhpFuzz\Detectors\ClassInjection::canaryUsed("called statically (::$name())");
    }
}
