#!/usr/bin/env bash
# Runs JAX's own test files against Ember (JAX_PLATFORMS=ember,cpu: Ember is the device under
# test, XLA:CPU is there for the tests that compare with it or need a CPU device) and prints
# per-file pass / fail / skip counts and the pass rate over collected, non-skipped cases.
# Not part of CI (hours on 2 cores).
#
# Usage: scripts/jax_suite.sh JAX_TREE [TEST_FILE ...]
#   JAX_TREE   a checkout (or extract) of jax-ml/jax at the tag of the installed jax, holding
#              tests/; e.g. /work/jax-src. Its jax/ folder, if any, is not put on the path: the
#              installed jax (with jax._src.internal_test_util) is what runs.
#   TEST_FILE  file names under JAX_TREE/tests (default: the issue-12 list below).
# Environment: PYTHON (default .venv/bin/python; needs jax, pytest and absl-py from
# python/requirements.txt), EMBER_PJRT_PLUGIN_PATH (default build/pjrt_plugin/libpjrt_ember.so),
# JAX_SUITE_OUT (default build/jax_suite: JUnit XML and logs per file, failures.txt, summary.txt),
# JAX_SUITE_TIMEOUT (seconds per file, default 5400), EMBER_HOST_DEVICE_COUNT (default 8, for
# the multi-device files), JAX_NUM_GENERATED_CASES (JAX's default when unset).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
if [ $# -lt 1 ] || [ ! -d "$1/tests" ]; then
  echo "usage: $0 JAX_TREE [TEST_FILE ...]   (JAX_TREE must contain tests/)" >&2
  exit 2
fi
TREE=$(cd "$1" && pwd)
shift
FILES=("$@")
if [ ${#FILES[@]} -eq 0 ]; then
  FILES=(lax_test.py lax_control_flow_test.py lax_autodiff_test.py)
  for f in "$TREE"/tests/lax_numpy*_test.py; do FILES+=("$(basename "$f")"); done
  FILES+=(random_lax_test.py nn_test.py linalg_test.py fft_test.py lax_scipy_test.py api_test.py
          debugging_primitives_test.py pmap_test.py shard_map_test.py)
fi
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
OUT=${JAX_SUITE_OUT:-$ROOT/build/jax_suite}
mkdir -p "$OUT"
export EMBER_PJRT_PLUGIN_PATH=${EMBER_PJRT_PLUGIN_PATH:-$ROOT/build/pjrt_plugin/libpjrt_ember.so}
export JAX_PLATFORMS=ember,cpu
export EMBER_HOST_DEVICE_COUNT=${EMBER_HOST_DEVICE_COUNT:-8}
export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
if ! "$PYTHON" -c "import absl.testing, jax, pytest" 2>/dev/null; then
  echo "$PYTHON lacks jax, pytest or absl-py: run scripts/setup.sh (python/requirements.txt)" >&2
  exit 2
fi

for f in "${FILES[@]}"; do
  name=${f%.py}
  echo "=== $f ($(date +%H:%M:%S))"
  # One pytest process per file: a crash ends that file only. JAX's tests read flags through
  # absl; pytest runs them as unittest cases.
  (cd "$TREE/tests" && timeout "${JAX_SUITE_TIMEOUT:-5400}" "$PYTHON" -m pytest -q -p no:cacheprovider \
     -o junit_family=xunit1 --junitxml="$OUT/$name.xml" "$f" >"$OUT/$name.log" 2>&1)
  echo "    exit $? ($(tail -1 "$OUT/$name.log"))"
done

"$PYTHON" - "$OUT" "${FILES[@]}" <<'EOF'
import sys, pathlib, xml.etree.ElementTree as ET
out = pathlib.Path(sys.argv[1])
rows, failures = [], []
tot = [0, 0, 0]
for f in sys.argv[2:]:
    name = f[:-3] if f.endswith(".py") else f
    xml = out / f"{name}.xml"
    if not xml.exists():
        rows.append(f"{f:40s} {'no result (crashed or timed out: see ' + name + '.log)'}")
        continue
    passed = failed = skipped = 0
    for case in ET.parse(xml).iter("testcase"):
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            failed += 1
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            failures.append(f"{f}::{case.get('classname', '').split('.')[-1]}::{case.get('name')}: "
                            f"{message[0][:300] if message else ''}")
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    ran = passed + failed
    rows.append(f"{f:40s} {passed:6d} passed {failed:5d} failed {skipped:6d} skipped"
                f"   {100.0 * passed / ran if ran else 100.0:6.2f}%")
    tot[0] += passed; tot[1] += failed; tot[2] += skipped
ran = tot[0] + tot[1]
rows.append(f"{'TOTAL':40s} {tot[0]:6d} passed {tot[1]:5d} failed {tot[2]:6d} skipped"
            f"   {100.0 * tot[0] / ran if ran else 100.0:6.2f}%")
(out / "summary.txt").write_text("\n".join(rows) + "\n")
(out / "failures.txt").write_text("\n".join(failures) + "\n")
print("\n".join(rows))
print(f"failures listed in {out / 'failures.txt'}")
EOF
