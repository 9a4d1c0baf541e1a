<?php declare(strict_types=1);

namespace PhpFuzz;

use PhpFuzz\Detectors\PathTraversal;

/**
 * Replaces the `file://` stream wrapper so that every included file is served
 * instrumented. Every other file operation is forwarded to PHP's own wrapper
 * and behaves like plain `file://`; docs/protocol.md lists what a target can
 * still tell apart.
 *
 * @internal php-fuzz's harness, not an API
 */
final class IncludeInterceptor
{
    /** PHP passes this option to stream_open() for include/require; it has no PHP constant. */
    const OPEN_FOR_INCLUDE = 0x80;

    /** @var (\Closure(string): ?string)|null returns instrumented source, or null to include the file as is */
    private static $provider = null;
    /**
     * Instrumented files with `__halt_compiler()` data, by real path. Their
     * `__COMPILER_HALT_OFFSET__` counts in the instrumented code, so a file
     * reading its own data (`fopen(__FILE__)`) must read that code too.
     * @var array<string, string>
     */
    private static $haltFiles = [];
    /**
     * Why PHP's own wrapper last failed to open a file or directory (its
     * words, e.g. "No such file or directory"): PHP reports a user wrapper's
     * failure as '"…::stream_open" call failed', and the harness puts these
     * words back in what it reports.
     * @var string|null
     */
    private static $lastFailure = null;

    /** @var resource|null */
    public $context;
    /** @var resource|null the real stream, for everything but served includes */
    private $handle = null;
    /** @var string|null instrumented source being served to an include */
    private $code = null;
    /** @var int */
    private $offset = 0;
    /** @var string */
    private $path = '';
    /** @var resource|null */
    private $dir = null;

    /** @param \Closure(string): ?string $provider */
    public static function enable(\Closure $provider): void
    {
        self::$provider = $provider;
        \stream_wrapper_unregister('file');
        \stream_wrapper_register('file', self::class);
    }

    public static function disable(): void
    {
        \set_error_handler(static function () { return true; });
        try {
            \stream_wrapper_restore('file');
        } finally {
            \restore_error_handler();
        }
    }

    /**
     * $message with the user wrapper's "call failed" text replaced by PHP's
     * own reason, as plain `file://` would have worded it.
     */
    public static function withNativeReasons(string $message): string
    {
        if (self::$lastFailure === null || \strpos($message, '" call failed') === false) {
            return $message;
        }
        return \str_replace(
            ['"' . self::class . '::stream_open" call failed', '"' . self::class . '::dir_opendir" call failed'],
            self::$lastFailure,
            $message
        );
    }

    /**
     * Runs a native open that failed quietly, and keeps PHP's reason for
     * withNativeReasons(). A target's own error handler does not see it.
     * @template T
     * @param \Closure(): T $open
     * @return T
     */
    private static function quietOpen(\Closure $open)
    {
        \set_error_handler(static function (): bool {
            return false;
        });
        try {
            \error_clear_last();
            $result = self::native($open);
            if ($result === false) {
                $message = \error_get_last()['message'] ?? '';
                $colon = \strrpos($message, ': ');
                self::$lastFailure = $colon === false ? null : \substr($message, $colon + 2);
            }
            return $result;
        } finally {
            \restore_error_handler();
        }
    }

    /**
     * Runs $op against PHP's own file wrapper (a forked harness opens its
     * named pipes so: through this wrapper, reads would be buffered twice).
     * @template T
     * @param \Closure(): T $op
     * @return T
     */
    public static function bypassed(\Closure $op)
    {
        return self::$provider === null ? $op() : self::native($op);
    }

    /**
     * Runs $op against PHP's own file wrapper.
     * @template T
     * @param \Closure(): T $op
     * @return T
     */
    private static function native(\Closure $op)
    {
        \stream_wrapper_restore('file');
        try {
            return $op();
        } finally {
            \stream_wrapper_unregister('file');
            \stream_wrapper_register('file', self::class);
        }
    }

    public function stream_open(string $path, string $mode, int $options, ?string &$openedPath): bool
    {
        $this->path = $path;
        PathTraversal::path($path);
        if (\strpbrk($mode, 'waxc+') !== false && SideEffects::refuseWrite('write', $path)) {
            SideEffects::$quietFailure = true;
            return false;
        }
        if ($options & self::OPEN_FOR_INCLUDE && self::$provider !== null) {
            $real = self::native(static function () use ($path) {
                return \realpath($path);
            });
            if ($real !== false) {
                $code = (self::$provider)($real);
                if ($code !== null) {
                    if (\stripos($code, '__halt_compiler') !== false) {
                        self::$haltFiles[$real] = $code;
                    }
                    $this->code = $code;
                    $openedPath = $path;
                    return true;
                }
            }
        } elseif (self::$haltFiles && \strpbrk($mode, 'waxc+') === false) {
            $real = self::native(static function () use ($path) {
                return \realpath($path);
            });
            if ($real !== false && isset(self::$haltFiles[$real])) {
                $this->code = self::$haltFiles[$real];
                return true;
            }
        }
        // Failures stay silent here: PHP itself then reports "Failed to open
        // stream" at the caller's file and line, where the target sees it.
        $context = $this->context;
        $handle = self::quietOpen(static function () use ($path, $mode, $options, $context) {
            $useIncludePath = ($options & \STREAM_USE_PATH) !== 0;
            return $context !== null
                ? @\fopen($path, $mode, $useIncludePath, $context)
                : @\fopen($path, $mode, $useIncludePath);
        });
        if ($handle === false) {
            return false;
        }
        $this->handle = $handle;
        if ($options & \STREAM_USE_PATH) {
            $openedPath = \stream_get_meta_data($handle)['uri'] ?? $path;
        }
        return true;
    }

    /** @return string|false */
    public function stream_read(int $count)
    {
        if ($this->code !== null) {
            $chunk = (string) \substr($this->code, $this->offset, $count);
            $this->offset += \strlen($chunk);
            return $chunk;
        }
        return \fread($this->handle, $count);
    }

    /** @return int|false */
    public function stream_write(string $data)
    {
        if ($this->code !== null) {
            return false;
        }
        return \fwrite($this->handle, $data);
    }

    public function stream_eof(): bool
    {
        if ($this->code !== null) {
            return $this->offset >= \strlen($this->code);
        }
        return \feof($this->handle);
    }

    public function stream_tell(): int
    {
        if ($this->code !== null) {
            return $this->offset;
        }
        return (int) \ftell($this->handle);
    }

    public function stream_seek(int $offset, int $whence): bool
    {
        if ($this->code !== null) {
            $len = \strlen($this->code);
            switch ($whence) {
                case \SEEK_SET: $target = $offset; break;
                case \SEEK_CUR: $target = $this->offset + $offset; break;
                case \SEEK_END: $target = $len + $offset; break;
                default: return false;
            }
            if ($target < 0) {
                return false;
            }
            $this->offset = $target;
            return true;
        }
        return \fseek($this->handle, $offset, $whence) === 0;
    }

    public function stream_flush(): bool
    {
        return $this->code !== null ? true : \fflush($this->handle);
    }

    public function stream_close(): void
    {
        if ($this->handle !== null) {
            \fclose($this->handle);
            $this->handle = null;
        }
        $this->code = null;
    }

    /** @return array<int|string, int>|false */
    public function stream_stat()
    {
        if ($this->code !== null) {
            $path = $this->path;
            $stat = self::native(static function () use ($path) {
                return @\stat($path);
            });
            if ($stat !== false) {
                $stat['size'] = $stat[7] = \strlen($this->code);
            }
            return $stat;
        }
        return \fstat($this->handle);
    }

    public function stream_lock(int $operation): bool
    {
        if ($this->handle === null) {
            return false;
        }
        if ($operation === 0) {
            // PHP asking whether the stream can be locked at all (LOCK_EX in
            // file_put_contents(), for one): plain files can.
            return true;
        }
        return \flock($this->handle, $operation);
    }

    public function stream_truncate(int $size): bool
    {
        if ($this->code !== null) {
            return false;
        }
        return \ftruncate($this->handle, $size);
    }

    public function stream_set_option(int $option, int $arg1, ?int $arg2): bool
    {
        if ($this->code !== null || $this->handle === null) {
            return false;
        }
        switch ($option) {
            case \STREAM_OPTION_BLOCKING:
                return \stream_set_blocking($this->handle, (bool) $arg1);
            case \STREAM_OPTION_READ_TIMEOUT:
                return \stream_set_timeout($this->handle, $arg1, (int) $arg2);
            case \STREAM_OPTION_WRITE_BUFFER:
                return \stream_set_write_buffer($this->handle, (int) $arg2) === 0;
            case \STREAM_OPTION_READ_BUFFER:
                return \stream_set_read_buffer($this->handle, (int) $arg2) === 0;
        }
        return false;
    }

    /** @return resource|false */
    public function stream_cast(int $castAs)
    {
        return $this->handle ?? false;
    }

    public function stream_metadata(string $path, int $option, $value): bool
    {
        PathTraversal::path($path);
        if (SideEffects::refuseWrite($option === \STREAM_META_TOUCH ? 'touch' : 'change', $path)) {
            return false;
        }
        return self::native(static function () use ($path, $option, $value) {
            switch ($option) {
                case \STREAM_META_TOUCH:
                    if (\is_array($value) && \count($value) >= 2) {
                        return \touch($path, $value[0], $value[1]);
                    }
                    if (\is_array($value) && \count($value) === 1) {
                        return \touch($path, $value[0]);
                    }
                    return \touch($path);
                case \STREAM_META_OWNER_NAME:
                case \STREAM_META_OWNER:
                    return \chown($path, $value);
                case \STREAM_META_GROUP_NAME:
                case \STREAM_META_GROUP:
                    return \chgrp($path, $value);
                case \STREAM_META_ACCESS:
                    return \chmod($path, $value);
            }
            return false;
        });
    }

    /** @return array<int|string, int>|false */
    public function url_stat(string $path, int $flags)
    {
        PathTraversal::path($path);
        return self::native(static function () use ($path, $flags) {
            $link = ($flags & \STREAM_URL_STAT_LINK) !== 0;
            // PHP reports a failed stat() itself unless the caller asked for
            // quiet. No warning at all, even silenced: SplFileObject's
            // constructor turns one into a RuntimeException for a new file.
            if (!\file_exists($path) && !($link && \is_link($path))) {
                return false;
            }
            return $link ? @\lstat($path) : @\stat($path);
        });
    }

    public function unlink(string $path): bool
    {
        PathTraversal::path($path);
        if (SideEffects::refuseWrite('delete', $path)) {
            return false;
        }
        $context = $this->context;
        return self::native(static function () use ($path, $context) {
            return $context !== null ? \unlink($path, $context) : \unlink($path);
        });
    }

    public function rename(string $from, string $to): bool
    {
        PathTraversal::path($from);
        PathTraversal::path($to);
        if (SideEffects::refuseWrite('rename', $from) || SideEffects::refuseWrite('rename a file to', $to)) {
            return false;
        }
        $context = $this->context;
        return self::native(static function () use ($from, $to, $context) {
            return $context !== null ? \rename($from, $to, $context) : \rename($from, $to);
        });
    }

    public function mkdir(string $path, int $mode, int $options): bool
    {
        PathTraversal::path($path);
        if (SideEffects::refuseWrite('create the folder', $path)) {
            return false;
        }
        $context = $this->context;
        return self::native(static function () use ($path, $mode, $options, $context) {
            $recursive = ($options & \STREAM_MKDIR_RECURSIVE) !== 0;
            if (($options & \STREAM_REPORT_ERRORS) === 0) {
                return $context !== null ? @\mkdir($path, $mode, $recursive, $context) : @\mkdir($path, $mode, $recursive);
            }
            return $context !== null ? \mkdir($path, $mode, $recursive, $context) : \mkdir($path, $mode, $recursive);
        });
    }

    public function rmdir(string $path, int $options): bool
    {
        PathTraversal::path($path);
        if (SideEffects::refuseWrite('delete the folder', $path)) {
            return false;
        }
        $context = $this->context;
        return self::native(static function () use ($path, $options, $context) {
            if (($options & \STREAM_REPORT_ERRORS) === 0) {
                return $context !== null ? @\rmdir($path, $context) : @\rmdir($path);
            }
            return $context !== null ? \rmdir($path, $context) : \rmdir($path);
        });
    }

    public function dir_opendir(string $path, int $options): bool
    {
        PathTraversal::path($path);
        $context = $this->context;
        $dir = self::quietOpen(static function () use ($path, $context) {
            return $context !== null ? @\opendir($path, $context) : @\opendir($path);
        });
        if ($dir === false) {
            return false;
        }
        $this->dir = $dir;
        return true;
    }

    /** @return string|false */
    public function dir_readdir()
    {
        return \readdir($this->dir);
    }

    public function dir_rewinddir(): bool
    {
        \rewinddir($this->dir);
        return true;
    }

    public function dir_closedir(): bool
    {
        \closedir($this->dir);
        $this->dir = null;
        return true;
    }
}
