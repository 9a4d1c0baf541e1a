<?php
// Calls a php-fuzz target's closure on every file of a corpus, in a loop,
// and prints calls per second. Used by scripts/bench for the `raw` (plain
// PHP) and `instrumented` (instrumented code, coverage collected and reset
// after each call, no engine) columns.
//
// usage: php bench-loop.php TARGET.php CORPUS_DIR SECONDS [collect]
// SECONDS written `xN` runs N passes over the corpus instead (for counting
// instructions with callgrind: the difference of two pass counts).

if ($argc < 4) {
    fwrite(STDERR, "usage: php bench-loop.php TARGET.php CORPUS_DIR SECONDS [collect]\n");
    exit(2);
}
[$_, $targetFile, $corpusDir, $seconds] = $argv;
$collect = ($argv[4] ?? '') === 'collect';

final class BenchConfig
{
    public $target;
    public $allowed = [Exception::class];
    public function setTarget(Closure $t): void { $this->target = $t; }
    public function setMaxLen(int $n): void {}
    public function addDictionary(string $p): void {}
    public function setAllowedExceptions(array $a): void { $this->allowed = $a; }
}
if (!class_exists('PhpFuzzer\Config', false)) {
    class_alias(BenchConfig::class, 'PhpFuzzer\Config');
}
$config = new BenchConfig();
$fuzzer = $config;
require $targetFile;
$target = $config->target;

$inputs = [];
foreach (new RecursiveIteratorIterator(new RecursiveDirectoryIterator($corpusDir, FilesystemIterator::SKIP_DOTS)) as $file) {
    if ($file->isFile() && $file->getFilename()[0] !== '.') {
        $inputs[] = file_get_contents($file->getPathname());
    }
}
sort($inputs);
if (!$inputs) {
    fwrite(STDERR, "no inputs in $corpusDir\n");
    exit(1);
}

set_error_handler(function () { return true; });
$benchArray = class_exists('PhpFuzzBench\Ctx', false);
$calls = 0;
$passes = $seconds[0] === 'x' ? (int) substr($seconds, 1) : 0;
$deadline = hrtime(true) + (int) ((float) ($passes ? 0 : $seconds) * 1e9);
$started = hrtime(true);
$bytes = 0;
do {
    foreach ($inputs as $input) {
        try {
            $target($input);
        } catch (Throwable $e) {
        }
        if ($collect) {
            // What the harness does: take the coverage in its wire form and
            // reset only what the stub design records into.
            if (\PhpFuzz\FuzzingContext::$trace !== '') {
                $bytes += strlen(\PhpFuzz\FuzzingContext::$trace);
                \PhpFuzz\FuzzingContext::$trace = '';
            } elseif ($benchArray && \PhpFuzzBench\Ctx::$a) {
                $bytes += strlen(pack('V*', ...\PhpFuzzBench\Ctx::$a));
                \PhpFuzzBench\Ctx::$a = [];
            } elseif ($benchArray && \PhpFuzzBench\Ctx::$s) {
                $bytes += strlen(implode('', \PhpFuzzBench\Ctx::$s));
                \PhpFuzzBench\Ctx::$s = [];
            } else {
                $bytes += strlen(\PhpFuzz\FuzzingContext::packedEdges());
                \PhpFuzz\FuzzingContext::$edges = [];
                \PhpFuzz\FuzzingContext::$prev = 0;
            }
        }
        $calls++;
    }
} while ($passes ? --$passes > 0 : hrtime(true) < $deadline);
$elapsed = (hrtime(true) - $started) / 1e9;
printf("%.1f\n", $calls / $elapsed);
