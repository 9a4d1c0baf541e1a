<?php
$i = 0;
while ($i < 10) {
    $i++;
    if ($i % 2 === 0) {
        continue;
    } elseif ($i > 7) {
        break;
    } else {
        echo $i;
    }
}
do {
    $i--;
} while ($i > 0);
for ($j = 0, $k = 10; $j < $k; $j++, $k--) {
    switch ($j) {
        case 1:
        case 2:
            echo 'low';
            break;
        default:
            echo 'high';
    }
}
