<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

/**
 * Turns the #[FuzzTest] methods of a PHPUnit TestCase into regression tests:
 * every file of `fuzz/<ShortClassName>/<method>/` beside the test file is
 * replayed through its method as a test case of its own, named after the
 * file; an empty or missing folder replays the empty input once.
 * `vendor/bin/php-fuzz fuzz tests/ThisTest.php` fuzzes the methods and
 * writes its findings into those folders (docs/phpunit.md).
 *
 * Works on PHPUnit 9.6 (through the docblock annotation) and on 10 and
 * later (through the attribute).
 */
trait Fuzzing
{
    /**
     * One input of one fuzz method. Not for calling directly.
     *
     * @dataProvider phpFuzzInputs
     */
    #[\PHPUnit\Framework\Attributes\DataProvider('phpFuzzInputs')]
    public function testFuzzInput(string $method, string $inputFile): void
    {
        Replay::run($this, $method, $inputFile);
    }

    /**
     * The data sets of testFuzzInput(): "<method>/<file>" => [method, path].
     *
     * @return array<string, array{string, string}>
     */
    public static function phpFuzzInputs(): array
    {
        return Replay::cases(static::class);
    }
}
