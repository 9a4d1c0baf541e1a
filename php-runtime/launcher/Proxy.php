<?php declare(strict_types=1);

namespace PhpFuzz\Launcher;

/**
 * The proxy for a URL from the usual variables: https_proxy / HTTPS_PROXY,
 * http_proxy / HTTP_PROXY, all_proxy / ALL_PROXY and no_proxy / NO_PROXY,
 * as curl and composer read them.
 *
 * @internal php-fuzz's launcher, not an API
 */
final class Proxy
{
    /**
     * @param array<string, string> $env
     * @return array{proxy: string, authorization: string|null}|null
     */
    public static function forUrl(string $url, array $env): ?array
    {
        $scheme = \strtolower((string) \parse_url($url, \PHP_URL_SCHEME));
        $host = \strtolower((string) \parse_url($url, \PHP_URL_HOST));
        if (!\in_array($scheme, ['http', 'https'], true) || self::bypassed($host, $env)) {
            return null;
        }
        $setting = self::first($env, ["{$scheme}_proxy", \strtoupper($scheme) . '_PROXY', 'all_proxy', 'ALL_PROXY']);
        if ($setting === null) {
            return null;
        }
        if (!\str_contains($setting, '://')) {
            $setting = 'http://' . $setting;
        }
        $parts = \parse_url($setting);
        if ($parts === false || !isset($parts['host'])) {
            throw new LauncherError("the proxy setting \"$setting\" is not a URL like http://proxy.example:3128");
        }
        $secure = ($parts['scheme'] ?? 'http') === 'https';
        $port = $parts['port'] ?? ($secure ? 443 : 80);
        $authorization = isset($parts['user'])
            ? \base64_encode(\rawurldecode($parts['user']) . ':' . \rawurldecode($parts['pass'] ?? ''))
            : null;

        return [
            'proxy' => ($secure ? 'ssl://' : 'tcp://') . $parts['host'] . ':' . $port,
            'authorization' => $authorization,
        ];
    }

    /** @param array<string, string> $env */
    private static function bypassed(string $host, array $env): bool
    {
        $list = self::first($env, ['no_proxy', 'NO_PROXY']);
        if ($list === null) {
            return false;
        }
        foreach (\explode(',', $list) as $entry) {
            $entry = \strtolower(\trim($entry));
            if ($entry === '*') {
                return true;
            }
            $entry = \preg_replace('/:\d+$/', '', \ltrim($entry, '.'));
            if ($entry !== '' && ($host === $entry || \str_ends_with($host, '.' . $entry))) {
                return true;
            }
        }

        return false;
    }

    /** @param array<string, string> $env */
    private static function first(array $env, array $names): ?string
    {
        foreach ($names as $name) {
            if (isset($env[$name]) && \trim($env[$name]) !== '') {
                return \trim($env[$name]);
            }
        }

        return null;
    }
}
