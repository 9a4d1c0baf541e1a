<?php declare(strict_types=1);

// Entry point of the harness process the php-fuzz engine starts:
// `php main.php REQUEST_FD EVENT_FD`. Requests arrive on the first
// descriptor, events leave on the second (both high-numbered, out of a
// target's way); stdout stays the target's.

require __DIR__ . '/FuzzingContext.php';
require __DIR__ . '/CmpLog.php';
require __DIR__ . '/FuzzedDataProvider.php';
require __DIR__ . '/Config.php';
require __DIR__ . '/Wire.php';
require __DIR__ . '/IncludeInterceptor.php';
require __DIR__ . '/NetworkInterceptor.php';
require __DIR__ . '/Detectors.php';
require __DIR__ . '/SideEffects.php';
require __DIR__ . '/DetectorSetup.php';
foreach (['CommandInjection', 'CodeInjection', 'ObjectInjection', 'ClassInjection', 'PathTraversal', 'Xxe', 'Ssrf', 'RegexDos'] as $detector) {
    require __DIR__ . '/Detectors/' . $detector . '.php';
}
require __DIR__ . '/Sinks.php';
require __DIR__ . '/SinksStrict.php';
require __DIR__ . '/ProblemText.php';
require __DIR__ . '/Harness.php';
require __DIR__ . '/ForkServer.php';
require __DIR__ . '/FatalStack.php';
require __DIR__ . '/CustomMutation.php';
foreach (['FuzzTest', 'Fuzzing', 'FuzzMethod', 'Replay', 'Bootstrap', 'HookMethods', 'FuzzTarget'] as $class) {
    require __DIR__ . '/PHPUnit/' . $class . '.php';
}

// Typed arguments (docs/autofuzz.md), loaded only by targets that use them.
require __DIR__ . '/arguments-autoload.php';

\class_alias(\PhpFuzzer\Config::class, 'PhpFuzzer\Fuzzer');

$wire = \PhpFuzz\Wire::open((int) ($argv[1] ?? 3), (int) ($argv[2] ?? 4));
if ($wire === null) {
    \fwrite(\STDERR, "php-fuzz harness: must be started by php-fuzz (its pipe descriptors are not open)\n");
    exit(70);
}

(new \PhpFuzz\Harness($wire, __DIR__))->main();
