#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test: the C++ unit and C-ABI tests (ctest), the same
# under AddressSanitizer + UndefinedBehaviorSanitizer (a clang build; the StableHLO corpus walks run
# in the Release build only), and the JAX and TensorFlow tests (pytest) against the installed
# plugin. Exits non-zero if any suite fails. Set EMBER_SKIP_ASAN=1 to skip the
# sanitizer build and EMBER_SKIP_FUZZ=1 to skip the bounded fuzzing run when iterating locally
# (CI sets neither).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=$(nproc)
status=0

"$ROOT/scripts/setup.sh" "$ROOT/build" || exit 1

echo "=== C++ unit and C-ABI tests (Release) ==="
cmake --build "$ROOT/build" -j"$JOBS" || exit 1
(cd "$ROOT/build" && ctest --output-on-failure -j"$JOBS") || status=1

for lib in libpjrt_ember.so libpjrt_ember_core.so; do
  echo "=== exported symbols of $lib ==="
  exported=$(nm -D --defined-only "$ROOT/build/pjrt_plugin/$lib" | awk '$2 != "A" {print $3}' | sort)
  echo "$exported"
  if [ "$exported" != "$(printf 'GetPjrtApi@@VERS_1.0\nTFNPD_InitPlugin@@VERS_1.0')" ]; then
    echo "FAIL: $lib must export GetPjrtApi and TFNPD_InitPlugin and nothing else"; status=1
  fi
done

if [ "${EMBER_SKIP_ASAN:-0}" != "1" ]; then
  echo "=== C++ unit and C-ABI tests under ASan+UBSan ==="
  # Built with clang (setup.sh installs it for the fuzzers too): at -O0 it compiles this code in
  # about three quarters of GCC's CPU time (the heaviest files in 55%), and this build is one of
  # the run's two longest steps. A build folder left by
  # another compiler is started afresh.
  if [ -f "$ROOT/build-asan/CMakeCache.txt" ] &&
     ! grep -q '^CMAKE_CXX_COMPILER:.*clang++' "$ROOT/build-asan/CMakeCache.txt"; then
    rm -rf "$ROOT/build-asan"
  fi
  # (The configure step's own lines name the corpus cases this build leaves to the Release one.)
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$ROOT/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DEMBER_SANITIZE=ON | { grep 'sanitizer build:' || true; } || exit 1
  cmake --build "$ROOT/build-asan" -j"$JOBS" || exit 1
  (cd "$ROOT/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS") || status=1
fi

if [ "${EMBER_SKIP_FUZZ:-0}" != "1" ]; then
  echo "=== fuzzing the program readers (libFuzzer, ${EMBER_FUZZ_SECONDS:-60} s per target) ==="
  "$ROOT/scripts/fuzz.sh" || status=1
fi

echo "=== JAX tests (pytest, Ember next to XLA:CPU) ==="
(cd "$ROOT" && "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider tests/jax) || status=1

# A separate process: TensorFlow fixes its devices once per process. Skipped, saying why, only
# where tensorflow-cpu could not be installed.
echo "=== TensorFlow tests (pytest, Ember next to TensorFlow's CPU device) ==="
(cd "$ROOT" && "$ROOT/.venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests/tensorflow) \
  || status=1

exit $status
