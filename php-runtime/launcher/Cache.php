<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * The binary cache: `$XDG_CACHE_HOME/php-fuzz/<version>/<triple>/php-fuzz`.
 * A binary enters it only by an atomic rename of a verified file, so a
 * half-written file is never executed; concurrent launchers serialize on a
 * lock file beside it.
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Cache
{
    private const STALE_TEMP_SECONDS = 3600;

    private string $versionDir;
    private string $triple;
    /** @var resource|null */
    private $lock = null;

    public function __construct(string $cacheHome, string $version, string $triple)
    {
        $this->versionDir = $cacheHome . '/php-fuzz/' . $version;
        $this->triple = $triple;
    }

    /** `$XDG_CACHE_HOME` if it is an absolute path, else `~/.cache`. */
    public static function home(array $env): string
    {
        $xdg = $env['XDG_CACHE_HOME'] ?? '';
        if ($xdg !== '' && $xdg[0] === '/') {
            return \rtrim($xdg, '/');
        }
        $home = $env['HOME'] ?? '';
        if ($home === '' && \function_exists('posix_getpwuid')) {
            $home = (string) (\posix_getpwuid(\posix_geteuid())['dir'] ?? '');
        }
        if ($home === '') {
            throw new LauncherError('neither XDG_CACHE_HOME nor HOME is set, so there is no cache for the php-fuzz binary; set PHP_FUZZ_BINARY or HOME');
        }

        return \rtrim($home, '/') . '/.cache';
    }

    public function binary(): string
    {
        return $this->versionDir . '/' . $this->triple . '/php-fuzz';
    }

    public function hasBinary(): bool
    {
        $binary = $this->binary();

        return \is_file($binary) && \is_executable($binary);
    }

    /** Takes the cache's lock, telling the user when another launcher holds it. */
    public function lock(): void
    {
        self::makeDir($this->versionDir);
        $lock = \fopen($this->versionDir . '/.lock', 'c');
        if ($lock === false) {
            throw new LauncherError("cannot open the lock file in {$this->versionDir}");
        }
        if (!\flock($lock, \LOCK_EX | \LOCK_NB)) {
            \fwrite(\STDERR, "php-fuzz: waiting for another php-fuzz launcher to finish fetching the binary\n");
            \flock($lock, \LOCK_EX);
        }
        $this->lock = $lock;
        $this->removeStaleTemporaries();
    }

    public function unlock(): void
    {
        if ($this->lock !== null) {
            \flock($this->lock, \LOCK_UN);
            \fclose($this->lock);
            $this->lock = null;
        }
    }

    /** A fresh folder beside the cache, on the same file system, for one download or build. */
    public function temporaryDir(): string
    {
        $dir = $this->versionDir . '/.tmp-' . \getmypid() . '-' . \bin2hex(\random_bytes(4));
        self::makeDir($dir);

        return $dir;
    }

    /** Moves a verified binary into the cache in one atomic rename. */
    public function install(string $verifiedBinary): string
    {
        self::makeDir(\dirname($this->binary()));
        if (!\chmod($verifiedBinary, 0755) || !\rename($verifiedBinary, $this->binary())) {
            throw new LauncherError("cannot move the php-fuzz binary into {$this->binary()}");
        }

        return $this->binary();
    }

    public static function removeTree(string $path): void
    {
        if (\is_link($path) || \is_file($path)) {
            @\unlink($path);

            return;
        }
        foreach (\scandir($path) ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..') {
                self::removeTree($path . '/' . $entry);
            }
        }
        @\rmdir($path);
    }

    /** Folders left by a launcher that was killed; only called while holding the lock. */
    private function removeStaleTemporaries(): void
    {
        foreach (\glob($this->versionDir . '/.tmp-*', \GLOB_ONLYDIR) ?: [] as $dir) {
            if (@\filemtime($dir) < \time() - self::STALE_TEMP_SECONDS) {
                self::removeTree($dir);
            }
        }
    }

    private static function makeDir(string $dir): void
    {
        if (!\is_dir($dir) && !@\mkdir($dir, 0755, true) && !\is_dir($dir)) {
            throw new LauncherError("cannot create the folder $dir");
        }
    }
}
