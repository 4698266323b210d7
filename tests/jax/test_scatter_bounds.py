"""Scatters whose update windows reach outside the operand, on Ember and on XLA:CPU in the same
process. XLA skips such a window whole (its start must lie in [0, dim - window size] along every
dimension); Ember used to apply the window's elements that fell inside, so jax.grad of
scatter_max and scatter-add through windows at the edge (lax_autodiff_test's testScatterMax1 and
testScatterAddGrad6) disagreed with the finite differences. Indices are drawn around the valid
range, negative and too large ones included; PROMISE_IN_BOUNDS keeps JAX from masking them
itself, so the scatter sees them as they are."""
import jax
import numpy as np
import pytest
from jax import lax

CASES = [
    ((10,), (3, 2), lax.ScatterDimensionNumbers((1,), (), (0,)), (3, 1)),
    ((6, 5), (4, 2, 3), lax.ScatterDimensionNumbers((1, 2), (), (0, 1)), (4, 2)),
    ((6, 5), (4, 3), lax.ScatterDimensionNumbers((1,), (0,), (0, 1)), (4, 2)),
    ((7, 4), (5, 4), lax.ScatterDimensionNumbers((1,), (0,), (0,)), (5, 1)),
    ((5, 6), (3, 5, 2), lax.ScatterDimensionNumbers((1, 2), (), (1,)), (3, 1)),
]


def _on(platform, fn, *args):
    device = jax.devices(platform)[0]
    return np.asarray(jax.jit(fn)(*jax.device_put(args, device)))


@pytest.mark.parametrize("op", [lax.scatter_add, lax.scatter_max, lax.scatter_mul],
                         ids=["add", "max", "mul"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_windows_outside_the_operand_are_skipped_as_xla_skips_them(case, op):
    shape, update_shape, dnums, index_shape = CASES[case]
    rng = np.random.default_rng(case)
    for _ in range(8):
        idx = rng.integers(-3, 9, index_shape).astype(np.int32)
        x = rng.standard_normal(shape).astype(np.float32)
        u = rng.standard_normal(update_shape).astype(np.float32)
        f = lambda x, u: op(x, idx, u, dnums, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
        np.testing.assert_allclose(_on("ember", f, x, u), _on("cpu", f, x, u), rtol=1e-6,
                                   atol=1e-6)


def test_the_gradient_of_scatter_max_at_the_edge():
    # lax_autodiff_test's testScatterMax1 case: windows of 2 at index 9 of 10 elements.
    dnums = lax.ScatterDimensionNumbers((1,), (), (0,))
    idx = np.array([[8], [9], [9]], np.int32)
    x = np.arange(10, dtype=np.float32)
    y = np.array([[20, 21], [22, 23], [24, 25]], np.float32)
    tx, ty = np.full(10, 0.5, np.float32), np.arange(1, 7, dtype=np.float32).reshape(3, 2)
    f = lambda x, y: lax.scatter_max(x, idx, y, dnums)
    jvp = lambda x, y, tx, ty: jax.jvp(f, (x, y), (tx, ty))
    for got, want in zip(jax.jit(jvp)(*jax.device_put((x, y, tx, ty), jax.devices("ember")[0])),
                         jax.jit(jvp)(*jax.device_put((x, y, tx, ty), jax.devices("cpu")[0]))):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
