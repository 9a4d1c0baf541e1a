<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * Fetches one release archive into a file with PHP's own stream wrappers
 * (no curl extension needed), honouring the usual proxy variables, showing
 * progress, and hashing as it reads.
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Download
{
    private const CHUNK = 65536;
    private const READ_TIMEOUT_SECONDS = 60;

    /** @var resource */
    private $progressStream;
    private bool $interactive;
    private string $label;

    /** @param resource $progressStream where progress goes (stderr) */
    public function __construct($progressStream, string $label)
    {
        $this->progressStream = $progressStream;
        $this->interactive = \function_exists('stream_isatty') && \stream_isatty($progressStream);
        $this->label = $label;
    }

    /**
     * Writes the body at $url into $destination and returns its SHA-256 in
     * hex. Throws a LauncherError if the server cannot be reached, answers
     * anything but 200, or closes the connection before the whole body came.
     */
    public function fetch(string $url, string $destination, ?\Closure $interrupted = null): string
    {
        $source = $this->open($url);
        $length = self::contentLength($source);
        $this->announce($url, $length);
        $out = \fopen($destination, 'xb');
        if ($out === false) {
            throw new LauncherError("cannot create $destination");
        }
        $hash = \hash_init('sha256');
        $received = 0;
        try {
            while (!\feof($source)) {
                if ($interrupted !== null && $interrupted()) {
                    throw new LauncherError("the download of $url was interrupted", LauncherError::INTERRUPTED);
                }
                $chunk = \fread($source, self::CHUNK);
                if ($chunk === false || ($chunk === '' && \stream_get_meta_data($source)['timed_out'])) {
                    throw new LauncherError("the download of $url stalled after $received bytes");
                }
                \hash_update($hash, $chunk);
                \fwrite($out, $chunk);
                $received += \strlen($chunk);
                $this->progress($received, $length);
            }
        } finally {
            \fclose($source);
            \fclose($out);
            $this->finishProgress();
        }
        if ($length !== null && $received !== $length) {
            throw new LauncherError(
                "the download of $url stopped after $received of $length bytes (the connection was closed); "
                . 'nothing was kept, run the command again to retry'
            );
        }

        return \hash_final($hash);
    }

    /** @return resource */
    private function open(string $url)
    {
        $context = \stream_context_create(self::contextOptions($url));
        $error = null;
        \set_error_handler(static function (int $type, string $message) use (&$error): bool {
            $error = $message;

            return true;
        });
        try {
            $source = \fopen($url, 'rb', false, $context);
        } finally {
            \restore_error_handler();
        }
        if ($source === false) {
            $reason = \preg_replace('/^fopen\([^)]*\): /', '', (string) $error);
            throw new LauncherError("cannot download $url: " . ($reason ?: 'unknown error'));
        }
        $status = self::httpStatus($source);
        if ($status !== null && $status !== 200) {
            \fclose($source);
            throw new LauncherError("cannot download $url: the server answered HTTP $status");
        }
        \stream_set_timeout($source, self::READ_TIMEOUT_SECONDS);

        return $source;
    }

    /** @return array<string, array<string, mixed>> */
    public static function contextOptions(string $url): array
    {
        $http = [
            'user_agent' => 'php-fuzz-launcher',
            'follow_location' => 1,
            'max_redirects' => 10,
            'timeout' => self::READ_TIMEOUT_SECONDS,
            'ignore_errors' => true,
        ];
        $proxy = Proxy::forUrl($url, \getenv());
        if ($proxy !== null) {
            $http['proxy'] = $proxy['proxy'];
            $http['request_fulluri'] = \str_starts_with($url, 'http://');
            if ($proxy['authorization'] !== null) {
                $http['header'] = 'Proxy-Authorization: Basic ' . $proxy['authorization'];
            }
        }

        return ['http' => $http];
    }

    /** The status of the last response in a redirect chain, or null for non-HTTP streams. */
    private static function httpStatus($source): ?int
    {
        $status = null;
        foreach (\stream_get_meta_data($source)['wrapper_data'] ?? [] as $line) {
            if (\is_string($line) && \preg_match('{^HTTP/\S+\s+(\d{3})}', $line, $m)) {
                $status = (int) $m[1];
            }
        }

        return $status;
    }

    private static function contentLength($source): ?int
    {
        $length = null;
        foreach (\stream_get_meta_data($source)['wrapper_data'] ?? [] as $line) {
            if (\is_string($line) && \preg_match('{^HTTP/}', $line)) {
                $length = null;
            } elseif (\is_string($line) && \preg_match('{^content-length:\s*(\d+)}i', $line, $m)) {
                $length = (int) $m[1];
            }
        }

        return $length;
    }

    private function announce(string $url, ?int $length): void
    {
        $size = $length === null ? 'unknown size' : self::megabytes($length);
        \fwrite($this->progressStream, "php-fuzz: downloading {$this->label} ($size) from $url\n");
    }

    private function progress(int $received, ?int $length): void
    {
        if (!$this->interactive) {
            return;
        }
        $done = self::megabytes($received);
        $line = $length !== null && $length > 0
            ? \sprintf('  %s of %s (%d%%)', $done, self::megabytes($length), \intdiv($received * 100, $length))
            : "  $done";
        \fwrite($this->progressStream, "\r\033[K" . $line);
    }

    private function finishProgress(): void
    {
        if ($this->interactive) {
            \fwrite($this->progressStream, "\r\033[K");
        }
    }

    private static function megabytes(int $bytes): string
    {
        return \sprintf('%.1f MB', $bytes / 1_000_000);
    }
}
