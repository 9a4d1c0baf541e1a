<?php declare(strict_types=1);

namespace PhpFuzz\PHPUnit;

use PHPUnit\Framework\Assert;
use PHPUnit\Framework\AssertionFailedError;
use PHPUnit\Framework\IncompleteTest;
use PHPUnit\Framework\SkippedTest;
use PHPUnit\Framework\TestCase;

/**
 * phpunit's side of a fuzz test: one test case per input file, each run as
 * php-fuzz runs it. An exception outside allowedExceptions, a failed
 * assertion, or a warning, notice or deprecation under the test's own
 * error_reporting fails the case, with the input's path and the command
 * that replays it in php-fuzz.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class Replay
{
    /** Seconds a replayed input may run when the attribute sets no timeout (needs pcntl). */
    public const DEFAULT_TIMEOUT = 10.0;

    /** @return array<string, array{string, string}> */
    public static function cases(string $class): array
    {
        $cases = [];
        foreach (FuzzMethod::all($class) as $method) {
            $inputs = $method->inputs();
            if ($inputs === [] && $method->takes === 'arguments') {
                $cases[$method->name . ' (no saved entry)'] = [$method->name, ''];
                continue;
            }
            if ($inputs === []) {
                $cases[$method->name . ' (empty input)'] = [$method->name, ''];
            }
            foreach ($inputs as $path) {
                $cases[$method->name . '/' . \basename($path)] = [$method->name, $path];
            }
        }
        if ($cases === []) {
            $cases['(no fuzz method)'] = ['', ''];
        }

        return $cases;
    }

    public static function run(TestCase $test, string $name, string $inputFile): void
    {
        if (\method_exists(\PHPUnit\Util\ExcludeList::class, 'addDirectory')) {
            \PHPUnit\Util\ExcludeList::addDirectory(__DIR__); // keep these frames out of phpunit's failure traces
        }
        $class = \get_class($test);
        $method = $name === '' ? null : FuzzMethod::named($class, $name);
        if ($method === null) {
            Assert::fail("$class uses PhpFuzz\\PHPUnit\\Fuzzing but has no #[FuzzTest] method" . ($name === '' ? '' : " named $name"));
        }
        if ($method->error !== null) {
            Assert::fail($method->error);
        }
        if ($inputFile === '' && $method->takes === 'arguments') {
            $test->addToAssertionCount(1); // a typed method has no empty input; php-fuzz makes its first entries

            return;
        }
        $input = $inputFile === '' ? '' : (string) \file_get_contents($inputFile);
        $testFile = (string) (new \ReflectionClass($class))->getFileName();
        $problem = \str_starts_with(\basename($inputFile), 'security-')
            ? SecurityReplay::problem($testFile . '::' . $name, $inputFile, self::launcher())
            : self::problem($test, $method, $input);
        if ($problem === null) {
            $test->addToAssertionCount(1);

            return;
        }
        $what = $inputFile === '' ? 'the empty input' : self::relative($inputFile);
        $replay = $inputFile === '' ? '' : 'Replay it with: ' . self::launcher() . ' run-single '
            . self::relative($testFile) . '::' . $name . ' ' . self::relative($inputFile);
        Assert::fail("fuzz input $what of {$name}() failed:\n$problem$replay");
    }

    /** What went wrong with $input, or null. Skips and incompletes pass through to phpunit. */
    private static function problem(TestCase $test, FuzzMethod $method, string $input): ?string
    {
        try {
            $arguments = $method->arguments($input);
        } catch (\PhpFuzz\Arguments\EntryError $e) {
            return 'the input is no `php-fuzz arguments v1` entry: ' . $e->getMessage() . "\n";
        }
        [$own, $lowered] = self::testErrorReporting();
        \set_error_handler(static function (int $type, string $message, string $file, int $line) use ($own, $lowered): bool {
            $level = \error_reporting();
            if (($level & ~self::INSUPPRESSIBLE) === 0) {
                return false; // @, or error_reporting(0)
            }
            if (!(($level === $lowered ? $own : $level) & $type)) {
                return false;
            }
            throw new RaisedWarning(self::errorName($type) . ': ' . $message, $file, $line);
        });
        $stopWatch = Watchdog::start($method->options->timeout ?? self::DEFAULT_TIMEOUT);
        try {
            \PhpFuzz\Arguments\Invoker::call([$test, $method->name], $arguments);

            return null;
        } catch (SkippedTest | IncompleteTest $e) {
            throw $e;
        } catch (RaisedWarning | TimedOut $e) {
            return $e->getMessage() . ' in ' . self::relative($e->getFile()) . ':' . $e->getLine() . "\n" . self::trace($e);
        } catch (\Throwable $e) {
            if (!$e instanceof AssertionFailedError && self::allowed($e, $method->options->allowedExceptions)) {
                return null;
            }

            return \get_class($e) . ': ' . $e->getMessage() . ' in ' . self::relative($e->getFile()) . ':' . $e->getLine()
                . "\n" . self::trace($e);
        } finally {
            $stopWatch();
            \restore_error_handler();
        }
    }

    private const INSUPPRESSIBLE = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;

    /**
     * The test's own error_reporting, and the level phpunit lowered it to
     * while a test runs: PHPUnit 10 and later keep the test's level in their
     * error handler and run the test with only the unhandleable levels.
     *
     * @return array{int, int}
     */
    private static function testErrorReporting(): array
    {
        $level = \error_reporting();
        $handler = 'PHPUnit\\Runner\\ErrorHandler';
        if (\class_exists($handler) && \property_exists($handler, 'originalErrorReportingLevel')) {
            $original = (new \ReflectionProperty($handler, 'originalErrorReportingLevel'))->getValue($handler::instance());
            if (\is_int($original)) {
                return [$original, $level];
            }
        }

        return [$level, $level];
    }

    /** @param list<string> $allowed */
    private static function allowed(\Throwable $e, array $allowed): bool
    {
        foreach ($allowed as $class) {
            if ($e instanceof $class) {
                return true;
            }
        }

        return false;
    }

    /** The stack below the fuzz method, in PHP's own format, without php-fuzz's frames. */
    private static function trace(\Throwable $e): string
    {
        $lines = [];
        foreach ($e->getTrace() as $frame) {
            $ours = ($frame['class'] ?? '') === self::class;
            if ($ours && $lines === [] && \str_contains($frame['function'], '{closure')) {
                continue; // the error handler that turned a warning into RaisedWarning
            }
            if ($ours || \count($lines) >= 8) {
                break;
            }
            $call = ($frame['class'] ?? '') . ($frame['type'] ?? '') . $frame['function'] . '()';
            $file = $frame['file'] ?? '';
            $at = $file !== '' && !\str_starts_with($file, __DIR__ . '/') ? self::relative($file) . '(' . ($frame['line'] ?? 0) . '): ' : '';
            $lines[] = '  #' . \count($lines) . " $at$call";
        }

        return $lines === [] ? '' : \implode("\n", $lines) . "\n";
    }

    private static function errorName(int $type): string
    {
        return match ($type) {
            \E_WARNING, \E_USER_WARNING => 'Warning',
            \E_NOTICE, \E_USER_NOTICE => 'Notice',
            \E_DEPRECATED, \E_USER_DEPRECATED => 'Deprecated',
            default => 'Error',
        };
    }

    private static function launcher(): string
    {
        return \is_file('vendor/bin/php-fuzz') ? 'vendor/bin/php-fuzz' : 'php-fuzz';
    }

    public static function relative(string $path): string
    {
        $cwd = \getcwd();

        return $cwd !== false && \str_starts_with($path, $cwd . '/') ? \substr($path, \strlen($cwd) + 1) : $path;
    }
}

/**
 * A warning, notice or deprecation raised by a replayed input.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class RaisedWarning extends \Error
{
    public function __construct(string $message, string $file, int $line)
    {
        parent::__construct($message);
        $this->file = $file;
        $this->line = $line;
    }
}

/**
 * Ends a replayed input that runs past its timeout, where pcntl exists.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class Watchdog
{
    /** Starts the alarm; returns what stops it. */
    public static function start(float $seconds): \Closure
    {
        if (!\function_exists('pcntl_alarm') || !\function_exists('pcntl_signal')) {
            return static function (): void {
            };
        }
        $async = \pcntl_async_signals(true);
        $previous = \pcntl_signal_get_handler(\SIGALRM);
        \pcntl_signal(\SIGALRM, static function () use ($seconds): void {
            throw new \PhpFuzz\PHPUnit\TimedOut(\sprintf('the input ran longer than its timeout of %g s', $seconds));
        });
        \pcntl_alarm(\max(1, (int) \ceil($seconds)));

        return static function () use ($async, $previous): void {
            \pcntl_alarm(0);
            \pcntl_signal(\SIGALRM, $previous);
            \pcntl_async_signals($async);
        };
    }
}

/**
 * A replayed input that ran past its timeout.
 *
 * @internal php-fuzz's PHPUnit integration, not an API
 */
final class TimedOut extends \Error
{
}
