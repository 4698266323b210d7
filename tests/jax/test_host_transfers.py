"""Host arrays handed to Ember: a small numpy array may be changed by its owner as soon as the
call that received it returns (scipy's LAPACK wrappers shift pivot arrays in place while they run,
next to a JAX computation given the same array: JAX's own ScipyLinalgTest.testLuSolve* did that
and failed intermittently). Small arrays are copied before the call returns, as XLA:CPU does."""
import jax
import numpy as np


def test_a_small_array_changed_right_after_the_call_keeps_its_values():
    ember = jax.devices("ember")[0]
    f = jax.jit(lambda v: v * 2.0 + 1.0)
    bad = 0
    for i in range(30):
        # Keep the device's transfer stream busy, so a copy queued behind this one would run
        # only after the owner changed the array.
        big = jax.device_put(np.full(16 << 20, float(i), np.float32), ember)
        x = np.arange(256, dtype=np.float32) + i
        want = x * 2.0 + 1.0
        y = f(jax.device_put(x, ember))
        x += 1000.0  # the owner changes its array at once
        bad += int(not np.array_equal(np.asarray(y), want))
        big.delete()
    assert bad == 0, f"{bad} of 30 results read the changed array"

