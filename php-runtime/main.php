<?php declare(strict_types=1);

// Entry point of the harness process the php-fuzz engine starts. Requests
// arrive on file descriptor 3, events leave on 4; stdout stays the target's.

require __DIR__ . '/FuzzingContext.php';
require __DIR__ . '/CmpLog.php';
require __DIR__ . '/FuzzedDataProvider.php';
require __DIR__ . '/Config.php';
require __DIR__ . '/Wire.php';
require __DIR__ . '/IncludeInterceptor.php';
require __DIR__ . '/Harness.php';
require __DIR__ . '/CustomMutation.php';

\class_alias(\PhpFuzzer\Config::class, 'PhpFuzzer\Fuzzer');

$requests = \fopen('php://fd/3', 'rb');
$events = \fopen('php://fd/4', 'wb');
if ($requests === false || $events === false) {
    \fwrite(\STDERR, "php-fuzz harness: must be started by php-fuzz (file descriptors 3 and 4 are not open)\n");
    exit(70);
}
\stream_set_read_buffer($requests, 0);
\stream_set_write_buffer($events, 0);

(new \PhpFuzz\Harness(new \PhpFuzz\Wire($requests, $events), __DIR__))->main();
