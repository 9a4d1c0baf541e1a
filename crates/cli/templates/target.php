<?php
/**
 * php-fuzz target for {{package}}.
 *
 * php-fuzz calls the closure below with generated inputs, steers them toward
 * code no input has reached yet, and saves every input that goes wrong: an
 * uncaught error, a warning or notice, a failed assert(), a timeout, memory
 * exhaustion, exit().
 *
 *   composer fuzz                                  fuzz (Ctrl-C stops)
 *   composer fuzz -- --max-time 60                 fuzz for a minute
 *   php-fuzz run-single fuzz/{{name}}/target.php fuzz/{{name}}/crashes
 *                                                  replay what was found
 *
 * New inputs that reach new code go to fuzz/{{name}}/corpus/ (put example
 * inputs there too: they are the seeds), crashes to fuzz/{{name}}/crashes/.
 *
 * @var PhpFuzzer\Config $config
 */

require __DIR__ . '/../../vendor/autoload.php';

// Namespaces of this project (composer.json): {{namespaces}}

$config->setTarget(function (string $input): void {
{{call}}
});

// Exceptions your code throws on bad input on purpose are not bugs; list them
// (the default is [Exception::class]: any Error, warning or assert() failure
// is a bug):
// $config->setAllowedExceptions([\InvalidArgumentException::class]);

// The longest input to try, in bytes.
$config->setMaxLen(4096);

// Tokens of your input format help reach deeper code: see {{name}}.dict.
$config->addDictionary(__DIR__ . '/{{name}}.dict');
