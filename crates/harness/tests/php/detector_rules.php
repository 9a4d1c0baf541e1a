<?php declare(strict_types=1);
// The detectors' rules, case by case, in PHP (crates/harness/tests/detector_rules.rs
// runs it): what each one reports, and what it must not. Prints one line per
// failed case and exits 1 if any failed.

$internal = $argv[1];
foreach (['Wire', 'CmpLog', 'IncludeInterceptor', 'Detectors', 'SideEffects'] as $file) {
    require "$internal/$file.php";
}
foreach (glob("$internal/Detectors/*.php") as $detector) {
    require $detector;
}

use PhpFuzz\Detectors;
use PhpFuzz\Detectors\CommandInjection;
use PhpFuzz\Detectors\PathTraversal;
use PhpFuzz\Detectors\ShellWords;

$failures = 0;
function check(string $what, $got, $want): void
{
    global $failures;
    if ($got !== $want) {
        $failures++;
        echo "FAIL $what: got " . var_export($got, true) . ', want ' . var_export($want, true) . "\n";
    }
}

// Reports are recorded, not thrown as in a run: the reporter says "no run".
$reported = [];
Detectors::enable(Detectors::NAMES, $internal . '/');
Detectors::$reporter = function (int $status, string $class, string $message) use (&$reported): bool {
    $reported[] = "$class: $message";
    return false;
};
function reports(callable $call): array
{
    global $reported;
    $reported = [];
    $call();
    return $reported;
}

// ----- shell words -----
$commands = [
    'convert a.png out.png' => ['convert'],
    'convert ;php-fuzz-cmd; x' => ['convert', 'php-fuzz-cmd', 'x'],
    'ls | php-fuzz-cmd' => ['ls', 'php-fuzz-cmd'],
    'ls && php-fuzz-cmd || b' => ['ls', 'php-fuzz-cmd', 'b'],
    "ls\nphp-fuzz-cmd" => ['ls', 'php-fuzz-cmd'],
    'ls $(php-fuzz-cmd)' => ['ls', 'php-fuzz-cmd'],
    'ls "$(php-fuzz-cmd)"' => ['ls', 'php-fuzz-cmd'],
    'ls `php-fuzz-cmd`' => ['ls', 'php-fuzz-cmd'],
    "ls 'a;php-fuzz-cmd'" => ['ls'],
    'ls "a;php-fuzz-cmd"' => ['ls'],
    'ls a\\;php-fuzz-cmd' => ['ls'],
    'A=1 B=2 php-fuzz-cmd x' => ['php-fuzz-cmd'],
    '>out php-fuzz-cmd' => ['php-fuzz-cmd'],
    'ls > php-fuzz-cmd' => ['ls'],
    "'php-fuzz-cmd' x" => ['php-fuzz-cmd'],
    '(php-fuzz-cmd)' => ['php-fuzz-cmd'],
    'sudo php-fuzz-cmd' => ['sudo', 'php-fuzz-cmd'],
    'ls # ; php-fuzz-cmd' => ['ls'],
    'ls #x' => ['ls'],
];
foreach ($commands as $line => $want) {
    check("commands of `$line`", (new ShellWords($line))->commands(), $want);
}
check('words of a quoted argument', (new ShellWords("cp 'a b' \"c\"d e"))->words(), ['cp', 'a b', 'cd', 'e']);

// ----- command-injection -----
check('canary as a command', count(reports(fn () => CommandInjection::shell('exec', 'convert ;php-fuzz-cmd;'))), 1);
check('canary quoted by escapeshellarg', reports(fn () => CommandInjection::shell('exec', 'convert ' . escapeshellarg(';php-fuzz-cmd;'))), []);
check('canary as an argument', reports(fn () => CommandInjection::shell('exec', 'echo php-fuzz-cmd')), []);
check('canary as a path to a command', count(reports(fn () => CommandInjection::shell('exec', '/tmp/php-fuzz-cmd'))), 1);
check('program of proc_open([…])', count(reports(fn () => CommandInjection::program('proc_open', 'php-fuzz-cmd'))), 1);
check('mail: an option of the input', count(reports(fn () => CommandInjection::mailParameters('-fa@b.c -php-fuzz-cmd'))), 1);
check('mail: the canary inside the sender', reports(fn () => CommandInjection::mailParameters('-fphp-fuzz-cmd@b.c')), []);
check('mail: an escaped sender', reports(fn () => CommandInjection::mailParameters('-f' . escapeshellarg('a@b.c -php-fuzz-cmd'))), []);

// ----- code-injection -----
use PhpFuzz\Detectors\CodeInjection;
check('eval of a call', count(reports(fn () => CodeInjection::evalCode('return php_fuzz_code();'))), 1);
check('eval of a call, spaced and qualified', count(reports(fn () => CodeInjection::evalCode('return \\php_fuzz_code /* */ ( );'))), 1);
check('eval of the name in a string', reports(fn () => CodeInjection::evalCode('return "php_fuzz_code()";')), []);
check('eval of code that does not compile', reports(fn () => CodeInjection::evalCode('return php_fuzz_code(;')), []);
check('eval of a method of that name', reports(fn () => CodeInjection::evalCode('return $o->php_fuzz_code2();')), []);
check('include of data:', count(reports(fn () => CodeInjection::includePath('data:,<?php php_fuzz_code();'))), 1);
check('include of base64 data:', count(reports(fn () => CodeInjection::includePath('data:text/plain;base64,' . base64_encode('<?php php_fuzz_code();')))), 1);
check('include of php://filter with the canary', count(reports(fn () => CodeInjection::includePath('php://filter/resource=php_fuzz_code'))), 1);
check('include of a file', reports(fn () => CodeInjection::includePath('/srv/php_fuzz_code.php')), []);

// ----- object-injection -----
use PhpFuzz\Detectors\ObjectInjection;
$object = 'O:13:"PhpFuzzObject":0:{}';
check('unserialize of the canary object', count(reports(fn () => ObjectInjection::unserialize($object, []))), 1);
check('nested in an array', count(reports(fn () => ObjectInjection::unserialize("a:1:{i:0;$object}", []))), 1);
check('allowed_classes => true', count(reports(fn () => ObjectInjection::unserialize($object, ['allowed_classes' => true]))), 1);
check('allowed_classes => false', reports(fn () => ObjectInjection::unserialize($object, ['allowed_classes' => false])), []);
check('allowed_classes without it', reports(fn () => ObjectInjection::unserialize($object, ['allowed_classes' => ['Foo']])), []);
check('the name in a string', reports(fn () => ObjectInjection::unserialize('s:13:"PhpFuzzObject";', [])), []);
check('broken data', reports(fn () => ObjectInjection::unserialize('O:13:"PhpFuzzObject":0:{', [])), []);

// ----- class-injection -----
use PhpFuzz\Detectors\ClassInjection;
check('the class', count(reports(fn () => ClassInjection::className('\\PhpFuzzClass'))), 1);
check('another class', reports(fn () => ClassInjection::className('App\\PhpFuzzClass')), []);
check('a name that climbs to it', count(reports(fn () => ClassInjection::className('../PhpFuzzClass'))), 1);
check('a namespace that climbs to it', count(reports(fn () => ClassInjection::className('App\\..\\PhpFuzzClass'))), 1);
check('an absolute path to it', count(reports(fn () => ClassInjection::className('/PhpFuzzClass'))), 1);
check('a folder below', reports(fn () => ClassInjection::className('docs/PhpFuzzClass')), []);
check('an object', reports(fn () => ClassInjection::className(new stdClass())), []);
check('a function name', count(reports(fn () => ClassInjection::callee('phpfuzzclass'))), 1);
check('a static method string', count(reports(fn () => ClassInjection::callee('PhpFuzzClass::make'))), 1);
check('an array callable', count(reports(fn () => ClassInjection::callee(['PhpFuzzClass', 'make']))), 1);
check('a closure', reports(fn () => ClassInjection::callee(fn () => 1)), []);

// Lookups: the autoload defines the canary, silently; only a use reports.
spl_autoload_register([ClassInjection::class, 'autoload'], true, true);
check('an autoload of another class', reports(fn () => ClassInjection::autoload('App\\Filter')), []);
check('an autoload that climbs to it', count(reports(fn () => ClassInjection::autoload('x/../PhpFuzzClass'))), 1);
check('a subclass check before it exists', reports(fn () => is_subclass_of('PhpFuzzClass', Countable::class)), []);
check('class_exists() of it', reports(fn () => check('it exists', class_exists('phpfuzzclass'), true)), []);
check('is_a() of it', reports(fn () => check('not Countable', is_a('PhpFuzzClass', Countable::class, true), false)), []);
check('interface_exists() of it', reports(fn () => interface_exists('PhpFuzzClass')), []);
require "$internal/Sinks.php";
$reflection = fn (string $class) => new PhpFuzz\Sink\ReflectionClass($class);
check('a reflection of it', reports(fn () => check('no marker', strpos((string) $reflection('PhpFuzzClass')->getDocComment(), '@Annotation'), false)), []);
check('new of it', count(reports(fn () => new PhpFuzzClass())), 1);
check('a static call of it', count(reports(fn () => PhpFuzzClass::create())), 1);
check('newInstanceWithoutConstructor()', count(reports(fn () => $reflection('PhpFuzzClass')->newInstanceWithoutConstructor())), 1);
check('newInstance()', count(reports(fn () => $reflection('PhpFuzzClass')->newInstance())) > 0, true);
check('newInstanceArgs()', count(reports(fn () => $reflection('\\PhpFuzzClass')->newInstanceArgs([]))) > 0, true);
check('newInstance() of another class', reports(fn () => $reflection(ArrayObject::class)->newInstance()), []);
check('get_class of a reflection', $reflection('PhpFuzzClass')->getName(), 'PhpFuzzClass');

// ----- xxe -----
use PhpFuzz\Detectors\Xxe;
check('an entity the input named', count(reports(fn () => Xxe::load(null, 'file:///srv/php-fuzz-xxe'))), 1);
check('a public id', count(reports(fn () => Xxe::load('-//php-fuzz-xxe//EN', 'x.dtd'))), 1);
check('another entity is loaded as asked', Xxe::load(null, '/srv/schema.dtd'), '/srv/schema.dtd');
@libxml_disable_entity_loader(true);
check('loading disabled by the library', reports(fn () => Xxe::load(null, 'php-fuzz-xxe')), []);
check('loading disabled: nothing loaded', Xxe::load(null, '/srv/schema.dtd'), null);
@libxml_disable_entity_loader(false);

// ----- path-traversal -----
$escapes = [
    '/srv/tpl/../php-fuzz-traversal.html' => true,
    '/srv/tpl/../../php-fuzz-traversal' => true,
    '/srv/tpl/sub/../../../php-fuzz-traversal' => true,
    '../php-fuzz-traversal' => true,
    'tpl/./../php-fuzz-traversal' => true,
    '/php-fuzz-traversal' => true,
    '/srv/tpl/php-fuzz-traversal.html' => false,
    '/srv/src/../tpl/php-fuzz-traversal.html' => false,
    // The `..` just before the canary count as the input's: a library that
    // hands the file system a `..` at all has no check that would stop more.
    '/srv/tpl/sub/../php-fuzz-traversal' => true,
    '/srv/tpl/sub/../a/php-fuzz-traversal' => false,
    '/etc/php-fuzz-traversal' => false,
    'php-fuzz-traversal' => false,
];
foreach ($escapes as $path => $escaped) {
    check("escape of $path", PathTraversal::escape($path) !== null, $escaped);
}
// The parts the input holds are the input's too: the library built the
// path under what comes before them.
$withInput = [
    ['/x/templates/docs/../php-fuzz-traversal.html', 'docs/../php-fuzz-traversal.html', false],
    ['http:%3E/../php-fuzz-traversal', 'http:%3E/../php-fuzz-traversal', false],
    ['/x/templates/../php-fuzz-traversal.html', '....//php-fuzz-traversal.html', true],
    ['/x/templates/a/../../php-fuzz-traversal', 'a/../../php-fuzz-traversal', true],
];
foreach ($withInput as [$path, $input, $escaped]) {
    check("escape of $path from $input", PathTraversal::escape($path, $input) !== null, $escaped);
}

// ----- ssrf -----
use PhpFuzz\Detectors\Ssrf;
check('a URL to the canary host', count(reports(fn () => Ssrf::address('file_get_contents', 'http://php-fuzz.example/x'))), 1);
check('user info before the host', count(reports(fn () => Ssrf::address('fopen', 'http://good.com@PHP-FUZZ.EXAMPLE./'))), 1);
check('a transport address', count(reports(fn () => Ssrf::address('fsockopen', 'tcp://php-fuzz.example:80'))), 1);
check('a bare host', count(reports(fn () => Ssrf::address('fsockopen', 'php-fuzz.example'))), 1);
check('the canary in the path', reports(fn () => Ssrf::address('fopen', 'http://good.com/php-fuzz.example')), []);
check('a subdomain of it', reports(fn () => Ssrf::address('fopen', 'http://php-fuzz.example.good.com/')), []);

// ----- regex-dos -----
use PhpFuzz\Detectors\RegexDos;
preg_match('/^(\w+\s?)*$/', str_repeat('a', 40) . '!');
check('a backtrack limit', count(reports(fn () => RegexDos::failed('preg_match'))), 1);
preg_match('/^\w+$/', str_repeat('a', 40) . '!');
check('a linear regex', reports(fn () => RegexDos::failed('preg_match')), []);
@preg_match('/(/', 'x');
check('a broken pattern', reports(fn () => RegexDos::failed('preg_match')), []);
preg_filter('/x/', 'y', 'abc');
check('preg_filter without a match', reports(fn () => RegexDos::failed('preg_filter')), []);

// ----- off -----
Detectors::enable([], $internal . '/');
check('a detector that is off', reports(fn () => CommandInjection::shell('exec', ';php-fuzz-cmd;')), []);

exit($failures === 0 ? 0 : 1);
