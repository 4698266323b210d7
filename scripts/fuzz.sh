#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) in the clang ASan+UBSan build (build-asan/, through
# scripts/sanitizer_build.sh: nothing to build when scripts/test.sh has built it), seeds them from
# the StableHLO suites in ../shared/testdata/stablehlo, and runs both targets side by side (one
# core each) for a bounded time. Fails if a target crashes, hangs (-timeout), leaks or trips a
# sanitizer.
#   scripts/fuzz.sh                  # 60 s per target
#   EMBER_FUZZ_SECONDS=600 scripts/fuzz.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=$ROOT/build-asan
SECONDS_PER_TARGET=${EMBER_FUZZ_SECONDS:-60}
SUITES=${EMBER_STABLEHLO_TESTDATA:-$ROOT/../shared/testdata/stablehlo}

"$ROOT/scripts/sanitizer_build.sh" --target ember_bytecode_reader_fuzzer ember_text_parser_fuzzer \
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

targets=(bytecode_reader:bytecode text_parser:text)
pids=()
for target in "${targets[@]}"; do
  name=${target%%:*}; kind=${target##*:}
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD/tests/fuzz/ember_${name}_fuzzer" "$WORK/corpus/$kind" "$WORK/seeds/$kind" \
      -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$WORK/artifacts/${name}-" 2>"$WORK/$name.log" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  name=${targets[$i]%%:*}
  wait "${pids[$i]}"
  rc=$?
  echo "=== fuzz: ember_${name}_fuzzer ==="
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)" "$WORK/$name.log"
  grep -E "^#[0-9]+ +DONE" "$WORK/$name.log" | tail -1
  if [ $rc -ne 0 ]; then
    echo "FAIL: ember_${name}_fuzzer exited with $rc; the input is in $WORK/artifacts:"
    grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written" "$WORK/$name.log" | head -20
    status=1
  fi
done
exit $status
