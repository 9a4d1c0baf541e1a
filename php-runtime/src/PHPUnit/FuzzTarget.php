<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

use PHPUnit\Framework\AssertionFailedError;
use PHPUnit\Framework\IncompleteTest;
use PHPUnit\Framework\SkippedTest;

/**
 * php-fuzz's side of a fuzz test: describes a test file's fuzz methods
 * (before a campaign), and configures the harness to run one of them as a
 * target (the generated target file calls configure()).
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class FuzzTarget
{
    /** @return array<string, mixed> what php-fuzz needs to know, JSON-ready */
    public static function describe(string $testFile): array
    {
        $testFile = \realpath($testFile) ?: $testFile;
        $found = Bootstrap::find($testFile);
        Bootstrap::load($found['bootstrap']);
        require_once $testFile;
        $class = self::testClass($testFile);
        $methods = [];
        foreach (FuzzMethod::all($class) as $method) {
            $methods[] = [
                'name' => $method->name,
                'takes' => $method->takes,
                'error' => $method->error,
                'max_len' => $method->options->maxLen,
                'dictionary' => $method->dictionary(),
                'allowed_exceptions' => $method->options->allowedExceptions,
                'timeout' => $method->options->timeout,
                'set_up_once' => $method->options->setUpOnce,
                'folder' => $method->folder(),
            ];
        }

        return [
            'class' => $class,
            'short_name' => (new \ReflectionClass($class))->getShortName(),
            'file' => $testFile,
            'phpunit_config' => $found['config'],
            'bootstrap' => $found['bootstrap'],
            // What phpunit runs the test with: phpunit.xml's <ini>, else php.ini's.
            'error_reporting' => $found['error_reporting'] ?? \error_reporting(),
            'framework_folders' => Bootstrap::frameworkFolders(),
            'methods' => $methods,
        ];
    }

    /**
     * Sets $config up to fuzz $class::$method: the bootstrap, the test file,
     * the method's options, and a target that runs setUp() and tearDown()
     * around every input (or once, with setUpOnce).
     *
     * @param list<string> $frameworkFolders never instrumented
     */
    public static function configure(\PhpFuzzer\Config $config, string $testFile, string $class, string $method, ?string $bootstrap, array $frameworkFolders, int $errorReporting): void
    {
        \error_reporting($errorReporting);
        $config->uninstrumented = $frameworkFolders;
        $config->neverAllowed = [AssertionFailedError::class];
        Bootstrap::load($bootstrap);
        require_once $testFile;
        $fuzz = FuzzMethod::named($class, $method);
        if ($fuzz === null || $fuzz->error !== null) {
            throw new \LogicException($fuzz->error ?? "$class has no #[FuzzTest] method $method");
        }
        if ($fuzz->options->maxLen !== null) {
            $config->setMaxLen($fuzz->options->maxLen);
        }
        if ($fuzz->options->detectors !== null) {
            $config->setDetectors($fuzz->options->detectors);
        }
        if ($fuzz->dictionary() !== null) {
            $config->addDictionary($fuzz->dictionary());
        }
        $config->setAllowedExceptions($fuzz->options->allowedExceptions);
        $config->setTarget(self::target($class, $fuzz));
    }

    private static function target(string $class, FuzzMethod $fuzz): \Closure
    {
        $test = new $class($fuzz->name);
        $class::setUpBeforeClass();
        $setUp = \Closure::bind(function (): void {
            $this->setUp();
        }, $test, $class);
        $tearDown = \Closure::bind(function (): void {
            $this->tearDown();
        }, $test, $class);
        $name = $fuzz->name;
        $call = static function (string $input) use ($test, $fuzz, $name): void {
            try {
                $test->{$name}($fuzz->argument($input));
            } catch (SkippedTest | IncompleteTest $skipped) {
                // markTestSkipped(): this input does not apply.
            }
        };
        if ($fuzz->options->setUpOnce) {
            $setUp();

            return $call;
        }

        return static function (string $input) use ($call, $setUp, $tearDown): void {
            $setUp();
            try {
                $call($input);
            } finally {
                $tearDown();
            }
        };
    }

    private static function testClass(string $testFile): string
    {
        $candidates = [];
        foreach (\get_declared_classes() as $name) {
            $reflection = new \ReflectionClass($name);
            if ($reflection->getFileName() === $testFile && !$reflection->isAbstract()) {
                $candidates[] = $name;
            }
        }
        $fuzzing = \array_values(\array_filter($candidates, static fn (string $c): bool => FuzzMethod::all($c) !== []));
        if ($fuzzing === []) {
            throw new \RuntimeException("$testFile declares no test class with a #[\\PhpFuzz\\PHPUnit\\FuzzTest] method");
        }
        foreach ($fuzzing as $name) {
            if ((new \ReflectionClass($name))->getShortName() === \basename($testFile, '.php')) {
                return $name;
            }
        }

        return $fuzzing[0];
    }
}
