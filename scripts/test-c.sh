#!/usr/bin/env bash
# Builds the C ABI, compiles the C tests (C99, -Wall -Wextra -Werror; the header also as C++),
# and runs every test twice against the shared library: as is, and under ASan+UBSan with leak
# checking. The static library is linked once, by the smoke test `abi` (with --gc-sections), to
# prove it is whole: every test linked statically would only repeat the shared runs at the cost
# of 20 links of the whole archive. Needs gcc, g++ and libcjson-dev.
#
# Usage: scripts/test-c.sh [debug|release] [NAME...]
#   NAME is a test of tests/c (the `all` list below): only those are built
#   and run. Without a name, every test. AIC_VECTOR=<substring> runs only
#   the matching cases of the vector runners (vectors, asks, pad, policy), e.g.
#   AIC_VECTOR=ask/mutual bash scripts/test-c.sh debug asks
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-debug}
case $profile in
  debug | release) ;;
  *) echo "usage: $0 [debug|release] [NAME...] (the profile comes first; got \"$profile\")" >&2; exit 2 ;;
esac
all=(abi vectors asks broker client pad hardening team policy boss_policy contract boss_wire worker_store boss_participant_state boss_authority supervision boss_delivery boss_service httpsig envelope)
tests=("${all[@]}")
if [ $# -gt 1 ]; then
  tests=("${@:2}")
  for t in "${tests[@]}"; do
    [[ " ${all[*]} " == *" $t "* ]] || { echo "no C test named \"$t\" (tests: ${all[*]})" >&2; exit 2; }
  done
fi
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

asan=(-g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
for t in "${tests[@]}"; do
  gcc "${cflags[@]}" "tests/c/$t.c" -L"$lib" -lagent_intercom -lcjson -Wl,-rpath,"$lib" -o "$out/${t}_dyn"
  gcc "${cflags[@]}" "${asan[@]}" "tests/c/$t.c" -L"$lib" -lagent_intercom -lcjson -Wl,-rpath,"$lib" \
    -o "$out/${t}_asan"
done

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run() { # test variant: the test's arguments are its own
  case $1 in
    vectors | asks | policy | client) "$out/$1_$2" vectors ;;
    pad)
      scratch=$(mktemp -d)
      "$out/$1_$2" vectors "$scratch"
      rm -rf "$scratch"
      ;;
    *) "$out/$1_$2" ;;
  esac
}
for variant in dyn asan; do
  echo "== C tests ($variant, $profile): ${tests[*]}"
  for t in "${tests[@]}"; do run "$t" "$variant"; done
done

echo "== the static library: the smoke test abi, linked against libagent_intercom.a alone"
gcc "${cflags[@]}" tests/c/abi.c "$lib/libagent_intercom.a" -lcjson "${syslibs[@]}" \
  -Wl,--gc-sections -o "$out/abi_static"
! ldd "$out/abi_static" | grep -q libagent_intercom || { echo "abi_static loads the shared library"; exit 1; }
run abi static

echo "== exported symbols all start with aic_"
bad=$(nm -D --defined-only "$lib/libagent_intercom.so" | awk '$2 == "T" {print $3}' | grep -v '^aic_' || true)
if [ -n "$bad" ]; then echo "unprefixed exports:"; echo "$bad"; exit 1; fi
echo "ok: $(nm -D --defined-only "$lib/libagent_intercom.so" | awk '$2 == "T"' | wc -l) exported functions, all aic_"
