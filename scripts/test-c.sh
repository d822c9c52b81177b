#!/usr/bin/env bash
# Builds the C ABI, compiles the C tests (C99, -Wall -Wextra -Werror; the header also as C++),
# and runs them against the shared library, the static library, and under ASan+UBSan with leak
# checking. Needs gcc, g++ and libcjson-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-debug}
flag=""; [ "$profile" = release ] && flag="--release"
cargo build --locked --workspace $flag
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
lib="$target/$profile"
out="$target/c"
mkdir -p "$out"
cflags=(-std=c99 -Wall -Wextra -Werror -pedantic -Iinclude)
syslibs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)

echo "== header compiles as C99 and C++"
echo '#include "agent_intercom.h"' | gcc "${cflags[@]}" -x c -fsyntax-only -
echo '#include "agent_intercom.h"' | g++ -std=c++11 -Wall -Wextra -Werror -Iinclude -x c++ -fsyntax-only -

for t in abi vectors asks broker pad hardening; do
  gcc "${cflags[@]}" "tests/c/$t.c" -L"$lib" -lagent_intercom -lcjson -Wl,-rpath,"$lib" -o "$out/${t}_dyn"
  gcc "${cflags[@]}" "tests/c/$t.c" "$lib/libagent_intercom.a" -lcjson "${syslibs[@]}" -o "$out/${t}_static"
  gcc "${cflags[@]}" -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    "tests/c/$t.c" "$lib/libagent_intercom.a" -lcjson "${syslibs[@]}" -o "$out/${t}_asan"
done

for variant in dyn static asan; do
  echo "== C tests ($variant, $profile)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$out/abi_$variant"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$out/vectors_$variant" vectors
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$out/asks_$variant" vectors
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$out/broker_$variant"
  scratch=$(mktemp -d)
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$out/pad_$variant" vectors "$scratch"
  rm -rf "$scratch"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$out/hardening_$variant"
done

echo "== exported symbols all start with aic_"
bad=$(nm -D --defined-only "$lib/libagent_intercom.so" | awk '$2 == "T" {print $3}' | grep -v '^aic_' || true)
if [ -n "$bad" ]; then echo "unprefixed exports:"; echo "$bad"; exit 1; fi
echo "ok: $(nm -D --defined-only "$lib/libagent_intercom.so" | awk '$2 == "T"' | wc -l) exported functions, all aic_"
