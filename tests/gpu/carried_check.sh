#!/usr/bin/env bash
# The real-GPU checks for a GPU machine that cannot build Ember (no Abseil, Protobuf or LLVM
# development packages, no network): it runs what was built elsewhere and carried over:
#   python/jax_plugins/ember/            the plugin package (the plugin and the libraries it ships)
#   build/tests/gpu/ember_kernel_results  the kernel runner of virtual_vs_real.sh
#   build/tests/virtual_gpu/llvm_ptx/     the LLVM PTX of the known kernels
# and writes into OUT_DIR:
#   gpu.txt      the GPU, driver and toolkit found
#   real.tsv     the known kernels and cuBLASLt matmuls on the real driver; compare it with the
#                virtual GPU's on the build machine: tests/gpu/compare_kernel_results.py
#   sanitizer.txt compute-sanitizer's memcheck and racecheck over the same kernels (where it works)
#   platform.txt tests/gpu/cuda_platform_check.py: Ember's CUDA platform from JAX, next to XLA:GPU
# usage: tests/gpu/carried_check.sh OUT_DIR        (exit status 1 when a check failed)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT_DIR=${1:?usage: tests/gpu/carried_check.sh OUT_DIR}
mkdir -p "$OUT_DIR"
PY=${PYTHON:-python3}
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv | tee "$OUT_DIR/gpu.txt" \
  || { echo "carried_check: no NVIDIA driver here"; exit 1; }

# The CUDA libraries the runner dlopens by name: NVRTC and cuBLASLt, from the toolkit or from the
# NVIDIA Python wheels, whichever this machine has.
find_lib() {
  find /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu \
    $("$PY" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
    -name "$1" 2>/dev/null | head -1
}
NVRTC=$(find_lib 'libnvrtc.so.13*')
CUBLASLT=$(find_lib 'libcublasLt.so.13*')
CUDA_DRIVER=$(ldconfig -p | awk '/libcuda\.so\.1 / {print $NF; exit}')
echo "libcuda: $CUDA_DRIVER  nvrtc: $NVRTC  cublasLt: $CUBLASLT" | tee -a "$OUT_DIR/gpu.txt"
export LD_LIBRARY_PATH="$PWD/python/jax_plugins/ember:$(dirname "${NVRTC:-/x}"):${LD_LIBRARY_PATH:-}"

RUNNER=(build/tests/gpu/ember_kernel_results --libcuda "${CUDA_DRIVER:-libcuda.so.1}"
        --llvm-ptx-dir build/tests/virtual_gpu/llvm_ptx
        --kernel-source tests/virtual_gpu/kernels/known_kernels.cu)
echo "=== known kernels and cuBLASLt on the real driver"
timeout 300 "${RUNNER[@]}" --libcublaslt "$CUBLASLT" --out "$OUT_DIR/real.tsv" || status=1

echo "=== compute-sanitizer over the same kernels"
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "${RUNNER[@]}" --out /dev/null \
      > "$OUT_DIR/sanitizer_$tool.txt" 2>&1
    rc=$?
    echo "$tool: exit $rc, $(grep -c 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' "$OUT_DIR/sanitizer_$tool.txt") clean summary line(s)" \
      | tee -a "$OUT_DIR/sanitizer.txt"
    tail -3 "$OUT_DIR/sanitizer_$tool.txt" >> "$OUT_DIR/sanitizer.txt"
    [ "$rc" = 0 ] || status=1
  done
else
  echo "compute-sanitizer: not installed here" | tee "$OUT_DIR/sanitizer.txt"
fi

echo "=== Ember's CUDA platform from JAX"
# Unbuffered so a run cut short still shows how far it got.
PYTHONUNBUFFERED=1 EMBER_PLATFORM=cuda JAX_PLATFORMS=ember,cuda PYTHONPATH="$PWD/python:${PYTHONPATH:-}" \
  timeout 300 "$PY" tests/gpu/cuda_platform_check.py 2>&1 | tee "$OUT_DIR/platform.txt" || status=1
exit $status
