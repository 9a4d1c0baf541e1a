//! Every rule each detector applies, with a pattern it leaves alone:
//! `php-fuzz detectors` prints them and docs/detectors.md ("The rules")
//! lists the same. The PHP half (`php-runtime/internal/Detectors/`) applies
//! them; `crates/harness/tests/php/detector_rules.php` checks each, safe
//! forms included.

/// One rule: when it reports, and code it does not report.
#[derive(Debug)]
pub struct Rule {
    /// What reaches which sink, in one line.
    pub reports: &'static str,
    /// A safe pattern, as code or in words.
    pub safe: &'static str,
}

const fn rule(reports: &'static str, safe: &'static str) -> Rule {
    Rule { reports, safe }
}

pub const COMMAND_INJECTION: &[Rule] = &[
    rule(
        "a word of the input stands where the shell looks for a command: first on the line, after ; | && || or a newline, inside $(...), backticks or ( ... )",
        "exec('convert ' . escapeshellarg($file) . ' out.png')",
    ),
    rule(
        "proc_open([...]) and pcntl_exec(): the program itself is the input's",
        "proc_open(['convert', $file, 'out.png'], ...): the input only as an argument",
    ),
    rule(
        "mail()'s fifth argument carries an extra sendmail option of the input's (-php-fuzz-cmd...)",
        "'-f' . $from once filter_var($from, FILTER_VALIDATE_EMAIL) accepted it",
    ),
];

pub const CODE_INJECTION: &[Rule] = &[
    rule(
        "eval() of text that compiles and calls the function php_fuzz_code() the input named",
        "eval('return ' . $expr . ';') once preg_match('~^[0-9+*/(). -]+$~', $expr) accepted it",
    ),
    rule(
        "include/require of a data: path whose decoded payload does the same, or of a php:// path that names the canary",
        "include __DIR__ . '/views/' . basename($name) . '.php'",
    ),
];

pub const OBJECT_INJECTION: &[Rule] = &[rule(
    "unserialize() data would create an object of class PhpFuzzObject, and allowed_classes lets it through",
    "unserialize($data, ['allowed_classes' => false]), or a list of your classes",
)];

pub const CLASS_INJECTION: &[Rule] = &[
    rule(
        "new $x, new (expr): an instance of the class the input named (PhpFuzzClass)",
        "$class = FILTERS[$name] ?? null; if ($class !== null) new $class(): an allow-list",
    ),
    rule(
        "$x::m(), $x(...), call_user_func($x, ...), call_user_func_array: a class or function the input named is called ('PhpFuzzClass::m', ['PhpFuzzClass', 'm'], phpfuzzclass)",
        "in_array($function, ['trim', 'strtoupper'], true) before $function($text)",
    ),
    rule(
        "ReflectionClass::newInstance(), newInstanceArgs(), newInstanceWithoutConstructor() of the class the input named",
        "is_subclass_of($class, Base::class) before (new ReflectionClass($class))->newInstanceWithoutConstructor()",
    ),
    rule(
        "autoload: a lookup is no finding (class_exists, interface_exists, enum_exists, is_subclass_of, is_a, new ReflectionClass, and the autoload they trigger): php-fuzz's autoloader defines PhpFuzzClass, which extends nothing and carries no marker, and only a use of it (above) reports",
        "class_exists($name) && is_subclass_of($name, Annotation::class) before new $name(), or a check of an @Annotation marker in its docblock",
    ),
    rule(
        "a name that climbs to the canary (../PhpFuzzClass, A\\..\\PhpFuzzClass, /PhpFuzzClass) reaches new or :: (only these hand such a name to the autoloaders, which may include a file from outside the library)",
        "preg_match('/^[A-Za-z_][A-Za-z0-9_\\\\]*$/', $name) before new $name() (the names class_exists() accepts)",
    ),
];

pub const PATH_TRAVERSAL: &[Rule] = &[
    rule(
        "a file:// operation's path climbs out of the folder the library built it under (the .. just before the canary, and the parts of the input before them, resolved)",
        "$path = realpath($root . '/' . $name); if ($path !== false && str_starts_with($path, $root . '/')) readfile($path)",
    ),
    rule(
        "the canary stands at the root of an absolute path: an absolute path in the place of a relative one",
        "$root . '/' . basename($name)",
    ),
];

pub const XXE: &[Rule] = &[rule(
    "libxml asks for an external entity or DTD whose system or public id names the canary",
    "simplexml_load_string($xml) without LIBXML_NOENT or LIBXML_DTDLOAD",
)];

pub const SSRF: &[Rule] = &[
    rule(
        "an http, https, ftp or ftps stream, a socket (fsockopen, stream_socket_client, socket_connect) or curl_exec() would connect to the host the input named",
        "in_array(parse_url($url, PHP_URL_HOST), ALLOWED_HOSTS, true) before file_get_contents($url)",
    ),
    rule(
        "a new SoapClient(...)'s request would go to the host the input named",
        "new SoapClient($wsdl, ['location' => SERVICE_URL]): a fixed endpoint",
    ),
];

pub const REGEX_DOS: &[Rule] = &[
    rule(
        "a preg_* call fails with PREG_BACKTRACK_LIMIT_ERROR, PREG_RECURSION_LIMIT_ERROR or PREG_JIT_STACKLIMIT_ERROR (the library may take false for \"no match\"; php-fuzz does not)",
        "/^[a-z0-9]+(?:\\.[a-z0-9]+)*+@/ : no nested quantifier that can match the same text two ways, or a possessive one",
    ),
    rule(
        "one preg_* call runs past the run's timeout",
        "the same, and a length limit on the subject before matching",
    ),
];
