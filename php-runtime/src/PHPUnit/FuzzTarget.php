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
                'seeds' => $method->error === null ? $method->seeds() : [],
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
     * the method's options, and a target that runs the test's hook methods
     * (setUp(), @before, tearDown(), @after, …) around every input (or once,
     * with setUpOnce).
     *
     * @param list<string> $frameworkFolders never instrumented
     */
    public static function configure(\PhpFuzzer\Config $config, string $testFile, string $class, string $method, ?string $bootstrap, array $frameworkFolders, int $errorReporting): void
    {
        \error_reporting($errorReporting);
        $config->uninstrumented = $frameworkFolders;
        $config->neverAllowed = [AssertionFailedError::class];
        \PhpFuzz\Arguments\Autofuzz::preload();
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
        if ($fuzz->takes === 'arguments') {
            \PhpFuzz\Arguments\Autofuzz::describe($config, $fuzz->schema());
        }
        $config->setTarget(self::target($class, $fuzz));
    }

    /**
     * The hook methods run as phpunit runs them (HookMethods): the class's
     * now, once per process; the test's around every input, or once with
     * setUpOnce; the last ones when this process ends (untilExit()).
     */
    private static function target(string $class, FuzzMethod $fuzz): \Closure
    {
        $hooks = HookMethods::of($class);
        $test = new $class($fuzz->name);
        $call = HookMethods::caller($test);
        $call($hooks->get('beforeClass'));
        [$pre, $post, $name] = [$hooks->get('preCondition'), $hooks->get('postCondition'), $fuzz->name];
        $body = static function (string $input) use ($test, $fuzz, $name, $call, $pre, $post): void {
            $call($pre);
            try {
                $arguments = $fuzz->arguments($input);
            } catch (\PhpFuzz\Arguments\EntryError) {
                return; // only a byte-level replacement makes one; the engine checks what it sends
            }
            \PhpFuzz\Arguments\Invoker::call([$test, $name], $arguments);
            $call($post);
        };
        if (!$fuzz->options->setUpOnce) {
            [$before, $after] = [$hooks->get('before'), $hooks->get('after')];

            return self::untilExit(
                static fn (string $input) => self::runTest($input, $body, $call, $before, $after),
                $call,
                [$hooks->get('afterClass')],
            );
        }
        $target = self::untilExit(
            static fn (string $input) => self::runTest($input, $body, $call, [], []),
            $call,
            [$hooks->get('after'), $hooks->get('afterClass')],
        );
        $call($hooks->get('before'));

        return $target;
    }

    /**
     * One input as PHPUnit's TestCase::runBare() runs one test: the after
     * hooks run whatever happened before, and the first exception wins. A
     * skip (markTestSkipped()) means this input does not apply.
     *
     * @param \Closure(list<string>): void $call
     * @param list<string> $before
     * @param list<string> $after
     */
    private static function runTest(string $input, \Closure $body, \Closure $call, array $before, array $after): void
    {
        $thrown = null;
        try {
            $call($before);
            $body($input);
        } catch (SkippedTest | IncompleteTest) {
        } catch (\Throwable $e) {
            $thrown = $e;
        }
        try {
            $call($after);
        } catch (\Throwable $e) {
            $thrown ??= $e;
        }
        if ($thrown !== null) {
            throw $thrown;
        }
    }

    /**
     * $target, with each list of $last called when this process ends
     * normally: not in the middle of an input (a fatal error, exit()), and
     * not in a child forked after loading (the fork server's), which
     * inherits what the class hooks set up but must not tear it down.
     *
     * @param \Closure(list<string>): void $call
     * @param list<list<string>> $last
     */
    private static function untilExit(\Closure $target, \Closure $call, array $last): \Closure
    {
        $pid = \getmypid();
        $running = false;
        \register_shutdown_function(static function () use ($pid, &$running, $call, $last): void {
            if ($running || \getmypid() !== $pid) {
                return;
            }
            foreach ($last as $methods) {
                try {
                    $call($methods);
                } catch (\Throwable $e) {
                    \fwrite(\STDERR, 'php-fuzz: a hook method of the fuzz test failed as the process ended: '
                        . \get_class($e) . ': ' . $e->getMessage() . "\n");
                }
            }
        });

        return static function (string $input) use ($target, &$running): void {
            $running = true;
            try {
                $target($input);
            } finally {
                $running = false;
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
