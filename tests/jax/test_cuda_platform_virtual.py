"""Ember's CUDA platform from JAX on the virtual GPU (tests/virtual_gpu): the check a real GPU
machine runs too (tests/gpu/carried_check.sh runs tests/gpu/cuda_platform_check.py there), so the
check itself cannot rot between the sessions that have a GPU. A separate process: the platform is
chosen once per process (EMBER_PLATFORM=cuda)."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VIRTUAL_GPU = ROOT / "build" / "virtual_gpu" / "lib"
CHECK = ROOT / "tests" / "gpu" / "cuda_platform_check.py"


def test_cuda_platform_check_passes_on_the_virtual_gpu():
    if not (VIRTUAL_GPU / "libcuda.so.1").exists():
        pytest.skip("no virtual GPU in this build (the CUDA toolkit was not found): %s" % VIRTUAL_GPU)
    env = dict(os.environ, EMBER_PLATFORM="cuda", EMBER_CUDA_LIBRARY_PATH=str(VIRTUAL_GPU),
               JAX_PLATFORMS="ember,cpu", EMBER_VIRTUAL_GPU_COUNT="2")
    run = subprocess.run([sys.executable, str(CHECK), "--big-mib", "16"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600, check=False)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    assert "0 failure(s)" in run.stdout, report
    # Both virtual devices were seen, so the device-to-device copy between them ran.
    assert "device_put from ember:cuda:0 to ember:cuda:1" in run.stdout, report
