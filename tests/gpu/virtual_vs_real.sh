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

python3 tests/gpu/compare_kernel_results.py "$OUT/virtual.tsv" "$OUT/real.tsv"
