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

    public static function throwable(string $runtimeDir, \Throwable $e): string
    {
        $message = $e->getMessage();
        $previous = $e->getPrevious();
        while ($previous !== null) {
            $message .= "\nCaused by " . \get_class($previous) . ': ' . $previous->getMessage()
                . ' at ' . $previous->getFile() . ':' . $previous->getLine();
            $previous = $previous->getPrevious();
        }
        return self::encode($runtimeDir, \get_class($e), $message, $e->getFile(), $e->getLine(), $e->getTrace());
    }

    /**
     * Encodes a Problem. $calls is a debug_backtrace()-style list whose first
     * entry is the call into the function that was executing at $file:$line;
     * $truncated says it is only the top of the stack. The detectors' hooks
     * are taken out: a call they made stands where the target called them.
     *
     * @param list<array<string, mixed>> $calls
     */
    public static function encode(string $runtimeDir, string $class, string $message, string $file, int $line, array $calls, bool $truncated = false): string
    {
        [$file, $line, $calls] = Detectors::withoutHooks($file, $line, $calls);
        $message = IncludeInterceptor::withNativeReasons($message);
        $frames = [];
        $where = [$file, $line];
        foreach ($calls as $call) {
            $frames[] = [$where[0], $where[1], self::functionName($call)];
            $callFile = $call['file'] ?? '';
            if ($callFile !== '' && \strncmp($callFile, $runtimeDir, \strlen($runtimeDir)) === 0) {
                $where = null;
                break;
            }
            $where = [$callFile, $call['line'] ?? 0];
        }
        if ($calls !== [] && !$truncated && $where !== null && $where[0] !== '') {
            $frames[] = [$where[0], $where[1], '{main}'];
        }
        $trace = '';
        $encoded = \pack('P', \count($frames));
        foreach ($frames as $n => [$frameFile, $frameLine, $function]) {
            $trace .= "#$n $function at " . ($frameFile === '' ? '[internal]' : "$frameFile:$frameLine") . "\n";
            $encoded .= Wire::bytes($frameFile) . \pack('V', $frameLine) . Wire::bytes($function);
        }
        return Wire::bytes($class) . Wire::bytes($message) . Wire::bytes($file) . \pack('V', $line)
            . Wire::bytes($trace) . $encoded;
    }
}
