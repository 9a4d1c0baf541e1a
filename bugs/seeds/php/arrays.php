<?php
[$a, [$b, $c]] = [1, [2, 3]];
['x' => $x, 'y' => $y] = ['x' => 1, 'y' => 2];
$list = array_map(static fn(int $v): int => $v << 1, range(1, 5));
$merged = [...$list, ...['k' => 'v']];
list(, $second) = $list;
unset($merged['k']);
$copy = $list + $merged;
