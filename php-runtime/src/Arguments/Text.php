<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * The \Stringable php-fuzz builds for a parameter typed `\Stringable` (or a
 * union with it): an object whose __toString() returns a fixed string.
 * Written in an entry as `new PhpFuzz\Arguments\Text("…")`.
 */
final class Text implements \Stringable
{
    public function __construct(
        public readonly string $value,
    ) {
    }

    public function __toString(): string
    {
        return $this->value;
    }
}
