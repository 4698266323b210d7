"""Complex arithmetic from real JAX runs as compiled kernels, with XLA:CPU's values.

The kernels multiply and divide complex numbers through the compiler runtime's __muldc3 and
__divdc3. Inside Python the plugin is opened with local symbols, so those are not in the global
scope the JIT searches by default: linking the kernels failed ("JIT session error: Symbols not
found: [ __divdc3 ]") and the whole program fell back to the evaluator ("the code generator
failed: LLVM linking kernels"). The cost report (EMBER_FLAGS=--dump_to) says where each kernel
ran.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def _compiled_everything(tmp_path):
    reports = [p.read_text() for p in tmp_path.glob("*.cost.txt")]
    assert reports, list(tmp_path.iterdir())
    for report in reports:
        fast = re.search(r"fast kernels: (\d+) of (\d+)", report)
        llvm = re.search(r"llvm kernels: (\d+) of (\d+)", report)
        assert fast and fast.group(1) == fast.group(2), report
        assert llvm and llvm.group(1) == llvm.group(2), report


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name,fn", [
    ("divide", lambda x, y: x / y),
    ("multiply then divide", lambda x, y: (x * y + 1) / (y - 2j)),
    ("reciprocal and power", lambda x, y: 1 / x + x ** 2),
])
def test_complex_kernels_link_and_match_xla(ember_devices, tmp_path, monkeypatch, name, fn, dtype):
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", dtype == np.complex128)
    try:
        rng = np.random.default_rng(0)
        x = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(dtype)
        y = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(dtype)
        monkeypatch.setenv("EMBER_FLAGS", f"--dump_to={tmp_path}")
        got = jax.jit(fn)(jax.device_put(x, ember_devices[0]), jax.device_put(y, ember_devices[0]))
        got = np.asarray(got)
        monkeypatch.delenv("EMBER_FLAGS")
        want = np.asarray(jax.jit(fn)(jax.device_put(x, jax.devices("cpu")[0]),
                                      jax.device_put(y, jax.devices("cpu")[0])))
        rtol = 1e-5 if dtype == np.complex64 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol)
        _compiled_everything(tmp_path)
    finally:
        jax.config.update("jax_enable_x64", previous)
