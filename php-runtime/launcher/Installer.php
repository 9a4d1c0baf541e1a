<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * Puts the native binary into the cache: by downloading the release archive
 * and checking it against the digest this package ships, or, when no
 * download is possible and cargo is on PATH, by building the package's own
 * sources.
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Installer
{
    public const DEFAULT_DOWNLOAD_URL = 'https://github.com/php-fuzz/php-fuzz/releases/download/v{version}';

    private bool $interrupted = false;

    public function __construct(
        private string $packageRoot,
        private string $version,
        private string $triple,
        private Cache $cache,
        private array $env,
    ) {
    }

    public function archiveName(): string
    {
        return "php-fuzz-{$this->version}-{$this->triple}.tar.gz";
    }

    public function archiveUrl(): string
    {
        $base = $this->env['PHP_FUZZ_DOWNLOAD_URL'] ?? '';
        $base = $base !== '' ? $base : self::DEFAULT_DOWNLOAD_URL;

        return \rtrim(\str_replace('{version}', $this->version, $base), '/') . '/' . $this->archiveName();
    }

    /** The SHA-256 this package ships for the archive, or null. */
    public function expectedDigest(): ?string
    {
        $file = $this->packageRoot . '/php-runtime/launcher/SHA256SUMS';
        foreach (\file($file, \FILE_IGNORE_NEW_LINES | \FILE_SKIP_EMPTY_LINES) ?: [] as $line) {
            if (\preg_match('/^([0-9a-f]{64}) [ *](\S+)$/', \trim($line), $m) && $m[2] === $this->archiveName()) {
                return $m[1];
            }
        }

        return null;
    }

    public function download(): string
    {
        $expected = $this->expectedDigest();
        if ($expected === null) {
            throw new LauncherError(
                "this copy of the package ships no digest for {$this->archiveName()} "
                . '(a development checkout, or a version released without prebuilt binaries)'
            );
        }
        $url = $this->archiveUrl();
        $temporary = $this->cache->temporaryDir();
        try {
            $archive = $temporary . '/' . $this->archiveName();
            $download = new Download(\STDERR, "php-fuzz {$this->version} for {$this->triple}");
            $actual = $download->fetch($url, $archive, fn (): bool => $this->interrupted);
            if (!\hash_equals($expected, $actual)) {
                throw new LauncherError(
                    "the archive from $url is not the one this package was released with, so it was not used:\n"
                    . "  expected SHA-256 $expected (shipped in php-runtime/launcher/SHA256SUMS)\n"
                    . "  actual   SHA-256 $actual\n"
                    . 'Nothing was kept. A mirror, proxy or broken transfer altered the file; '
                    . 'check PHP_FUZZ_DOWNLOAD_URL and run again.',
                    LauncherError::DIGEST_MISMATCH
                );
            }

            return $this->cache->install($this->unpack($archive, $temporary));
        } finally {
            Cache::removeTree($temporary);
        }
    }

    /** Builds the package's own sources with cargo, showing its progress on stderr. */
    public function build(string $cargo, string $why): string
    {
        $temporary = $this->cache->temporaryDir();
        $targetDir = \dirname($temporary) . '/cargo-target';
        \fwrite(\STDERR, "php-fuzz: $why\nphp-fuzz: building php-fuzz {$this->version} from the package's sources with cargo (once; it takes a few minutes)\n");
        try {
            $command = [$cargo, 'build', '--release', '--locked', '--bin', 'php-fuzz',
                '--manifest-path', $this->packageRoot . '/Cargo.toml', '--target-dir', $targetDir];
            $status = Child::run($command, [0 => ['file', '/dev/null', 'r'], 1 => \STDERR, 2 => \STDERR]);
            if ($status !== 0) {
                throw new LauncherError("cargo could not build php-fuzz (exit status $status); its output is above");
            }
            $built = $temporary . '/php-fuzz';
            if (!\copy($targetDir . '/release/php-fuzz', $built) || !\chmod($built, 0755)) {
                throw new LauncherError("cargo finished but left no binary at $targetDir/release/php-fuzz");
            }
            Version::require($built, $this->version, 'the binary cargo built');
            $installed = $this->cache->install($built);
            Cache::removeTree($targetDir); // a gigabyte of build products, no longer needed

            return $installed;
        } finally {
            Cache::removeTree($temporary);
        }
    }

    /** Stops a download between two chunks (SIGINT, SIGTERM). */
    public function interrupt(): void
    {
        $this->interrupted = true;
    }

    private function unpack(string $archive, string $temporary): string
    {
        $inside = "php-fuzz-{$this->version}-{$this->triple}/php-fuzz";
        try {
            (new \PharData($archive))->extractTo($temporary . '/unpacked', $inside);
        } catch (\Throwable $e) {
            throw new LauncherError("cannot unpack {$this->archiveName()}: " . $e->getMessage());
        }
        $binary = $temporary . '/unpacked/' . $inside;
        if (!\is_file($binary)) {
            throw new LauncherError("{$this->archiveName()} holds no $inside");
        }
        \chmod($binary, 0755);
        Version::require($binary, $this->version, "the binary in {$this->archiveName()}");

        return $binary;
    }
}
