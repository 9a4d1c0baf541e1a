#!/bin/bash
# Evaluation wrapper: --use-old-binary runs c4e7dae (the build before a21d36c), else 2fe3a64.
args=(); old=0
for a in "$@"; do if [[ $a == --use-old-binary ]]; then old=1; else args+=("$a"); fi; done
if ((old)); then exec /tmp/bins/php-fuzz-c4e7dae "${args[@]}"; else exec /tmp/bins/php-fuzz-2fe3a64 "${args[@]}"; fi
