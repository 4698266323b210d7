#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test: the C++ unit and C-ABI tests (ctest), the same
# under AddressSanitizer + UndefinedBehaviorSanitizer (a clang build, scripts/sanitizer_build.sh;
# the StableHLO corpus walks run in the Release build only), a bounded libFuzzer run of the program
# readers from that build (scripts/fuzz.sh), and the JAX and TensorFlow tests (pytest) against the
# installed plugin. Exits non-zero if any suite fails. Set EMBER_SKIP_ASAN=1 to skip the sanitizer
# tests and EMBER_SKIP_FUZZ=1 to skip the fuzzing run when iterating locally (CI sets neither).
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
  # Built with clang, the fuzz targets included (scripts/sanitizer_build.sh).
  "$ROOT/scripts/sanitizer_build.sh" || exit 1
  (cd "$ROOT/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS") || status=1
fi

# The JAX suite keeps about one core busy; the fuzzers and then the TensorFlow tests run beside
# it, so the two cores stay busy. Its output is shown whole when it ends.
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
(cd "$ROOT" && "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider tests/jax) \
  >"$LOGS/jax.log" 2>&1 &
jax_pid=$!

if [ "${EMBER_SKIP_FUZZ:-0}" != "1" ]; then
  echo "=== fuzzing the program readers (libFuzzer, ${EMBER_FUZZ_SECONDS:-60} s per target) ==="
  "$ROOT/scripts/fuzz.sh" || status=1
fi

# A separate process: TensorFlow fixes its devices once per process. Skipped, saying why, only
# where tensorflow-cpu could not be installed.
echo "=== TensorFlow tests (pytest, Ember next to TensorFlow's CPU device) ==="
(cd "$ROOT" && "$ROOT/.venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests/tensorflow) \
  || status=1

echo "=== JAX tests (pytest, Ember next to XLA:CPU; ran beside the two steps above) ==="
wait "$jax_pid" || status=1
cat "$LOGS/jax.log"

exit $status
