<?php declare(strict_types=1);

use PhpFuzz\PHPUnit\FuzzTest;
use PhpFuzz\PHPUnit\Fuzzing;
use PHPUnit\Framework\TestCase;

/**
 * Fuzz test for {{package}}, written by `php-fuzz init`.
 *
 *   vendor/bin/phpunit                               replays every input in
 *                                                    {{folder}}/
 *   vendor/bin/php-fuzz fuzz {{file}}   fuzzes; what it finds lands in that
 *                                                    folder, so phpunit fails
 *                                                    on it until the bug is fixed
 *
 * Put a few real inputs into that folder as seeds. Namespaces of this
 * project (composer.json): {{namespaces}}.
 */
final class {{class}} extends TestCase
{
    use Fuzzing;

    // setUp() and tearDown() run around every input, in phpunit and in php-fuzz.

    // allowedExceptions: exceptions your code throws on bad input on purpose are
    // not bugs; list them (the default is [\Exception::class]). A failed
    // assertion is always a bug.
    #[FuzzTest(maxLen: 4096, allowedExceptions: [\Exception::class])]
    public function {{method}}(string $input): void
    {
{{call}}
    }
}
