"""Tiered compilation from real JAX (CompilerOptions::tiered_compile, on by default).

A program's kernels of 1024 elements or more start on quickly compiled code while their
optimized code compiles in the background; launches of over 2^18 elements wait for it. Both
tiers are compiled from the same IR, so every call, from the first on, must give the bits that
a program compiled with --tiered_compile=off gives. A process that exits while background
compiles are queued or running must exit cleanly (they use LLVM, whose static objects exit
destroys).
"""
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

PROGRAMS = {
    "softmax": lambda x: jax.nn.softmax(x, axis=-1),
    "chain": lambda x: jnp.tanh(x * 1.5 + 0.25) * jnp.exp(-x * x) - jnp.log1p(jnp.abs(x)),
    "row sums": lambda x: jnp.sum(jnp.sin(x) * x, axis=1) + jnp.max(x, axis=1),
    "column sums": lambda x: jnp.sum(x * x, axis=0),
}


# 48x1000: tiered, no launch waits; 520x1030: launches wait for the optimized code.
@pytest.mark.parametrize("shape", [(48, 1000), (520, 1030)], ids=["mid", "large"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_call_matches_the_untiered_program(ember_devices, monkeypatch, name, shape):
    fn = PROGRAMS[name]
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    on_ember = jax.device_put(x, ember_devices[0])
    monkeypatch.setenv("EMBER_FLAGS", "--tiered_compile=on")
    tiered = jax.jit(fn).lower(on_ember).compile()
    # Right after the compile (quick code, or optimized code as soon as it is in), and again.
    calls = [np.asarray(tiered(on_ember)) for _ in range(4)]
    monkeypatch.setenv("EMBER_FLAGS", "--tiered_compile=off")
    want = np.asarray(jax.jit(fn).lower(on_ember).compile()(on_ember))
    for i, got in enumerate(calls):
        np.testing.assert_array_equal(got, want, err_msg=f"call {i}")
    on_cpu = np.asarray(jax.jit(fn)(jax.device_put(x, jax.devices("cpu")[0])))
    np.testing.assert_allclose(want, on_cpu, rtol=2e-5, atol=2e-6)


def test_exit_with_background_compiles_pending():
    # Many programs compiled, run once and left: the process exits while their optimized code
    # is still compiling, and must exit with status 0 and no error.
    script = textwrap.dedent("""
        import os
        os.environ["JAX_PLATFORMS"] = "ember,cpu"
        import jax, jax.numpy as jnp, numpy as np
        device = jax.devices("ember")[0]
        for k in range(12):
            x = jax.device_put(np.ones((64, 1000 + k), np.float32), device)
            f = jax.jit(lambda x: jnp.tanh(jnp.exp(x) * 0.5 + x) - jnp.sum(x * x, axis=1, keepdims=True))
            f(x).block_until_ready()
        print("done", flush=True)
    """)
    env = dict(os.environ, EMBER_FLAGS="--tiered_compile=on")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("done"), run.stdout + run.stderr
