<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;
use PhpFuzz\Paths;

/**
 * `path-traversal`: a path the input controls climbs out of the folder it
 * was built under. The canary is a file name (`php-fuzz-traversal`); the
 * `..` just before it are the input's, and so are the parts before them
 * that the run's input holds; what comes before those is the folder the
 * library built the path under. The report comes when the canary's folder,
 * resolved, lies outside that folder, or when the canary stands at the root
 * of an absolute path (an absolute path put in the place of a relative
 * one). `basename()` or a check of the resolved path keeps it inside, so
 * safe code raises no alarm.
 *
 * Hooked in the `file://` stream wrapper, so every file operation of
 * every file is seen, instrumented or not.
 *
 * @internal php-fuzz's harness, not an API
 */
final class PathTraversal
{
    public static function path(string $path): void
    {
        if (!Detectors::on('path-traversal')) {
            return;
        }
        if (\stripos($path, Detectors::PATH) === false) {
            self::guide($path);
            return;
        }
        if (\strncasecmp($path, 'file://', 7) === 0) {
            $path = \substr($path, 7);
        }
        $escape = self::escape($path, Detectors::$input);
        if ($escape !== null) {
            [, , , $sink] = Detectors::site();
            Detectors::report('path-traversal', ($sink === '' ? 'a file operation' : "$sink()")
                . ' would reach ' . Detectors::quote($path) . ", $escape, from the input");
        }
    }

    /**
     * How the canary in $path escapes the folder the library built it
     * under, or null if it does not; $input is the run's input.
     */
    public static function escape(string $path, string $input = ''): ?string
    {
        $parts = \explode('/', $path);
        foreach ($parts as $k => $part) {
            if (\strncasecmp($part, Detectors::PATH, \strlen(Detectors::PATH)) !== 0) {
                continue;
            }
            if ($k === 1 && $parts[0] === '') {
                return 'an absolute path in place of a relative one';
            }
            $start = $k;
            while ($start > 0 && \in_array($parts[$start - 1], ['..', '.', ''], true)) {
                $start--;
            }
            $climbs = \array_slice($parts, $start, $k - $start);
            if (!\in_array('..', $climbs, true)) {
                continue;
            }
            $start = self::inputBefore($parts, $start, $input);
            $built = \implode('/', \array_slice($parts, 0, $start));
            $folder = Paths::absolute($built === '' && ($path[0] ?? '') === '/' ? '/' : $built);
            $reached = Paths::absolute(\implode('/', \array_slice($parts, 0, $k)) ?: '.');
            if (!Paths::within($reached, $folder)) {
                return "outside $folder, the folder it was built under";
            }
        }
        return null;
    }

    /**
     * Where the parts of a path that the input holds begin, going back from
     * $end: the library built the path under the parts before.
     *
     * @param list<string> $parts
     */
    private static function inputBefore(array $parts, int $end, string $input): int
    {
        $start = $end;
        while ($start > 0 && $parts[$start - 1] !== ''
            && \strpos($input, \implode('/', \array_slice($parts, $start - 1, $end - $start + 1))) !== false) {
            $start--;
        }
        return $start;
    }

    /** Steers the last parts of a path toward the canary. */
    private static function guide(string $path): void
    {
        if (!\PhpFuzz\CmpLog::$enabled) {
            return;
        }
        $parts = \array_slice(\explode('/', $path), -3);
        foreach ($parts as $part) {
            $dot = \strrpos($part, '.');
            $stem = $dot === false || $dot === 0 ? $part : \substr($part, 0, $dot);
            if (\strlen($stem) >= 2) {
                Detectors::guide($stem, '../' . Detectors::PATH);
            }
        }
    }
}
