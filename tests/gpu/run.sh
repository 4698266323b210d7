#!/usr/bin/env bash
# The one command for a machine with a real NVIDIA GPU (ARCHITECTURE.md section 6).
# - Where Ember builds (scripts/setup.sh's packages are there): scripts/gpu_check.sh (every C++
#   test with CUDA required, a JAX transfer check), then tests/gpu/virtual_vs_real.sh.
# - Where it cannot (a lent GPU machine without the build packages or a network): the checks on a
#   build carried from elsewhere, tests/gpu/carried_check.sh (the known kernels and cuBLASLt on
#   the real driver, compute-sanitizer, Ember's CUDA platform from JAX next to XLA:GPU), then the
#   same kernels on the carried virtual GPU (build/virtual_gpu/lib) and the comparison of the two.
#   Carry: python/jax_plugins/ember, build/tests/gpu/ember_kernel_results,
#   build/tests/virtual_gpu/llvm_ptx, build/virtual_gpu/lib.
# usage: tests/gpu/run.sh [OUT_DIR]      (exit status 1 when a check failed)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT_DIR=${1:-$(mktemp -d)}
mkdir -p "$OUT_DIR"
nvidia-smi -L || { echo "tests/gpu/run.sh: no NVIDIA driver here"; exit 1; }

if command -v llvm-config-19 > /dev/null && [ -d /usr/include/absl ]; then
  echo "=== building here: scripts/gpu_check.sh, then virtual_vs_real.sh"
  status=0
  scripts/gpu_check.sh || status=1
  tests/gpu/virtual_vs_real.sh build-gpu || status=1
  exit $status
fi

echo "=== no build packages here: the checks on the carried build"
status=0
tests/gpu/carried_check.sh "$OUT_DIR" || status=1
echo "=== the same kernels on the carried virtual GPU, compared with the real one"
# The virtual GPU as the same kind of part (sm_90 for Hopper, else sm_80).
major=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | cut -d. -f1)
model=$([ "${major:-8}" -ge 9 ] && echo H100 || echo A100)
# (NVRTC compiles the known kernels for both: the toolkit's.)
nvrtc=$(find /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib64 -name 'libnvrtc.so.13*' \
  2>/dev/null | head -1)
EMBER_VIRTUAL_GPU_MODEL=$model \
  LD_LIBRARY_PATH="$PWD/python/jax_plugins/ember:$(dirname "${nvrtc:-/x/x}"):${LD_LIBRARY_PATH:-}" \
  build/tests/gpu/ember_kernel_results --libcuda build/virtual_gpu/lib/libcuda.so.1 \
  --libcublaslt build/virtual_gpu/lib/libcublasLt.so.13 \
  --llvm-ptx-dir build/tests/virtual_gpu/llvm_ptx \
  --kernel-source tests/virtual_gpu/kernels/known_kernels.cu --out "$OUT_DIR/virtual.tsv" || status=1
python3 tests/gpu/compare_kernel_results.py "$OUT_DIR/virtual.tsv" "$OUT_DIR/real.tsv" \
  | tee "$OUT_DIR/compare.txt" || status=1
exit $status
