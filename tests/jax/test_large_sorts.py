"""Sorts from JAX on Ember against XLA:CPU in the same process, at sizes where running the
comparator through the evaluator once per comparison took seconds (jnp.sort of 40k floats: 4-6 s).
JAX's comparators (canonical NaN and zero, total order; several keys; a carried index) run as
compiled scalar programs now. Results must equal XLA's bit for bit: sort is exact."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

N = 100_000


def _on(platform, fn, *args):
    device = jax.devices(platform)[0]
    args = [jax.device_put(a, device) for a in args]
    return jax.tree_util.tree_map(np.asarray, jax.jit(fn)(*args))


def _floats_with_specials(rng, n, dtype):
    x = rng.normal(size=n).astype(dtype)
    x[::101] = np.round(x[::101])  # ties
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], dtype=dtype)
    x[::997] = np.resize(specials, x[::997].shape)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, jnp.bfloat16], ids=["f32", "f64", "bf16"])
def test_sort_and_argsort_of_100k_floats_equal_xla(dtype):
    x = _floats_with_specials(np.random.default_rng(1), N, dtype)
    for fn in (jnp.sort, jnp.argsort, lambda v: jnp.sort(v, descending=True),
               lambda v: jnp.argsort(v, descending=True, stable=True)):
        got, want = _on("ember", fn, x), _on("cpu", fn, x)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_integer_sorts_along_each_axis_equal_xla():
    x = np.random.default_rng(2).integers(-2**31, 2**31 - 1, size=(300, 400), dtype=np.int64).astype(np.int32)
    for axis in (0, 1):
        for fn in (lambda v: jnp.sort(v, axis=axis), lambda v: jnp.argsort(v, axis=axis)):
            np.testing.assert_array_equal(_on("ember", fn, x), _on("cpu", fn, x))
    u = x.view(np.uint32)
    np.testing.assert_array_equal(_on("ember", jnp.sort, u.ravel()), _on("cpu", jnp.sort, u.ravel()))


def test_lexicographic_sort_with_several_keys_and_a_payload_equals_xla():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 10, N).astype(np.int32)
    b = rng.normal(size=N).astype(np.float32)
    b[::7] = 0.5  # ties on the second key too
    c = np.arange(N, dtype=np.int32)
    fn = lambda a, b, c: jax.lax.sort((a, b, c), num_keys=2, is_stable=True)
    for got, want in zip(_on("ember", fn, a, b, c), _on("cpu", fn, a, b, c)):
        np.testing.assert_array_equal(got, want)


def test_sort_key_val_by_a_computed_key_equals_xla():
    x = np.random.default_rng(4).normal(size=N).astype(np.float32)
    fn = lambda v: jax.lax.sort_key_val(jnp.abs(v), v)
    for got, want in zip(_on("ember", fn, x), _on("cpu", fn, x)):
        np.testing.assert_array_equal(got, want)
