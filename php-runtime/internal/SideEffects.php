<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * What a fuzzed library may do to the machine (docs/detectors.md, "Side
 * effects"): by default no process, no network connection, and no file
 * written, renamed or deleted outside the campaign's scratch folder and the
 * folders the target allows (`$config->allowWrites()`). A refused call
 * returns what the real one returns when it fails, and the refusal is
 * reported once per place as a `side-effect` finding.
 *
 * @internal php-fuzz's harness, not an API
 */
final class SideEffects
{
    /** @var bool false with --allow-side-effects */
    public static $refuse = true;
    /** @var bool a run is under way: loading the target and the time between runs are free */
    public static $active = false;
    /** @var list<string> folders a run may write in, each ending in '/' */
    public static $writable = [];
    /** @var array<string, true> places already reported, by class and file:line */
    private static $reported = [];
    /** @var bool a refusal just made PHP warn that a wrapper "call failed" */
    public static $quietFailure = false;
    /** @var bool|null the operating system's wall is up (docs/sandbox.md); null until asked */
    private static $walled = null;

    /** What PHP says when the wall stopped a call: EACCES, EPERM, EROFS, no network. */
    private const WALL_ERRORS = '/Permission denied|Operation not permitted|Read-only file system|Network is unreachable'
        . '|Address family not supported|getaddrinfo[^:]*failed|name resolution/';

    /**
     * Whether PHP's warning $message is the failure of a refused side
     * effect, to be swallowed: a hook's refusal, reported already, or the
     * wall's, reported here as a `side-effect` finding at the call.
     */
    public static function failedQuietly(string $message): bool
    {
        if (self::$quietFailure && \strpos($message, '" call failed') !== false) {
            self::$quietFailure = false;
            return true;
        }
        self::$walled = self::$walled ?? \getenv('PHP_FUZZ_WALL') === '1';
        if (!self::$walled || !self::$refuse || !self::$active || \preg_match(self::WALL_ERRORS, $message) !== 1) {
            return false;
        }
        // A path the run may write in failed for its own reasons.
        if (\preg_match('/^[\\w:]+\\(([^)]+)\\): /', $message, $m) === 1 && \strpos($m[1], '/') !== false && self::mayWrite($m[1])) {
            return false;
        }
        $network = \preg_match('/[Nn]etwork|socket|getaddrinfo|resolution|connect/', $message) === 1;
        self::refuse($network ? 'network' : 'file-write', "$message: the sandbox stopped it");
        return true;
    }

    /** @param list<string> $folders */
    public static function allowWritesIn(array $folders): void
    {
        self::$writable = [];
        foreach ($folders as $folder) {
            $real = IncludeInterceptor::bypassed(static function () use ($folder) {
                return \realpath($folder);
            });
            if ($real !== false) {
                self::$writable[] = \rtrim($real, '/') . '/';
            }
        }
    }

    /** Whether a run may write, rename or delete $path. */
    public static function mayWrite(string $path): bool
    {
        if (!self::$refuse || !self::$active) {
            return true;
        }
        if (\strncasecmp($path, 'file://', 7) === 0) {
            $path = \substr($path, 7);
        }
        if ($path === '/dev/null') {
            return true;
        }
        $absolute = Paths::absolute($path);
        $real = self::realFolderOf($absolute);
        foreach (self::$writable as $folder) {
            if (\strncmp($real . '/', $folder, \strlen($folder)) === 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * The path with its deepest existing folder resolved (symbolic links
     * followed), so a link inside an allowed folder cannot lead out of it.
     */
    private static function realFolderOf(string $absolute): string
    {
        $rest = '';
        $folder = $absolute;
        while ($folder !== '/' && $folder !== '') {
            $real = IncludeInterceptor::bypassed(static function () use ($folder) {
                return \realpath($folder);
            });
            if ($real !== false) {
                return \rtrim($real, '/') . $rest;
            }
            $rest = '/' . \basename($folder) . $rest;
            $folder = \dirname($folder);
        }
        return $absolute;
    }

    /**
     * Refuses a side effect of $class (`process`, `network`, `file-write`):
     * reported once per place. The caller then fails as the real call fails.
     */
    public static function refuse(string $class, string $message): void
    {
        [$file, $line, $calls] = Detectors::site();
        $key = "$class $file:$line";
        if (isset(self::$reported[$key]) || Detectors::$reporter === null) {
            return;
        }
        $message .= ': php-fuzz refused it (--allow-side-effects allows it)';
        if ((Detectors::$reporter)(Wire::SIDE_EFFECT, $class, $message, $file, $line, $calls)) {
            self::$reported[$key] = true;
        }
    }

    /** Refuses a process unless side effects are allowed; true if refused. */
    public static function refuseProcess(string $sink, string $command): bool
    {
        if (!self::$refuse || !self::$active) {
            return false;
        }
        self::refuse('process', "$sink() tried to run " . Detectors::quote($command));
        return true;
    }

    /** Refuses a connection unless side effects are allowed; true if refused. */
    public static function refuseConnection(string $sink, string $address): bool
    {
        if (!self::$refuse || !self::$active) {
            return false;
        }
        self::refuse('network', "$sink() tried to connect to " . Detectors::quote($address));
        return true;
    }

    /** Refuses a write to $path outside the allowed folders; true if refused. */
    public static function refuseWrite(string $what, string $path): bool
    {
        if (self::mayWrite($path)) {
            return false;
        }
        [, , , $sink] = Detectors::site();
        $sink = $sink === '' ? $what : "$sink()";
        self::refuse('file-write', "$sink tried to $what " . Detectors::quote($path) . ' outside the scratch folder');
        return true;
    }
}

/**
 * Paths as the file system would resolve them, without touching it.
 *
 * @internal php-fuzz's harness, not an API
 */
final class Paths
{
    /** $path made absolute against the working directory, `.` and `..` resolved. */
    public static function absolute(string $path): string
    {
        if ($path === '' || $path[0] !== '/') {
            $path = (string) \getcwd() . '/' . $path;
        }
        return self::normalize($path);
    }

    /** `.`, `..` and repeated slashes resolved in an absolute path. */
    public static function normalize(string $path): string
    {
        $parts = [];
        foreach (\explode('/', $path) as $part) {
            if ($part === '' || $part === '.') {
                continue;
            }
            if ($part === '..') {
                \array_pop($parts);
                continue;
            }
            $parts[] = $part;
        }
        return '/' . \implode('/', $parts);
    }

    /** Whether $path is $folder or inside it (both normalized). */
    public static function within(string $path, string $folder): bool
    {
        return $path === $folder || $folder === '/'
            || \strncmp($path, $folder . '/', \strlen($folder) + 1) === 0;
    }
}
