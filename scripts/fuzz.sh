#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) with clang, ASan and UBSan, seeds them from the
# StableHLO suites in ../shared/testdata/stablehlo, and runs each for a bounded time.
# Fails if a target crashes, hangs (-timeout), leaks or trips a sanitizer.
#   scripts/fuzz.sh                  # 60 s per target
#   EMBER_FUZZ_SECONDS=600 scripts/fuzz.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=$ROOT/build-fuzz
SECONDS_PER_TARGET=${EMBER_FUZZ_SECONDS:-60}
SUITES=${EMBER_STABLEHLO_TESTDATA:-$ROOT/../shared/testdata/stablehlo}

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (scripts/setup.sh installs it)"; exit 1
fi
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEMBER_FUZZ=ON -DEMBER_BUILD_TESTS=OFF -DEMBER_CUDA=OFF -DEMBER_WERROR=OFF >/dev/null || exit 1
cmake --build "$BUILD" -j"$(nproc)" --target ember_bytecode_reader_fuzzer ember_text_parser_fuzzer \
  || exit 1

# Seeds: every VHLO artifact for the bytecode reader; the interpreter suite, the VHLO text twins
# and a sample of the small testdata files for the text parser (large constant-laden files only
# slow it down).
WORK=$BUILD/run
rm -rf "$WORK"
mkdir -p "$WORK/seeds/bytecode" "$WORK/seeds/text" "$WORK/corpus/bytecode" "$WORK/corpus/text" \
  "$WORK/artifacts"
if [ -d "$SUITES" ]; then
  find "$SUITES/vhlo" -name '*.mlir.bc' -exec cp -t "$WORK/seeds/bytecode" {} + 2>/dev/null
  find "$SUITES/interpret" "$SUITES/vhlo" -name '*.mlir' -exec cp -t "$WORK/seeds/text" {} + 2>/dev/null
  # every fifth of the small testdata files, so the seeds load in seconds, not minutes
  find "$SUITES/testdata" -name '*.mlir' -size -3k | sort | awk 'NR % 5 == 0' |
    xargs -r cp -t "$WORK/seeds/text" 2>/dev/null
else
  echo "fuzz: $SUITES not found: running without seeds"
fi
echo "fuzz: seeds: $(ls "$WORK/seeds/bytecode" | wc -l) bytecode, $(ls "$WORK/seeds/text" | wc -l) text;" \
  "${SECONDS_PER_TARGET}s per target"

status=0
for target in bytecode_reader:bytecode text_parser:text; do
  name=${target%%:*}; kind=${target##*:}
  echo "=== fuzz: ember_${name}_fuzzer ==="
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD/tests/fuzz/ember_${name}_fuzzer" "$WORK/corpus/$kind" "$WORK/seeds/$kind" \
      -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$WORK/artifacts/${name}-" 2>"$WORK/$name.log"
  rc=$?
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)" "$WORK/$name.log"
  grep -E "^#[0-9]+ +DONE" "$WORK/$name.log" | tail -1
  if [ $rc -ne 0 ]; then
    echo "FAIL: ember_${name}_fuzzer exited with $rc; the input is in $WORK/artifacts:"
    grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written" "$WORK/$name.log" | head -20
    status=1
  fi
done
exit $status
