<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

/**
 * Marks a method of a TestCase that uses {@see Fuzzing} as a fuzz test. The
 * method takes `string $input` or a `\PhpFuzz\FuzzedDataProvider`.
 *
 * The options mirror a target's `$config`: `maxLen` (setMaxLen),
 * `dictionary` (addDictionary; a path relative to the test file),
 * `allowedExceptions` (setAllowedExceptions; a failed assertion is never
 * allowed), and `timeout` in seconds (php-fuzz's --timeout, which wins when
 * given; also the limit of a replay under phpunit, where pcntl is loaded).
 * `setUpOnce: true` runs setUp() and the other before methods once per
 * fuzzing process, and tearDown() and the after methods as it ends, instead
 * of around every input: faster, for a setUp whose object the method does
 * not change (docs/phpunit.md, "Hook methods"). `detectors` chooses the
 * bug detectors (setDetectors; names, 'all' or 'none'; php-fuzz's
 * --detectors wins).
 */
#[\Attribute(\Attribute::TARGET_METHOD)]
final class FuzzTest
{
    /**
     * @param list<class-string<\Throwable>> $allowedExceptions
     * @param list<string>|null $detectors
     */
    public function __construct(
        public readonly ?int $maxLen = null,
        public readonly ?string $dictionary = null,
        public readonly array $allowedExceptions = [\Exception::class],
        public readonly ?float $timeout = null,
        public readonly bool $setUpOnce = false,
        public readonly ?array $detectors = null,
    ) {
        if ($maxLen !== null && $maxLen < 1) {
            throw new \InvalidArgumentException("#[FuzzTest(maxLen: $maxLen)]: maxLen must be positive");
        }
        if ($detectors !== null) {
            (new \PhpFuzzer\Config())->setDetectors($detectors);
        }
        if ($timeout !== null && !($timeout > 0)) {
            throw new \InvalidArgumentException("#[FuzzTest(timeout: $timeout)]: timeout must be a positive number of seconds");
        }
    }
}
