#!/bin/bash
# Usage: bundle-runtime.sh DEST
# Copies php (with its php.ini, extension ini files and extensions) and
# php-fuzz into DEST, with every shared library they load and the dynamic
# loader, and writes launchers DEST/bin/php and DEST/bin/php-fuzz that run
# them through that loader: they need nothing from the machine they run on,
# and DEST may move. PHP_BIN and PHP_FUZZ_BIN choose the binaries.
set -euo pipefail
dest=$1
php_bin=${PHP_BIN:-$(command -v php)}
php_fuzz_bin=${PHP_FUZZ_BIN:-$(command -v php-fuzz)}

mkdir -p "$dest/bin" "$dest/libexec" "$dest/lib" "$dest/php/ext" "$dest/php/conf.d"
cp -L "$php_bin" "$dest/libexec/php"
cp -L "$php_fuzz_bin" "$dest/libexec/php-fuzz"
ext_dir=$("$php_bin" -r 'echo ini_get("extension_dir");')
cp -L "$ext_dir"/*.so "$dest/php/ext/"
ini=$("$php_bin" -r 'echo (string) php_ini_loaded_file();')
if [ -n "$ini" ]; then cp -L "$ini" "$dest/php/php.ini"; else : > "$dest/php/php.ini"; fi
"$php_bin" -r 'echo (string) php_ini_scanned_files();' | tr -d ' ' | tr ',' '\n' |
    while read -r file; do
        if [ -n "$file" ]; then cp -L "$file" "$dest/php/conf.d/"; fi
    done

# Every library the binaries and the extensions load, and the loader.
for binary in "$dest/libexec/php" "$dest/libexec/php-fuzz" "$dest/php/ext"/*.so; do
    ldd "$binary" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'
done | sort -u | while read -r library; do
    cp -L "$library" "$dest/lib/"
done
loader=$(ldd "$dest/libexec/php" | awk '/ld-linux/ { print ($3 ~ /^\//) ? $3 : $1 }' | head -1)
cp -L "$loader" "$dest/lib/ld.so"

cat > "$dest/bin/php" <<'LAUNCHER'
#!/bin/sh
r=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd) || exit 1
PHPRC="$r/php/php.ini" PHP_INI_SCAN_DIR="$r/php/conf.d" exec "$r/lib/ld.so" --library-path "$r/lib" \
    "$r/libexec/php" -d extension_dir="$r/php/ext" "$@"
LAUNCHER
cat > "$dest/bin/php-fuzz" <<'LAUNCHER'
#!/bin/sh
r=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd) || exit 1
exec "$r/lib/ld.so" --library-path "$r/lib" "$r/libexec/php-fuzz" "$@"
LAUNCHER
chmod +x "$dest/bin/php" "$dest/bin/php-fuzz"
"$dest/bin/php" -r 'echo "bundled PHP ", PHP_VERSION, "\n";'
