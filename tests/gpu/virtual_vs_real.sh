#!/usr/bin/env bash
# Checks the virtual GPU against the real thing: runs the virtual GPU's own test kernels (the
# NVRTC and LLVM PTX of tests/virtual_gpu/kernels) and a set of cuBLASLt matmuls once through the
# virtual libcuda.so.1 / libcublasLt.so.13 and once through this machine's NVIDIA driver and real
# cuBLASLt, on the same inputs, and compares every output buffer: bit for bit where the ISA
# defines the result, within the documented error for .approx math and where atomics or the
# library's accumulation order decide. Every difference is a rule the virtual GPU has to learn
# (or a tolerance to justify). Needs an NVIDIA GPU and driver.
# Usage: tests/gpu/virtual_vs_real.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
nvidia-smi > /dev/null || { echo "virtual_vs_real: no NVIDIA driver here"; exit 1; }
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON > /dev/null
cmake --build "$BUILD" --target ember_kernel_results ember_virtual_cuda ember_virtual_cublaslt

REAL_CUDA=$(ldconfig -p | awk '/libcuda\.so\.1 / {print $NF; exit}')
REAL_CUBLASLT=$(ldconfig -p | awk '/libcublasLt\.so\.13 / {print $NF; exit}')
REAL_CUBLASLT=${REAL_CUBLASLT:-/usr/local/cuda/lib64/libcublasLt.so.13}
[ -n "$REAL_CUDA" ] || { echo "virtual_vs_real: libcuda.so.1 not found by ldconfig"; exit 1; }
OUT=$(mktemp -d)
RESULTS="$BUILD/tests/gpu/ember_kernel_results"
PTX_DIR="$BUILD/tests/virtual_gpu/llvm_ptx"

echo "=== virtual GPU"
"$RESULTS" --libcuda "$BUILD/virtual_gpu/lib/libcuda.so.1" \
  --libcublaslt "$BUILD/virtual_gpu/lib/libcublasLt.so.13" --llvm-ptx-dir "$PTX_DIR" \
  --out "$OUT/virtual.tsv"
echo "=== real GPU ($REAL_CUDA, $REAL_CUBLASLT)"
# The virtual GPU models an A100 or an H100; make it the same kind as device 0 here.
"$RESULTS" --libcuda "$REAL_CUDA" --libcublaslt "$REAL_CUBLASLT" --llvm-ptx-dir "$PTX_DIR" \
  --out "$OUT/real.tsv"

python3 - "$OUT/virtual.tsv" "$OUT/real.tsv" <<'PY'
import struct, sys

def load(path):
    rows = {}
    for line in open(path):
        name, kind, data = line.rstrip("\n").split("\t")
        rows[name] = (kind, bytes.fromhex(data))
    return rows

def half(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]

def bf16(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]

def decode(kind, data):
    if kind.startswith("f32"):
        return list(struct.unpack("<%df" % (len(data) // 4), data))
    if kind.startswith("f16"):
        return [half(b) for b in struct.unpack("<%dH" % (len(data) // 2), data)]
    if kind.startswith("bf16"):
        return [bf16(b) for b in struct.unpack("<%dH" % (len(data) // 2), data)]
    return None

virtual, real = load(sys.argv[1]), load(sys.argv[2])
failures = 0
for name in sorted(set(virtual) | set(real)):
    if name not in virtual or name not in real:
        print("MISSING %s (only on the %s GPU)" % (name, "virtual" if name in virtual else "real"))
        failures += 1
        continue
    (kind, v), (_, r) = virtual[name], real[name]
    if kind == "exact":
        if v != r:
            diffs = [i for i in range(len(v)) if v[i] != r[i]]
            print("DIFF  %s: %d of %d bytes differ, first at byte %d (virtual %02x, real %02x)"
                  % (name, len(diffs), len(v), diffs[0], v[diffs[0]], r[diffs[0]]))
            failures += 1
        else:
            print("same  %s" % name)
        continue
    tolerance = float(kind.split(":")[1])
    dv, dr = decode(kind, v), decode(kind, r)
    worst = max((abs(a - b) / max(abs(a), abs(b), 1e-30), i) for i, (a, b) in enumerate(zip(dv, dr)))
    if worst[0] > tolerance:
        i = worst[1]
        print("DIFF  %s: element %d virtual %r real %r (relative %.3g > %g)" % (name, i, dv[i], dr[i], worst[0], tolerance))
        failures += 1
    else:
        print("close %s (worst relative difference %.3g <= %g)" % (name, worst[0], tolerance))
print("%d difference(s)" % failures)
sys.exit(1 if failures else 0)
PY
