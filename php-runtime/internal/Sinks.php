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

function posix_mkfifo($filename, $permissions)
{
    if (\is_string($filename)) {
        PathTraversal::path($filename);
        if (SideEffects::refuseWrite('create the fifo', $filename)) {
            return false;
        }
    }
    return \posix_mkfifo($filename, $permissions);
}

function posix_mknod($filename, $flags, $major = 0, $minor = 0)
{
    if (\is_string($filename)) {
        PathTraversal::path($filename);
        if (SideEffects::refuseWrite('create the node', $filename)) {
            return false;
        }
    }
    return \posix_mknod($filename, $flags, $major, $minor);
}

/**
 * Settings that name a file PHP then writes without its streams (a log, a
 * session's folder, a cache), lower case: refused outside the allowed
 * folders, as if PHP had refused the value.
 */
const PATH_SETTINGS = ['error_log' => true, 'mail.log' => true, 'session.save_path' => true, 'soap.wsdl_cache_dir' => true];

function ini_set($option, $value)
{
    if (\is_string($option) && isset(PATH_SETTINGS[\strtolower($option)]) && (\is_string($value) || \is_int($value))) {
        // session.save_path may be "N;/path" or "N;MODE;/path".
        $path = \substr(\strrchr(';' . $value, ';'), 1);
        if (\strcasecmp($option, 'error_log') === 0 && $path === 'syslog') {
            if (SideEffects::refuseConnection('ini_set', 'the system log')) {
                return false;
            }
        } elseif ($path !== '' && SideEffects::refuseWrite("log or save to ($option)", $path)) {
            return false;
        }
    }
    return \ini_set($option, $value);
}

function ini_alter($option, $value)
{
    return ini_set($option, $value);
}

function error_log($message, $message_type = 0, $destination = null, $additional_headers = null)
{
    // Type 1 mails the message: sendmail runs. Type 3 goes through the file wrapper.
    if ($message_type === 1 || $message_type === '1') {
        if (SideEffects::refuseProcess('error_log', 'sendmail ' . (\is_string($destination) ? $destination : ''))) {
            return false;
        }
    }
    return \error_log($message, $message_type, $destination, $additional_headers);
}

/**
 * A signal to a process outside the harness's process group (which holds
 * the harness and the children it forks), or to every process (-1), is
 * refused: `false`, as for a process that does not exist.
 */
function posix_kill($process_id, $signal)
{
    if (\is_int($process_id) && $signal !== 0 && $signal !== '0') {
        $group = \posix_getpgid(0);
        $theirs = $process_id > 0 ? \posix_getpgid($process_id) : ($process_id === 0 ? $group : -$process_id);
        if ($theirs !== $group && $theirs !== false && SideEffects::refuseProcess('posix_kill', "kill -$signal $process_id")) {
            return false;
        }
    }
    return \posix_kill($process_id, $signal);
}

// ----- side effects: connections the ssrf detector does not look at -----

function ftp_connect($hostname, $port = 21, $timeout = 90)
{
    if (\is_string($hostname)) {
        Ssrf::address('ftp_connect', $hostname);
        if (SideEffects::refuseConnection('ftp_connect', "$hostname:$port")) {
            return false;
        }
    }
    return \ftp_connect($hostname, $port, $timeout);
}

function ftp_ssl_connect($hostname, $port = 21, $timeout = 90)
{
    if (\is_string($hostname)) {
        Ssrf::address('ftp_ssl_connect', $hostname);
        if (SideEffects::refuseConnection('ftp_ssl_connect', "$hostname:$port")) {
            return false;
        }
    }
    return \ftp_ssl_connect($hostname, $port, $timeout);
}

function socket_sendto($socket, $data, $length, $flags, $address, $port = null)
{
    if (\is_string($address)) {
        Ssrf::address('socket_sendto', $address);
        if (SideEffects::refuseConnection('socket_sendto', $port === null ? $address : "$address:$port")) {
            return false;
        }
    }
    return \socket_sendto($socket, $data, $length, $flags, $address, $port);
}

/**
 * A refused transfer fails at once, as curl_exec()'s does: its protocols
 * are switched off, so curl_multi_exec() finishes it with "Protocol not
 * supported or disabled" (CURLE_UNSUPPORTED_PROTOCOL) without a connection.
 */
function curl_multi_add_handle($multi_handle, $handle)
{
    if (\function_exists('curl_getinfo') && $handle instanceof \CurlHandle) {
        $url = (string) \curl_getinfo($handle, \CURLINFO_EFFECTIVE_URL);
        Ssrf::address('curl_multi_add_handle', $url);
        if (SideEffects::refuseConnection('curl_multi_add_handle', $url)) {
            \curl_setopt($handle, \CURLOPT_PROTOCOLS, 0);
        }
    }
    return \curl_multi_add_handle($multi_handle, $handle);
}

// ----- side effects: native code -----

/**
 * `FFI::cdef()`, `FFI::load()` and `FFI::scope()` in instrumented code:
 * refused unless --allow-side-effects, as `ffi.enable=0` refuses them, since
 * C code does what it likes with the machine.
 */
final class FFI
{
    public static function cdef(...$arguments)
    {
        self::refuse('cdef', (string) ($arguments[1] ?? $arguments['lib'] ?? 'the process'));
        return \FFI::cdef(...$arguments);
    }

    public static function load(...$arguments)
    {
        self::refuse('load', (string) ($arguments[0] ?? $arguments['filename'] ?? ''));
        return \FFI::load(...$arguments);
    }

    public static function scope(...$arguments)
    {
        self::refuse('scope', (string) ($arguments[0] ?? $arguments['name'] ?? ''));
        return \FFI::scope(...$arguments);
    }

    private static function refuse(string $method, string $what): void
    {
        if (!SideEffects::$refuse || !SideEffects::$active || !\class_exists(\FFI::class, false)) {
            return;
        }
        SideEffects::refuse('native-code', "FFI::$method() tried to call native code of " . Detectors::quote($what));
        throw new \FFI\Exception('FFI API is restricted by "ffi.enable" configuration directive');
    }
}

// ----- side effects: Phar and PharData, which write without PHP's streams -----

/** `new ReflectionFunction('exec')` reflects exec's hook, which refuses and reports. */
class ReflectionFunction extends \ReflectionFunction
{
    public function __construct($function)
    {
        parent::__construct(callback($function));
    }
}

if (\class_exists(\PharData::class, false)) {
    /**
     * What `new Phar(…)` and `new PharData(…)` in instrumented code make:
     * the same archive, whose writes (Phar flushes the archive itself, past
     * php-fuzz's file wrapper) are refused outside the allowed folders,
     * with PharException as an archive PHP cannot write fails.
     */
    trait PharWrites
    {
        private function refuseWrite(string $method, ?string $path = null): void
        {
            $path = $path ?? $this->getPath();
            if (SideEffects::refuseWrite('write the archive', $path)) {
                throw new \PharException("unable to open \"$path\" for writing (Phar::$method)");
            }
        }

        #[\ReturnTypeWillChange]
        public function addEmptyDir(...$arguments) { $this->refuseWrite('addEmptyDir'); return parent::addEmptyDir(...$arguments); }
        #[\ReturnTypeWillChange]
        public function addFile(...$arguments) { $this->refuseWrite('addFile'); return parent::addFile(...$arguments); }
        #[\ReturnTypeWillChange]
        public function addFromString(...$arguments) { $this->refuseWrite('addFromString'); return parent::addFromString(...$arguments); }
        #[\ReturnTypeWillChange]
        public function buildFromDirectory(...$arguments) { $this->refuseWrite('buildFromDirectory'); return parent::buildFromDirectory(...$arguments); }
        #[\ReturnTypeWillChange]
        public function buildFromIterator(...$arguments) { $this->refuseWrite('buildFromIterator'); return parent::buildFromIterator(...$arguments); }
        #[\ReturnTypeWillChange]
        public function compress(...$arguments) { $this->refuseWrite('compress'); return parent::compress(...$arguments); }
        #[\ReturnTypeWillChange]
        public function compressFiles(...$arguments) { $this->refuseWrite('compressFiles'); return parent::compressFiles(...$arguments); }
        #[\ReturnTypeWillChange]
        public function convertToData(...$arguments) { $this->refuseWrite('convertToData'); return parent::convertToData(...$arguments); }
        #[\ReturnTypeWillChange]
        public function convertToExecutable(...$arguments) { $this->refuseWrite('convertToExecutable'); return parent::convertToExecutable(...$arguments); }
        #[\ReturnTypeWillChange]
        public function copy(...$arguments) { $this->refuseWrite('copy'); return parent::copy(...$arguments); }
        #[\ReturnTypeWillChange]
        public function decompress(...$arguments) { $this->refuseWrite('decompress'); return parent::decompress(...$arguments); }
        #[\ReturnTypeWillChange]
        public function decompressFiles(...$arguments) { $this->refuseWrite('decompressFiles'); return parent::decompressFiles(...$arguments); }
        #[\ReturnTypeWillChange]
        public function delMetadata(...$arguments) { $this->refuseWrite('delMetadata'); return parent::delMetadata(...$arguments); }
        #[\ReturnTypeWillChange]
        public function delete(...$arguments) { $this->refuseWrite('delete'); return parent::delete(...$arguments); }
        #[\ReturnTypeWillChange]
        public function extractTo(...$arguments)
        {
            $this->refuseWrite('extractTo', \is_string($arguments[0] ?? null) ? $arguments[0] : null);
            return parent::extractTo(...$arguments);
        }
        #[\ReturnTypeWillChange]
        public function offsetSet($localName, $value) { $this->refuseWrite('offsetSet'); parent::offsetSet($localName, $value); }
        #[\ReturnTypeWillChange]
        public function offsetUnset($localName) { $this->refuseWrite('offsetUnset'); parent::offsetUnset($localName); }
        #[\ReturnTypeWillChange]
        public function setAlias(...$arguments) { $this->refuseWrite('setAlias'); return parent::setAlias(...$arguments); }
        #[\ReturnTypeWillChange]
        public function setDefaultStub(...$arguments) { $this->refuseWrite('setDefaultStub'); return parent::setDefaultStub(...$arguments); }
        #[\ReturnTypeWillChange]
        public function setMetadata(...$arguments) { $this->refuseWrite('setMetadata'); return parent::setMetadata(...$arguments); }
        #[\ReturnTypeWillChange]
        public function setSignatureAlgorithm(...$arguments) { $this->refuseWrite('setSignatureAlgorithm'); return parent::setSignatureAlgorithm(...$arguments); }
        #[\ReturnTypeWillChange]
        public function setStub(...$arguments) { $this->refuseWrite('setStub'); return parent::setStub(...$arguments); }
        #[\ReturnTypeWillChange]
        public function stopBuffering(...$arguments) { $this->refuseWrite('stopBuffering'); return parent::stopBuffering(...$arguments); }
    }

    class Phar extends \Phar
    {
        use PharWrites;
    }

    class PharData extends \PharData
    {
        use PharWrites;
    }
}

// ----- side effects: callables that name a hooked function -----

/** Hooked functions a callable may name, lower case, each to its hook. */
const CALLABLE_SINKS = [
    'exec' => true, 'system' => true, 'passthru' => true, 'shell_exec' => true, 'popen' => true,
    'proc_open' => true, 'pcntl_exec' => true, 'mail' => true, 'fsockopen' => true,
    'pfsockopen' => true, 'stream_socket_client' => true, 'socket_connect' => true,
    'socket_sendto' => true, 'curl_exec' => true, 'curl_multi_add_handle' => true,
    'ftp_connect' => true, 'ftp_ssl_connect' => true, 'symlink' => true, 'link' => true,
    'tempnam' => true, 'posix_mkfifo' => true, 'posix_mknod' => true, 'ini_set' => true,
    'ini_alter' => true, 'error_log' => true, 'posix_kill' => true,
];

/**
 * A callable on its way to a function that calls it (`array_map`,
 * `call_user_func`, `usort`, `ob_start`, `Closure::fromCallable`, `new
 * ReflectionFunction`…): one that names a hooked function (`'exec'`,
 * `'\\System'`, `'FFI::cdef'`) becomes its hook, which then refuses and
 * reports as a direct call would; any other is returned unchanged.
 */
function callback($callable)
{
    if (\is_string($callable)) {
        $name = \strtolower(\ltrim($callable, '\\'));
        if (isset(CALLABLE_SINKS[$name])) {
            return __NAMESPACE__ . '\\' . $name;
        }
        if (\strncmp($name, 'ffi::', 5) === 0) {
            return __NAMESPACE__ . '\\FFI::' . \substr($name, 5);
        }
    } elseif (\is_array($callable) && \is_string($callable[0] ?? null) && \strcasecmp(\ltrim($callable[0], '\\'), 'FFI') === 0) {
        return [__NAMESPACE__ . '\\FFI', $callable[1] ?? null];
    }
    return $callable;
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
    return callback($callee);
}

/** An XML document on its way to a parser (the cmplog rendering only). */
function xmlDocument($xml)
{
    if (\is_string($xml)) {
        Xxe::guide($xml);
    }
    return $xml;
}
