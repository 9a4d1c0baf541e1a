<?php declare(strict_types=1);

namespace PhpFuzz;

use PhpFuzz\Detectors\Ssrf;

/**
 * Stands in for PHP's `http`, `https`, `ftp` and `ftps` stream wrappers
 * while a run is under way (docs/detectors.md): every URL any code opens
 * (file_get_contents(), fopen(), copy(), get_headers(), libxml loading a
 * DTD, a SoapClient's WSDL…) passes the `ssrf` detector, and is refused
 * unless --allow-side-effects. An allowed one is opened by PHP's own
 * wrapper. Registered only when either applies.
 *
 * @internal php-fuzz's harness, not an API
 */
final class NetworkInterceptor
{
    const SCHEMES = ['http', 'https', 'ftp', 'ftps'];

    /** @var list<string> the schemes this PHP has, and so replaced */
    private static $replaced = [];

    /** @var resource|null */
    public $context;
    /** @var resource|null */
    private $handle = null;

    public static function enable(): void
    {
        $have = \stream_get_wrappers();
        self::$replaced = [];
        foreach (self::SCHEMES as $scheme) {
            if (\in_array($scheme, $have, true) && @\stream_wrapper_unregister($scheme)) {
                \stream_wrapper_register($scheme, self::class, \STREAM_IS_URL);
                self::$replaced[] = $scheme;
            }
        }
    }

    /**
     * @template T
     * @param \Closure(): T $op
     * @return T
     */
    private static function native(\Closure $op)
    {
        foreach (self::$replaced as $scheme) {
            \stream_wrapper_restore($scheme);
        }
        try {
            return $op();
        } finally {
            foreach (self::$replaced as $scheme) {
                \stream_wrapper_unregister($scheme);
                \stream_wrapper_register($scheme, self::class, \STREAM_IS_URL);
            }
        }
    }

    public function stream_open(string $path, string $mode, int $options, ?string &$openedPath): bool
    {
        [, , , $sink] = Detectors::site();
        $sink = $sink === '' ? 'a stream' : $sink;
        Ssrf::address($sink, $path);
        if (SideEffects::refuseConnection($sink, $path)) {
            SideEffects::$quietFailure = true;
            return false;
        }
        $context = $this->context;
        $handle = self::native(static function () use ($path, $mode, $context) {
            return $context !== null ? @\fopen($path, $mode, false, $context) : @\fopen($path, $mode);
        });
        if ($handle === false) {
            return false;
        }
        $this->handle = $handle;
        return true;
    }

    /** @return string|false */
    public function stream_read(int $count)
    {
        return \fread($this->handle, $count);
    }

    /** @return int|false */
    public function stream_write(string $data)
    {
        return \fwrite($this->handle, $data);
    }

    public function stream_eof(): bool
    {
        return \feof($this->handle);
    }

    public function stream_close(): void
    {
        if ($this->handle !== null) {
            \fclose($this->handle);
            $this->handle = null;
        }
    }

    public function stream_flush(): bool
    {
        return \fflush($this->handle);
    }

    /** @return array<int|string, int>|false */
    public function stream_stat()
    {
        return \fstat($this->handle);
    }

    public function stream_set_option(int $option, int $arg1, ?int $arg2): bool
    {
        switch ($option) {
            case \STREAM_OPTION_BLOCKING:
                return \stream_set_blocking($this->handle, (bool) $arg1);
            case \STREAM_OPTION_READ_TIMEOUT:
                return \stream_set_timeout($this->handle, $arg1, (int) $arg2);
        }
        return false;
    }

    /** @return resource|false */
    public function stream_cast(int $castAs)
    {
        return $this->handle ?? false;
    }

    /** URLs have no stat, as with PHP's own wrappers: file_exists() is false. */
    public function url_stat(string $path, int $flags): bool
    {
        return false;
    }
}
