#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU: builds with CUDA required, runs every
# C++ test (the stream_executor tests then also exercise the real CUDA platform through
# CreatePlatform("auto")), and the JAX tests on the CUDA platform where they apply.
# Usage: scripts/gpu_check.sh   (needs the CUDA toolkit and a driver)
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi || { echo "gpu_check: no NVIDIA driver here"; exit 1; }
scripts/setup.sh build-gpu || exit 1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON >/dev/null || exit 1
cmake --build build-gpu -j"$(nproc)" || exit 1
status=0
(cd build-gpu && ctest --output-on-failure -j"$(nproc)") || status=1
# Transfers and device queries on GPU devices (jit runs on host devices until the CUDA backend).
EMBER_PLATFORM=cuda .venv/bin/python -c "
import jax, numpy as np
devices = jax.devices('ember'); print(devices, devices[0].memory_stats())
x = np.random.rand(1024, 1024).astype(np.float32)
assert np.array_equal(np.asarray(jax.device_put(x, devices[0])), x)
print('gpu round trip ok')" || status=1
exit $status
