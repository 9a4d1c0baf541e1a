<?php
function fib(int $n): int
{
    if ($n < 2) {
        return $n;
    }
    return fib($n - 1) + fib($n - 2);
}

$square = fn($x) => $x * $x;
$sum = function (array $xs) use (&$total) {
    foreach ($xs as $k => $x) {
        $total += $x;
    }
    return $total;
};
echo fib(10), $square(3), $sum([1, 2, 3]);
