<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * vendor/bin/php-fuzz: finds the native php-fuzz binary of this package's
 * version and runs it in the launcher's place. Lookup order (docs/install.md):
 * PHP_FUZZ_BINARY, the cache, `php-fuzz` on PATH, a verified download, and
 * a build with cargo.
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Launcher
{
    private string $version;

    /** @param array<string, string> $env */
    public function __construct(private string $packageRoot, private array $env)
    {
        $this->version = Version::ofPackage($packageRoot);
    }

    /** @param list<string> $argv */
    public static function main(array $argv, string $packageRoot): int
    {
        try {
            $launcher = new self($packageRoot, \getenv());

            return self::exec($launcher->binary(), \array_slice($argv, 1));
        } catch (LauncherError $e) {
            \fwrite(\STDERR, 'php-fuzz: ' . $e->getMessage() . "\n");

            return $e->exitCode();
        }
    }

    /** The path of a verified binary of this package's version. */
    public function binary(): string
    {
        $explicit = $this->env['PHP_FUZZ_BINARY'] ?? '';
        if ($explicit !== '') {
            return $this->explicitBinary($explicit);
        }
        try {
            $triple = Platform::current();
        } catch (LauncherError $unsupported) {
            return $this->buildOrFail($unsupported->getMessage(), null);
        }
        $cache = new Cache(Cache::home($this->env), $this->version, $triple);
        if ($cache->hasBinary()) {
            return $cache->binary();
        }
        $onPath = $this->matchingBinaryOnPath();
        if ($onPath !== null) {
            return $onPath;
        }

        return $this->fetchIntoCache($cache, $triple);
    }

    private function explicitBinary(string $path): string
    {
        if (!\is_file($path)) {
            throw new LauncherError("PHP_FUZZ_BINARY is set to $path, but no such file exists; point it at a php-fuzz {$this->version} binary or unset it");
        }
        if (!\is_executable($path)) {
            throw new LauncherError("PHP_FUZZ_BINARY is set to $path, but that file is not executable (chmod +x it)");
        }
        Version::require($path, $this->version, 'PHP_FUZZ_BINARY');

        return $path;
    }

    private function matchingBinaryOnPath(): ?string
    {
        foreach (\explode(\PATH_SEPARATOR, $this->env['PATH'] ?? '') as $dir) {
            $candidate = ($dir === '' ? '.' : $dir) . '/php-fuzz';
            if (\is_file($candidate) && \is_executable($candidate) && Version::isNative($candidate)) {
                if (Version::ofBinary($candidate) === $this->version) {
                    return $candidate;
                }
            }
        }

        return null;
    }

    private function fetchIntoCache(Cache $cache, string $triple): string
    {
        $installer = new Installer($this->packageRoot, $this->version, $triple, $cache, $this->env);
        $cache->lock();
        $restore = self::trapInterrupts($installer);
        try {
            if ($cache->hasBinary()) {
                return $cache->binary();
            }
            try {
                return $installer->download();
            } catch (LauncherError $e) {
                if ($e->exitCode() !== LauncherError::UNAVAILABLE) {
                    throw $e;
                }

                return $this->buildOrFail($e->getMessage(), $installer);
            }
        } finally {
            $restore();
            $cache->unlock();
        }
    }

    private function buildOrFail(string $why, ?Installer $installer): string
    {
        $cargo = $this->cargoOnPath();
        if ($cargo !== null && $installer !== null) {
            return $installer->build($cargo, $why);
        }
        if ($cargo !== null) {
            $hostCache = new Cache(Cache::home($this->env), $this->version, 'host');
            $hostCache->lock();
            try {
                return $hostCache->hasBinary()
                    ? $hostCache->binary()
                    : (new Installer($this->packageRoot, $this->version, 'host', $hostCache, $this->env))->build($cargo, $why);
            } finally {
                $hostCache->unlock();
            }
        }
        $archive = $installer?->archiveName() ?? "php-fuzz-{$this->version}-<platform>.tar.gz";
        throw new LauncherError(
            "cannot get the php-fuzz {$this->version} binary: $why\n"
            . "Any one of these fixes it:\n"
            . "  - set PHP_FUZZ_BINARY to a php-fuzz {$this->version} binary (`cargo install php-fuzz --version {$this->version}` builds one);\n"
            . "  - set PHP_FUZZ_DOWNLOAD_URL to a mirror that serves $archive;\n"
            . "  - install Rust (https://rustup.rs), and vendor/bin/php-fuzz builds php-fuzz from the package's sources once."
        );
    }

    private function cargoOnPath(): ?string
    {
        foreach (\explode(\PATH_SEPARATOR, $this->env['PATH'] ?? '') as $dir) {
            $candidate = ($dir === '' ? '.' : $dir) . '/cargo';
            if (\is_file($candidate) && \is_executable($candidate)) {
                return $candidate;
            }
        }

        return null;
    }

    /** SIGINT and SIGTERM stop a download cleanly; returns what undoes that. */
    private static function trapInterrupts(Installer $installer): \Closure
    {
        if (!\function_exists('pcntl_signal')) {
            return static function (): void {
            };
        }
        \pcntl_async_signals(true);
        foreach ([\SIGINT, \SIGTERM] as $signal) {
            \pcntl_signal($signal, static fn () => $installer->interrupt());
        }

        return static function (): void {
            \pcntl_signal(\SIGINT, \SIG_DFL);
            \pcntl_signal(\SIGTERM, \SIG_DFL);
        };
    }

    /**
     * Runs the binary in the launcher's place: the same process (pcntl_exec)
     * where PHP has it, so arguments, streams, exit code and signals are the
     * binary's own; else a child with SIGINT and SIGTERM forwarded.
     *
     * @param list<string> $args
     */
    private static function exec(string $binary, array $args): int
    {
        if (\function_exists('pcntl_exec')) {
            // PHP's CLI ignores SIGPIPE; an ignored signal would stay ignored across exec.
            \pcntl_signal(\SIGPIPE, \SIG_DFL);
            \pcntl_exec($binary, $args);
            throw new LauncherError("cannot execute $binary: " . \pcntl_strerror(\pcntl_get_last_error()));
        }

        return Child::run([$binary, ...$args], [0 => \STDIN, 1 => \STDOUT, 2 => \STDERR]);
    }
}
