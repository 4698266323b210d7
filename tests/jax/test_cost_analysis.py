"""compiled.cost_analysis() (issue 12, item 5): Ember reports XLA's properties ("flops",
"transcendentals", "bytes accessed") for the program it runs, counted as XLA:CPU counts them.
Both are compiled in this process and compared: flops and transcendentals exactly where neither
compiler can simplify the program; bytes between what any implementation must move and 4x
XLA's count (each compiler counts what its own kernels move)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

X = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
Y = np.random.default_rng(1).standard_normal((32, 16)).astype(np.float32)

PROGRAMS = {
    "dot": (lambda a, b: a @ b, (X, Y)),
    "batched_dot": (lambda a, b: jnp.einsum("bij,bjk->bik", a.reshape(4, 16, 32),
                                            jnp.tile(b, (4, 1, 1))), (X, Y)),
    "elementwise": (lambda a: jnp.exp(a) * 2 + 1, (X,)),
    "reduce": (lambda a: a.sum(1), (X,)),
    "tanh_sum": (lambda a: jnp.tanh(a).sum(), (X,)),
    "select": (lambda a: jnp.where(a > 0, a, 2 * a), (X,)),
    "while": (lambda a: jax.lax.fori_loop(0, 10, lambda i, c: c * 2 + 1, a), (X,)),
    "reduce_window": (lambda a: jax.lax.reduce_window(a, 0., jax.lax.add, (2, 2), (1, 1),
                                                      "VALID"), (X,)),
    "conv": (lambda a: jax.lax.conv(a[None, None], jnp.full((4, 1, 3, 3), 0.5), (1, 1), "SAME"),
             (X,)),
    "mlp": (lambda a, b: jnp.tanh(a @ b).sum(), (X, Y)),
}

# Programs whose flops XLA:CPU counts after its own rewrites (which Ember's simplifier need not
# mirror op for op): compared within a few percent.
APPROXIMATE = {"batched_dot", "conv"}


def _cost(fn, args, device):
    compiled = jax.jit(fn).lower(*[jax.device_put(a, device) for a in args]).compile()
    cost = compiled.cost_analysis()
    if isinstance(cost, (list, tuple)):  # older JAX: one dict per program
        cost = cost[0]
    return cost


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_cost_analysis_matches_xla(name, ember_devices):
    fn, args = PROGRAMS[name]
    want = _cost(fn, args, jax.devices("cpu")[0])
    got = _cost(fn, args, ember_devices[0])
    assert got is not None, "Ember returned no cost analysis"
    for key in ("flops", "transcendentals", "bytes accessed"):
        assert key in got, key
    rtol = 0.05 if name in APPROXIMATE else 1e-6
    np.testing.assert_allclose(got["flops"], want.get("flops", 0.0), rtol=rtol)
    np.testing.assert_allclose(got["transcendentals"], want.get("transcendentals", 0.0), rtol=rtol)
    # Every argument is read and every result written at least once; beyond that each compiler
    # counts what its own kernels move (Ember fuses tanh into the sum XLA:CPU runs apart).
    floor = sum(np.asarray(a).nbytes for a in args) + sum(
        np.dtype(o.dtype).itemsize * np.prod(o.shape)
        for o in jax.tree_util.tree_leaves(jax.eval_shape(fn, *args)))
    assert floor <= got["bytes accessed"] <= 4 * max(want["bytes accessed"], floor), (
        got["bytes accessed"], want["bytes accessed"], floor)


def test_mfu_style_use(ember_devices):
    """What MFU logging does: flops of one step divided by its time."""
    step = jax.jit(lambda w, x: jnp.mean((jnp.tanh(x @ w)) ** 2))
    w = jax.device_put(Y, ember_devices[0])
    x = jax.device_put(X, ember_devices[0])
    flops = step.lower(w, x).compile().cost_analysis()["flops"]
    assert flops >= 2 * 64 * 32 * 16
    assert float(step(w, x)) >= 0


def test_cost_analysis_of_a_program_without_outputs(ember_devices):
    x = jax.device_put(X, ember_devices[0])
    cost = jax.jit(lambda a: ()).lower(x).compile().cost_analysis()
    assert cost["flops"] == 0
