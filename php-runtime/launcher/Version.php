<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * Versions: the package's (from its Cargo.toml, the one source of truth) and
 * a binary's (from its `--version`).
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Version
{
    public static function ofPackage(string $packageRoot): string
    {
        $manifest = @\file_get_contents($packageRoot . '/Cargo.toml');
        if ($manifest === false
            || !\preg_match('/^\[workspace\.package\]\s*\n(?:(?!\[)[^\n]*\n)*?version\s*=\s*"([^"]+)"/m', $manifest, $m)) {
            throw new LauncherError("cannot read the package's version from $packageRoot/Cargo.toml");
        }

        return $m[1];
    }

    /** The version a php-fuzz binary reports, or null if it does not run as one. */
    public static function ofBinary(string $binary): ?string
    {
        $process = @\proc_open([$binary, '--version'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        if ($process === false) {
            return null;
        }
        $output = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        $status = \proc_close($process);

        return $status === 0 && \preg_match('/^php-fuzz (\S+)/', $output, $m) ? $m[1] : null;
    }

    /** Refuses a binary of another version, saying how to fix it. */
    public static function require(string $binary, string $version, string $what): void
    {
        $found = self::ofBinary($binary);
        if ($found !== $version) {
            $is = $found === null ? 'does not run as php-fuzz --version' : "is php-fuzz $found";
            throw new LauncherError(
                "$what ($binary) $is, but this package is php-fuzz $version. "
                . "Point PHP_FUZZ_BINARY at php-fuzz $version (or unset it), or require the php-fuzz/php-fuzz version that matches the binary."
            );
        }
    }

    /** True for an ELF or Mach-O file: a native binary, not a script such as this launcher. */
    public static function isNative(string $path): bool
    {
        $magic = @\file_get_contents($path, false, null, 0, 4);

        return \in_array($magic, ["\x7fELF", "\xcf\xfa\xed\xfe", "\xce\xfa\xed\xfe", "\xca\xfe\xba\xbe"], true);
    }
}
