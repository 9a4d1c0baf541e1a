<?php declare(strict_types=1);

// Vectors for \PhpFuzz\FuzzedDataProvider, each derived by hand from the rules
// of LLVM's FuzzedDataProvider.h (see the comment beside each). Run by
// crates/harness/tests/fuzzed_data_provider.rs as `php <this> <provider file>`.

require $argv[1];

use PhpFuzz\FuzzedDataProvider as Fdp;

$checks = 0;
$failures = [];
function check(string $name, $expected, $actual): void
{
    global $checks, $failures;
    $checks++;
    if ($expected !== $actual) {
        $failures[] = "$name: expected " . var_export($expected, true) . ', got ' . var_export($actual, true);
    }
}

// Full int64 range: 8 bytes from the end, last byte most significant, no
// modulo; min + 0x0a09080706050403 wraps to 0x0a09080706050403 - 2^63.
$p = new Fdp("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a");
check('int full range', 0x0a09080706050403 - \PHP_INT_MAX - 1, $p->consumeInt());
check('int full range leaves the front', 2, $p->remainingBytes());
check('bytes after int', "\x01\x02", $p->consumeBytes(5));

// All ones: PHP_INT_MIN + (2^64 - 1) wraps to PHP_INT_MAX.
$p = new Fdp(\str_repeat("\xff", 8));
check('int all ones', \PHP_INT_MAX, $p->consumeInt());

// Range 4 (1..5) needs one byte: 0x07 % 5 = 2, plus 1.
$p = new Fdp("ab\x07");
check('int 1..5', 3, $p->consumeInt(1, 5));
check('int 1..5 used one byte', 2, $p->remainingBytes());

// Range 1000 needs two bytes: 0x03 then 0x02 -> 0x0302 = 770 < 1001.
$p = new Fdp("\x01\x02\x03");
check('int 0..1000', 770, $p->consumeInt(0, 1000));
check('int 0..1000 used two bytes', 1, $p->remainingBytes());

// Modulo: 0xffff = 65535 % 1001 = 470.
$p = new Fdp("\xff\xff");
check('int 0..1000 modulo', 470, $p->consumeInt(0, 1000));

// Range 2^63 + 4 read as unsigned: 0xff80000000000000 = 2^64 - 2^55;
// mod (2^63 + 5) = 2^63 - 2^55 - 5; plus -5.
$p = new Fdp("\x00\x00\x00\x00\x00\x00\x00\x80\xff");
check('int unsigned range', \PHP_INT_MAX - (1 << 55) - 9, $p->consumeInt(-5, \PHP_INT_MAX));

// A range of 0 consumes nothing.
$p = new Fdp("xyz");
check('int min == max', 42, $p->consumeInt(42, 42));
check('int min == max used nothing', 3, $p->remainingBytes());

// Out of data: the minimum.
$p = new Fdp('');
check('int empty', -7, $p->consumeInt(-7, 9));
check('bool empty', false, $p->consumeBool());
check('probability empty', 0.0, $p->consumeProbability());

// Fewer bytes than the range needs: what there is, no padding.
// Range 0..65535 from one byte 0x05 -> 5.
$p = new Fdp("\x05");
check('int short data', 5, $p->consumeInt(0, 65535));

// Bool: one byte from the end, lowest bit.
$p = new Fdp("\x02\x03");
check('bool 0x03', true, $p->consumeBool());
check('bool 0x02', false, $p->consumeBool());

// Probability: 8 bytes as uint64 / (2^64 - 1).
$p = new Fdp(\str_repeat("\xff", 8));
check('probability 1', 1.0, $p->consumeProbability());
$p = new Fdp("\x00\x00\x00\x00\x00\x00\x00\x80");
check('probability half', 9223372036854775808.0 / 18446744073709551615.0, $p->consumeProbability());

// Float in range: min + (max - min) * probability.
$p = new Fdp("\x00\x00\x00\x00\x00\x00\x00\x80");
check('float 10..20', 10.0 + 10.0 * (9223372036854775808.0 / 18446744073709551615.0), $p->consumeFloat(10.0, 20.0));
// A range wider than PHP_FLOAT_MAX: a bool (byte 0x01, true) picks the upper
// half, then min + half + half * probability (all zero bytes -> 0).
$p = new Fdp(\str_repeat("\x00", 8) . "\x01");
check('float huge range', -\PHP_FLOAT_MAX + (\PHP_FLOAT_MAX / 2.0 + \PHP_FLOAT_MAX / 2.0), $p->consumeFloat(-\PHP_FLOAT_MAX, \PHP_FLOAT_MAX));
check('float huge range used 9 bytes', 0, $p->remainingBytes());

// Bytes from the front, cut at what remains.
$p = new Fdp('hello');
check('bytes 3', 'hel', $p->consumeBytes(3));
check('bytes past the end', 'lo', $p->consumeBytes(10));
check('bytes none left', '', $p->consumeBytes(1));

// Random-length string: "\\\\" is one backslash, "\\" + other ends it
// (both consumed); the rest stays.
$p = new Fdp("a\\\\b\\cd");
check('string escapes', "a\\b", $p->consumeString(10));
check('string leaves the rest', 'd', $p->consumeRemainingBytes());
$p = new Fdp('abcdef');
check('string max length', 'abc', $p->consumeString(3));
check('string max length rest', 3, $p->remainingBytes());
// A trailing lone backslash is kept.
$p = new Fdp("ab\\");
check('string trailing backslash', "ab\\", $p->consumeString(10));
// UTF-8: c3 a9 kept; ff -> 7f; e0 80 is not a sequence (e0 needs a0..bf):
// e0 -> 60, 80 -> 00; a surrogate (ed a0 80) is not valid either.
$p = new Fdp("\xc3\xa9\xff\xe0\x80z\xed\xa0\x80");
check('string utf-8 repair', "\xc3\xa9\x7f\x60\x00z\x6d\x20\x00", $p->consumeString(20));
$p = new Fdp("\xf0\x9f\x98\x80");
check('string 4-byte sequence kept', "\xf0\x9f\x98\x80", $p->consumeString(20));

// pickValue: index consumeInt(0, count - 1), keys ignored.
$p = new Fdp("\x05");
check('pick 5 % 3', 'c', $p->pickValue(['x' => 'a', 'y' => 'b', 'z' => 'c']));
$p = new Fdp("\x04");
check('pick 4 % 3', 'b', $p->pickValue(['a', 'b', 'c']));

// Both ends meet: integers and bytes share the same data.
$p = new Fdp("AB\x01");
check('mixed int', 1, $p->consumeInt(0, 255));
check('mixed rest', 'AB', $p->consumeRemainingBytes());

foreach ([
    'consumeInt min > max' => function () { (new Fdp('x'))->consumeInt(2, 1); },
    'consumeFloat min > max' => function () { (new Fdp('x'))->consumeFloat(2.0, 1.0); },
    'consumeBytes negative' => function () { (new Fdp('x'))->consumeBytes(-1); },
    'pickValue empty' => function () { (new Fdp('x'))->pickValue([]); },
] as $name => $bad) {
    try {
        $bad();
        check($name, 'InvalidArgumentException', 'no exception');
    } catch (\InvalidArgumentException $e) {
        check($name, true, true);
    }
}

if ($failures !== []) {
    echo \implode("\n", $failures), "\n";
    exit(1);
}
echo "ok $checks\n";
