<?php declare(strict_types=1);

namespace PhpFuzz\Detectors;

use PhpFuzz\Detectors;

/**
 * `code-injection`: text compiled as PHP code calls a function the input
 * named (`php_fuzz_code()`). Only code that compiles counts: an eval() of
 * text that does not parse runs nothing. PHP 8 has no string assert(), no
 * create_function() and no preg_replace() /e, so eval() and include/require
 * of a `data:` or `php://` path are the sinks left.
 *
 * @internal php-fuzz's harness, not an API
 */
final class CodeInjection
{
    /** The code of an eval(). */
    public static function evalCode(string $code): void
    {
        if (!Detectors::on('code-injection')) {
            return;
        }
        if (\stripos($code, Detectors::CODE) === false) {
            self::guide($code);
            return;
        }
        if (self::callsCanary('<?php ' . $code)) {
            Detectors::report('code-injection', 'eval() would run code that calls ' . Detectors::CODE
                . '() from the input: ' . Detectors::quote($code));
        }
    }

    /** The path of an include or require. */
    public static function includePath(string $path): void
    {
        if (!Detectors::on('code-injection')) {
            return;
        }
        $trimmed = \ltrim($path);
        if (\strncasecmp($trimmed, 'data:', 5) === 0) {
            $comma = \strpos($trimmed, ',');
            if ($comma === false) {
                return;
            }
            $meta = \substr($trimmed, 5, $comma - 5);
            $payload = \substr($trimmed, $comma + 1);
            $payload = \stripos($meta, ';base64') !== false
                ? (string) \base64_decode($payload, false)
                : \rawurldecode($payload);
            if (self::callsCanary($payload)) {
                Detectors::report('code-injection', 'include would compile code that calls ' . Detectors::CODE
                    . '() from a data: path of the input: ' . Detectors::quote($path));
            }
        } elseif (\strncasecmp($trimmed, 'php://', 6) === 0 && \stripos($trimmed, Detectors::CODE) !== false) {
            Detectors::report('code-injection', 'include would compile code from the php:// stream '
                . Detectors::quote($path) . ' the input chose');
        }
    }

    /** Whether $source compiles and calls the canary function. */
    private static function callsCanary(string $source): bool
    {
        try {
            $tokens = \token_get_all($source, \TOKEN_PARSE);
        } catch (\Throwable $e) {
            return false;
        }
        $named = false;
        foreach ($tokens as $token) {
            if (\is_array($token)) {
                if (\in_array($token[0], [\T_WHITESPACE, \T_COMMENT, \T_DOC_COMMENT], true)) {
                    continue;
                }
                $name = \ltrim($token[1], '\\');
                $named = \in_array($token[0], [\T_STRING, \T_NAME_FULLY_QUALIFIED], true)
                    && \strcasecmp($name, Detectors::CODE) === 0;
                continue;
            }
            if ($named && $token === '(') {
                return true;
            }
            $named = false;
        }
        return false;
    }

    /**
     * Steers eval'd code toward a call of the canary: the whole code, its
     * words, and its expressions (innermost parentheses, what `return`
     * returns), each also without the `$` of its variables, since compilers
     * of expression languages (gettext's plural rules, templates) turn the
     * input's names into PHP variables.
     */
    private static function guide(string $code): void
    {
        if (!\PhpFuzz\CmpLog::$enabled) {
            return;
        }
        Detectors::guide($code, Detectors::CODE . '();');
        if (\preg_match_all('/[A-Za-z0-9_]{2,}/', $code, $words) > 0) {
            foreach (\array_slice($words[0], 0, 8) as $word) {
                Detectors::guide($word, Detectors::CODE . '()');
            }
        }
        foreach (\array_slice(self::expressions($code), 0, 8) as $expression) {
            Detectors::guide($expression, Detectors::CODE . '()');
        }
    }

    /** @return list<string> $code's innermost parenthesized and returned expressions, with and without `$`. */
    private static function expressions(string $code): array
    {
        $found = [];
        foreach (['/\breturn\s+([^;{}]{2,80});/', '/\(([^()]{2,80})\)/'] as $pattern) {
            if (\preg_match_all($pattern, $code, $matches) > 0) {
                foreach ($matches[1] as $expression) {
                    $found[] = \trim($expression);
                    $found[] = \trim((string) \preg_replace('/\$(?=[A-Za-z_])/', '', $expression));
                }
            }
        }
        return \array_values(\array_unique($found));
    }
}
