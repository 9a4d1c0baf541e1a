<?php declare(strict_types=1);

namespace PhpFuzz\Arguments;

/**
 * A call php-fuzz generated that PHP refused at the call itself: a TypeError
 * or ArgumentCountError raised because the arguments do not fit the
 * parameters of the callee (or of the constructor an entry names). The
 * arguments came from php-fuzz, so this is a php-fuzz bug (a schema that
 * does not match the code), never a finding in the library under test.
 * The TypeError is the previous exception.
 */
final class CallRejected extends \Error
{
    public function __construct(
        /** the callee as PHP names it: `foo()`, `Foo::bar()`, `Foo::__construct()` */
        public readonly string $callee,
        string $reason,
        ?\Throwable $previous = null,
    ) {
        parent::__construct("php-fuzz built arguments that {$callee} does not accept: {$reason}", 0, $previous);
    }
}
