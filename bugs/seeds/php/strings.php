<?php
$name = "World";
$greeting = "Hello, {$name}! Today is ${name}.";
$heredoc = <<<EOT
  Name: $name
  Items: {$items[0]}
  EOT;
$nowdoc = <<<'EOT'
raw $text
EOT;
printf('%s %d', $greeting, strlen($heredoc . $nowdoc));
