<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * The Rust target triple of the machine, among those php-fuzz publishes
 * prebuilt binaries for.
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Platform
{
    public const SUPPORTED = [
        'x86_64-unknown-linux-gnu',
        'aarch64-unknown-linux-gnu',
        'x86_64-unknown-linux-musl',
        'aarch64-unknown-linux-musl',
        'x86_64-apple-darwin',
        'aarch64-apple-darwin',
    ];

    /**
     * The triple for this machine, or a LauncherError that names what was
     * found and what is supported.
     *
     * @param string      $osFamily PHP_OS_FAMILY
     * @param string      $machine  php_uname('m')
     * @param string|null $libc     'gnu', 'musl' or null to detect
     */
    public static function triple(string $osFamily, string $machine, ?string $libc = null): string
    {
        $arch = match (\strtolower($machine)) {
            'x86_64', 'amd64' => 'x86_64',
            'aarch64', 'arm64' => 'aarch64',
            default => null,
        };
        $triple = null;
        if ($arch !== null && $osFamily === 'Linux') {
            $libc ??= self::linuxLibc();
            $triple = \in_array($libc, ['gnu', 'musl'], true) ? "$arch-unknown-linux-$libc" : null;
        } elseif ($arch !== null && $osFamily === 'Darwin') {
            $triple = "$arch-apple-darwin";
        }
        if ($triple === null) {
            $what = $osFamily . ' on ' . $machine . ($osFamily === 'Linux' && $arch !== null ? " with $libc libc" : '');
            throw new LauncherError(
                "php-fuzz publishes no prebuilt binary for this platform ($what); "
                . 'prebuilt binaries exist for ' . \implode(', ', self::SUPPORTED) . '.'
            );
        }

        return $triple;
    }

    public static function current(): string
    {
        return self::triple(\PHP_OS_FAMILY, \php_uname('m'));
    }

    /**
     * 'musl' when the C library PHP runs on is musl (Alpine, `php:*-alpine`),
     * else 'gnu'.
     *
     * First by what this PHP process has mapped: musl's dynamic loader
     * (`ld-musl-<arch>.so.1`) is its C library too, so a PHP linked against
     * musl maps it, and one linked against glibc maps `libc.so.6`. Then, when
     * /proc is out of reach (open_basedir, a chroot) or PHP is linked
     * statically, by the loaders installed: musl's and no glibc one. An
     * Alpine with gcompat has both loaders installed, and a Debian with the
     * musl package too; its PHP's own mappings tell them apart.
     *
     * @param string $root a folder that stands for / (tests present other systems with it)
     */
    public static function linuxLibc(string $root = ''): string
    {
        $maps = @\file_get_contents($root . '/proc/self/maps');
        if (\is_string($maps)) {
            if (\preg_match('~/ld-musl-[^/\s]+\.so\.1(?: \(deleted\))?$~m', $maps) === 1) {
                return 'musl';
            }
            if (\preg_match('~/libc\.so\.6(?: \(deleted\))?$~m', $maps) === 1) {
                return 'gnu';
            }
        }
        $musl = \array_merge(\glob($root . '/lib/ld-musl-*.so.1') ?: [], \glob($root . '/usr/lib/ld-musl-*.so.1') ?: []);
        $glibc = \glob($root . '/lib*/ld-linux*.so.*') ?: [];
        if ($glibc === []) {
            $glibc = \glob($root . '/lib/*-linux-gnu/libc.so.6') ?: [];
        }

        return $musl !== [] && $glibc === [] ? 'musl' : 'gnu';
    }
}
