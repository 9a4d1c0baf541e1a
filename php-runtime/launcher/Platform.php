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
            $triple = $libc === 'gnu' ? "$arch-unknown-linux-gnu" : null;
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

    /** 'gnu' unless the machine's C library is musl (Alpine and friends). */
    private static function linuxLibc(): string
    {
        $musl = \glob('/lib/ld-musl-*.so.1') ?: [];
        $glibc = \glob('/lib*/ld-linux*.so.*') ?: [];
        if ($glibc === []) {
            $glibc = \glob('/lib/*-linux-gnu/libc.so.6') ?: [];
        }

        return $musl !== [] && $glibc === [] ? 'musl' : 'gnu';
    }
}
