<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * A function or method php-fuzz cannot call with arguments it builds: the
 * message says why (unknown, not public, @internal, a magic method, a
 * parameter of a type php-fuzz cannot build…), for autofuzz and scan to
 * print as is.
 */
final class NotFuzzable extends \RuntimeException
{
}
