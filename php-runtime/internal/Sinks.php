<?php

// The hooks instrumented code calls in place of sink functions
// (crates/instrument/src/analyze/sinks.rs, docs/detectors.md). Each has
// the real function's name, parameters (names, order, defaults, references)
// and results: it lets the detectors look, refuses a side effect unless
// --allow-side-effects, then calls the real function. This file declares no
// strict_types, as a file that does not declare them calls the real
// function; the harness makes SinksStrict.php from it, in the namespace
// PhpFuzz\Sink\Strict, for files that declare strict_types=1.
//
// @internal php-fuzz's harness, not an API

namespace PhpFuzz\Sink;

use PhpFuzz\Detectors\ClassInjection;
use PhpFuzz\Detectors\CodeInjection;
use PhpFuzz\Detectors\CommandInjection;
use PhpFuzz\Detectors\ObjectInjection;
use PhpFuzz\Detectors\PathTraversal;
use PhpFuzz\Detectors\RegexDos;
use PhpFuzz\Detectors\Ssrf;
use PhpFuzz\Detectors\Xxe;
use PhpFuzz\CmpLog;
use PhpFuzz\Detectors;
use PhpFuzz\SideEffects;

// ----- command-injection: processes -----

/** What PHP would make of a command argument, or null for a value it rejects. */
function text($value): ?string
{
    return \is_scalar($value) || $value === null || $value instanceof \Stringable ? (string) $value : null;
}

function exec($command, &$output = null, &$result_code = null)
{
    $text = text($command);
    if ($text !== null) {
        CommandInjection::shell('exec', $text);
        if (SideEffects::refuseProcess('exec', $text)) {
            return false;
        }
    }
    return \exec($command, $output, $result_code);
}

function system($command, &$result_code = null)
{
    $text = text($command);
    if ($text !== null) {
        CommandInjection::shell('system', $text);
        if (SideEffects::refuseProcess('system', $text)) {
            return false;
        }
    }
    return \system($command, $result_code);
}

function passthru($command, &$result_code = null)
{
    $text = text($command);
    if ($text !== null) {
        CommandInjection::shell('passthru', $text);
        if (SideEffects::refuseProcess('passthru', $text)) {
            return false;
        }
    }
    return \passthru($command, $result_code);
}

function shell_exec($command)
{
    $text = text($command);
    if ($text !== null) {
        CommandInjection::shell('shell_exec', $text);
        if (SideEffects::refuseProcess('shell_exec', $text)) {
            return false;
        }
    }
    return \shell_exec($command);
}

function popen($command, $mode)
{
    $text = text($command);
    if ($text !== null) {
        CommandInjection::shell('popen', $text);
        if (SideEffects::refuseProcess('popen', $text)) {
            return false;
        }
    }
    return \popen($command, $mode);
}

function proc_open($command, $descriptor_spec, &$pipes, $cwd = null, $env_vars = null, $options = null)
{
    $text = \is_array($command) ? \implode(' ', \array_map(__NAMESPACE__ . '\\text', $command)) : text($command);
    if (\is_array($command) && \is_string($command[0] ?? null)) {
        CommandInjection::program('proc_open', $command[0]);
    } elseif ($text !== null) {
        CommandInjection::shell('proc_open', $text);
    }
    if ($text !== null && SideEffects::refuseProcess('proc_open', $text)) {
        return false;
    }
    return \proc_open($command, $descriptor_spec, $pipes, $cwd, $env_vars, $options);
}

function pcntl_exec($path, $args = [], $env_vars = [])
{
    $text = text($path);
    if ($text !== null) {
        CommandInjection::program('pcntl_exec', $text);
        if (SideEffects::refuseProcess('pcntl_exec', $text)) {
            return false;
        }
    }
    return \pcntl_exec($path, $args, $env_vars);
}

function mail($to, $subject, $message, $additional_headers = [], $additional_params = '')
{
    if (\is_string($additional_params) && $additional_params !== '') {
        CommandInjection::mailParameters($additional_params);
    }
    if (SideEffects::refuseProcess('mail', 'sendmail ' . (\is_string($additional_params) ? $additional_params : ''))) {
        return false;
    }
    return $additional_params === ''
        ? \mail($to, $subject, $message, $additional_headers)
        : \mail($to, $subject, $message, $additional_headers, $additional_params);
}

// ----- object-injection (a call with named or unpacked arguments) -----

function unserialize($data, $options = [])
{
    if (\is_string($data)) {
        ObjectInjection::unserialize($data, $options);
    }
    return \unserialize($data, $options);
}

// ----- ssrf: connections -----

function fsockopen($hostname, $port = -1, &$error_code = null, &$error_message = null, $timeout = null)
{
    if (\is_string($hostname)) {
        Ssrf::address('fsockopen', $hostname);
        if (SideEffects::refuseConnection('fsockopen', $port === -1 ? $hostname : "$hostname:$port")) {
            $error_code = 111;
            $error_message = 'Connection refused';
            return false;
        }
    }
    return \fsockopen($hostname, $port, $error_code, $error_message, $timeout);
}

function pfsockopen($hostname, $port = -1, &$error_code = null, &$error_message = null, $timeout = null)
{
    if (\is_string($hostname)) {
        Ssrf::address('pfsockopen', $hostname);
        if (SideEffects::refuseConnection('pfsockopen', $port === -1 ? $hostname : "$hostname:$port")) {
            $error_code = 111;
            $error_message = 'Connection refused';
            return false;
        }
    }
    return \pfsockopen($hostname, $port, $error_code, $error_message, $timeout);
}

function stream_socket_client($address, &$error_code = null, &$error_message = null, $timeout = null, $flags = \STREAM_CLIENT_CONNECT, $context = null)
{
    if (\is_string($address)) {
        Ssrf::address('stream_socket_client', $address);
        if (SideEffects::refuseConnection('stream_socket_client', $address)) {
            $error_code = 111;
            $error_message = 'Connection refused';
            return false;
        }
    }
    return $context === null
        ? \stream_socket_client($address, $error_code, $error_message, $timeout, $flags)
        : \stream_socket_client($address, $error_code, $error_message, $timeout, $flags, $context);
}

function socket_connect($socket, $address, $port = null)
{
    if (\is_string($address)) {
        Ssrf::address('socket_connect', $address);
        if (SideEffects::refuseConnection('socket_connect', $port === null ? $address : "$address:$port")) {
            return false;
        }
    }
    return \socket_connect($socket, $address, $port);
}

function curl_exec($handle)
{
    if (\function_exists('curl_getinfo') && $handle instanceof \CurlHandle) {
        $url = (string) \curl_getinfo($handle, \CURLINFO_EFFECTIVE_URL);
        Ssrf::address('curl_exec', $url);
        if (SideEffects::refuseConnection('curl_exec', $url)) {
            return false;
        }
    }
    return \curl_exec($handle);
}

// ----- ssrf: SoapClient, whose requests do not use PHP's stream wrappers -----

if (\class_exists(\SoapClient::class, false)) {
    /**
     * `new SoapClient(…)` in instrumented code: the same client, whose
     * requests pass the ssrf detector and are refused, as a failed
     * connection fails, unless --allow-side-effects. (Its WSDL is loaded
     * through the http wrapper, which php-fuzz hooks anyway.)
     */
    class SoapClient extends \SoapClient
    {
        public function __construct($wsdl, $options = [])
        {
            if (\is_array($options) && \is_string($options['location'] ?? null)) {
                Ssrf::address('SoapClient', $options['location']);
            }
            parent::__construct($wsdl, $options);
        }

        #[\ReturnTypeWillChange]
        public function __doRequest($request, $location, $action, $version, $oneWay = false, ...$more)
        {
            Ssrf::address('SoapClient', (string) $location);
            if (SideEffects::refuseConnection('SoapClient', (string) $location)) {
                throw new \SoapFault('HTTP', 'Could not connect to host');
            }
            return parent::__doRequest($request, $location, $action, $version, $oneWay, ...$more);
        }
    }
} else {
    /** Without ext/soap, `new SoapClient(…)` fails as it would. */
    final class SoapClient
    {
        public function __construct(...$arguments)
        {
            throw new \Error('Class "SoapClient" not found');
        }
    }
}

// ----- class-injection: ReflectionClass, whose instances are uses -----

/**
 * `new ReflectionClass(…)` in instrumented code: the same reflection, for
 * which the class named is a lookup (steered toward the canary) and an
 * instance made of it a use the detector checks.
 */
class ReflectionClass extends \ReflectionClass
{
    public function __construct($objectOrClass)
    {
        parent::__construct($objectOrClass);
        ClassInjection::reflected($this->name);
    }

    public function newInstance(...$args): object
    {
        ClassInjection::reflected($this->name, 'newInstance');
        return parent::newInstance(...$args);
    }

    public function newInstanceArgs(array $args = []): object
    {
        ClassInjection::reflected($this->name, 'newInstanceArgs');
        return parent::newInstanceArgs($args);
    }

    public function newInstanceWithoutConstructor(): object
    {
        ClassInjection::reflected($this->name, 'newInstanceWithoutConstructor');
        return parent::newInstanceWithoutConstructor();
    }
}

// ----- regex-dos: the result of a preg_* call, made where it was -----

/**
 * Where `((Regex::$result = preg_match(…)) === false ? regexFailed('preg_match')
 * : Regex::$result)` keeps the result of a call that returns false on
 * failure: the check costs no function call while the call succeeds.
 */
final class Regex
{
    /** @var mixed */
    public static $result = null;
}

/**
 * A `preg_*` call returned its failure value (`false`, or `null` for the
 * replacing ones: `preg_replace(…) ?? regexFailed('preg_replace')`): the
 * detector looks at preg_last_error(); the failure value goes back.
 */
function regexFailed($sink)
{
    RegexDos::failed($sink);
    return \in_array($sink, ['preg_replace', 'preg_replace_callback', 'preg_replace_callback_array', 'preg_filter'], true)
        ? null
        : false;
}

// ----- path-traversal and side effects: what bypasses stream wrappers -----

function symlink($target, $link)
{
    if (\is_string($target) && \is_string($link)) {
        PathTraversal::path($target);
        PathTraversal::path($link);
        if (SideEffects::refuseWrite('create the link', $link)) {
            return false;
        }
    }
    return \symlink($target, $link);
}

function link($target, $link)
{
    if (\is_string($target) && \is_string($link)) {
        PathTraversal::path($target);
        PathTraversal::path($link);
        if (SideEffects::refuseWrite('create the link', $link)) {
            return false;
        }
    }
    return \link($target, $link);
}

function tempnam($directory, $prefix)
{
    if (\is_string($directory)) {
        PathTraversal::path($directory);
        if (\is_dir($directory) && SideEffects::refuseWrite('create a file in', $directory)) {
            return false;
        }
    }
    return \tempnam($directory, $prefix);
}

// ----- wrappers: values the instrumenter routes through a check -----

/** The data of `unserialize($data)`, before it runs. */
function serialized($data)
{
    if (\is_string($data) && (\stripos($data, Detectors::OBJECT) !== false || CmpLog::$enabled)) {
        ObjectInjection::unserialize($data, []);
    }
    return $data;
}

/** The data of `unserialize($data, $options)`, checked with the options. */
function serializedData($data)
{
    ObjectInjection::$data = $data;
    return $data;
}

/** The options of `unserialize($data, $options)`, then the check. */
function serializedOptions($options)
{
    $data = ObjectInjection::$data;
    ObjectInjection::$data = null;
    if (\is_string($data) && (\stripos($data, Detectors::OBJECT) !== false || CmpLog::$enabled)) {
        ObjectInjection::unserialize($data, $options);
    }
    return $options;
}

/** The code of an eval(). */
function evalCode($code)
{
    if (\is_string($code)) {
        CodeInjection::evalCode($code);
    }
    return $code;
}

/** The path of an include or require. */
function includePath($path)
{
    if (\is_string($path)) {
        CodeInjection::includePath($path);
    }
    return $path;
}

/** The class of `new $x` and `$x::m()`. */
function className($class)
{
    // What matters: the canary's name, or a name the tracer steers.
    if (\is_string($class) && (\stripos($class, Detectors::CLASS_NAME) !== false || CmpLog::$enabled)) {
        ClassInjection::className($class);
    }
    return $class;
}

/** The callee of `$f(…)` and call_user_func(). */
function callee($callee)
{
    if (\is_string($callee)
        ? \stripos($callee, Detectors::CLASS_NAME) !== false || CmpLog::$enabled
        : \is_array($callee)) {
        ClassInjection::callee($callee);
    }
    return $callee;
}

/** An XML document on its way to a parser (the cmplog rendering only). */
function xmlDocument($xml)
{
    if (\is_string($xml)) {
        Xxe::guide($xml);
    }
    return $xml;
}
