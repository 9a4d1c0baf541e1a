<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `ssrf`: the input chooses the host a connection goes to
 * (`php-fuzz.example`). Checked where a connection starts: the `http`,
 * `https`, `ftp` and `ftps` stream wrappers, and the hooks of fsockopen(),
 * stream_socket_client(), socket_connect() and curl_exec(). A host the
 * library checks against an allow-list never is the canary.
 *
 * @internal php-fuzz's harness, not an API
 */
final class Ssrf
{
    /** A URL (`https://host/…`) or a transport address (`tcp://host:port`, `host`). */
    public static function address(string $sink, string $address): void
    {
        if (!Detectors::on('ssrf')) {
            return;
        }
        $host = self::host($address);
        if ($host !== null && \strcasecmp(\rtrim($host, '.'), Detectors::HOST) === 0) {
            Detectors::report('ssrf', "$sink() would connect to " . Detectors::HOST
                . ', a host named by the input, at ' . Detectors::quote($address));
        }
        if ($host !== null && \strlen($host) >= 2) {
            Detectors::guide($host, Detectors::HOST);
        }
    }

    /** The host of a URL or a transport address, or null. */
    public static function host(string $address): ?string
    {
        if (\strpos($address, '://') === false) {
            $address = 'tcp://' . $address;
        }
        $host = \parse_url($address, \PHP_URL_HOST);
        return \is_string($host) ? \trim($host, '[]') : null;
    }
}
