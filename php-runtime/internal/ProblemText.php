<?php declare(strict_types=1);

namespace PhpFuzz;

/**
 * How the harness names what went wrong: PHP's error types and the calls of
 * a stack, as reports show them.
 *
 * @internal php-fuzz's harness, not an API
 */
final class ProblemText
{
    /** @param array<string, mixed> $call */
    public static function functionName(array $call): string
    {
        $function = $call['function'] ?? '{main}';
        if (isset($call['class'])) {
            return $call['class'] . ($call['type'] ?? '::') . $function . '()';
        }
        return \in_array($function, ['include', 'include_once', 'require', 'require_once'], true)
            ? $function
            : $function . '()';
    }

    public static function errorName(int $type): string
    {
        switch ($type) {
            case \E_ERROR: return 'Fatal error';
            case \E_WARNING: return 'Warning';
            case \E_PARSE: return 'Parse error';
            case \E_NOTICE: return 'Notice';
            case \E_CORE_ERROR: return 'Core error';
            case \E_CORE_WARNING: return 'Core warning';
            case \E_COMPILE_ERROR: return 'Compile error';
            case \E_COMPILE_WARNING: return 'Compile warning';
            case \E_USER_ERROR: return 'User error';
            case \E_USER_WARNING: return 'User warning';
            case \E_USER_NOTICE: return 'User notice';
            case 2048: return 'Strict standards';
            case \E_RECOVERABLE_ERROR: return 'Recoverable error';
            case \E_DEPRECATED: return 'Deprecated';
            case \E_USER_DEPRECATED: return 'User deprecated';
        }
        return "Error $type";
    }
}
