"""Large windows from JAX on Ember against XLA:CPU in the same process: cumulative reductions
(JAX lowers cumsum, cumprod, cummax and cumlogsumexp on CPU-like platforms to reduce_window with a
window the size of the axis) over 100k elements, and big 2-D pooling windows. Each used to take
time and memory quadratic in the axis."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

N = 100_000


def _on(platform, fn, *args):
    device = jax.devices(platform)[0]
    args = [jax.device_put(a, device) for a in args]
    return np.asarray(jax.jit(fn)(*args))


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize(
    "name,fn,make",
    [
        ("cumsum_f32", jax.lax.cumsum, lambda r: r.uniform(0, 1, N).astype(np.float32)),
        ("cumsum_i32", jax.lax.cumsum, lambda r: r.integers(-100, 100, N).astype(np.int32)),
        ("cummax_f32", jax.lax.cummax, lambda r: r.normal(size=N).astype(np.float32)),
        ("cummin_i32", jax.lax.cummin, lambda r: r.integers(-1000, 1000, N).astype(np.int32)),
        ("cumprod_f32", jax.lax.cumprod, lambda r: r.uniform(0.9999, 1.0001, N).astype(np.float32)),
        ("cumlogsumexp_f32", jax.lax.cumlogsumexp, lambda r: r.normal(size=N).astype(np.float32)),
    ],
)
def test_cumulative_reductions_of_100k_elements(name, fn, make, reverse):
    x = make(np.random.default_rng(0))
    f = lambda v: fn(v, axis=0, reverse=reverse)
    got = _on("ember", f, x)
    want = _on("cpu", f, x)
    if not name.startswith("cumlogsumexp"):
        # Sums and products fold in XLA's blocked order, so even floats agree bit for bit.
        np.testing.assert_array_equal(got, want)
        return
    # logaddexp runs through transcendental functions whose last bits differ between
    # implementations: both results are held to the exact float64 answer.
    x64 = x.astype(np.float64)[::-1] if reverse else x.astype(np.float64)
    exact = np.logaddexp.accumulate(x64)
    exact = exact[::-1] if reverse else exact
    err_ember, err_xla = np.abs(got - exact).max(), np.abs(want - exact).max()
    assert err_ember <= 4 * max(err_xla, 1e-6), (err_ember, err_xla)


def test_jnp_cumsum_of_ones():
    x = np.ones(N, np.float32)
    np.testing.assert_array_equal(_on("ember", jnp.cumsum, x), _on("cpu", jnp.cumsum, x))


@pytest.mark.parametrize("op,init,dtype", [
    (jax.lax.add, 0, np.float32),
    (jax.lax.max, -np.inf, np.float32),
    (jax.lax.add, 0, np.int32),
])
def test_big_pooling_windows(op, init, dtype):
    rng = np.random.default_rng(1)
    x = (rng.normal(size=(2, 128, 128, 3)) * 10).astype(dtype)
    init = np.array(init, dtype)

    def pool(v):
        return jax.lax.reduce_window(v, init, op, (1, 33, 31, 1), (1, 2, 3, 1),
                                     [(0, 0), (16, 16), (5, 9), (0, 0)])

    got, want = _on("ember", pool, x), _on("cpu", pool, x)
    if dtype == np.float32 and op is jax.lax.add:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, want)
