#!/bin/bash -eu
# ClusterFuzzLite build for a PHP library fuzzed with php-fuzz. Puts into $OUT
# the php-fuzz runtime (php-fuzz and php with their libraries), the project
# with its vendor/, and for each fuzz/NAME/target.php a wrapper NAME_fuzzer
# (plus NAME_fuzzer.dict and NAME_fuzzer_seed_corpus.zip when there is one).
runtime=${PHP_FUZZ_RUNTIME:-/php-fuzz-runtime}
project=${PROJECT_DIR:-$PWD}

rm -rf "$OUT/php-fuzz-runtime" "$OUT/project"
cp -a "$runtime" "$OUT/php-fuzz-runtime"
mkdir -p "$OUT/project"
tar -C "$project" --exclude=./.git -cf - . | tar -C "$OUT/project" -xf -
if [ ! -f "$OUT/project/vendor/autoload.php" ]; then
    (cd "$OUT/project" && "$OUT/php-fuzz-runtime/bin/php" /opt/composer.phar install \
        --no-dev --no-interaction --no-progress)
fi

for target in "$OUT"/project/fuzz/*/target.php; do
    dir=$(dirname "$target")
    name=$(basename "$dir")
    "$OUT/php-fuzz-runtime/bin/php-fuzz" libfuzzer-wrapper "$target" --out "$OUT/${name}_fuzzer"
    if [ -f "$dir/$name.dict" ]; then
        cp "$dir/$name.dict" "$OUT/${name}_fuzzer.dict"
    fi
    if [ -d "$dir/corpus" ] && [ -n "$(find "$dir/corpus" -type f ! -name '.*' | head -1)" ]; then
        rm -f "$OUT/${name}_fuzzer_seed_corpus.zip"
        (cd "$dir/corpus" && zip -q -r "$OUT/${name}_fuzzer_seed_corpus.zip" . -x '.*')
    fi
done
