#!/usr/bin/env bash
# Configures and builds build-asan/: clang, Debug, AddressSanitizer + UndefinedBehaviorSanitizer
# (EMBER_SANITIZE) and the libFuzzer targets (EMBER_FUZZ), for scripts/test.sh (the unit tests
# under the sanitizers) and scripts/fuzz.sh (the fuzzers), which share its objects. Idempotent: a
# second call with the same arguments builds nothing. Extra arguments go to `cmake --build`.
#   scripts/sanitizer_build.sh                                        # everything
#   scripts/sanitizer_build.sh --target ember_text_parser_fuzzer      # one target
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=$ROOT/build-asan

if ! command -v clang++ >/dev/null; then
  echo "sanitizer build: clang++ not found (scripts/setup.sh installs it)"; exit 1
fi
# Clang compiles this code at -O0 in about three quarters of GCC's CPU time (the heaviest files
# in 55%), and only clang has libFuzzer. A build folder left by another compiler starts afresh.
if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++' "$BUILD/CMakeCache.txt"
then
  rm -rf "$BUILD"
fi
# (The configure step's own lines name the corpus cases this build leaves to the Release one.)
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DEMBER_SANITIZE=ON -DEMBER_FUZZ=ON | { grep 'sanitizer build:' || true; } || exit 1
cmake --build "$BUILD" -j"$(nproc)" "$@"
