"""Buffer donation from real JAX: `donate_argnums` reaches Ember (its name is on JAX's donation
allowlist through jax_plugins.ember), the donated buffer is deleted, results are right, and
using the donated array afterwards is a clean error."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def test_ember_is_on_jax_donation_allowlist(ember_devices):
    from jax._src.interpreters import mlir
    assert "ember" in mlir._platforms_with_donation


def test_lowering_for_ember_carries_donation(ember_devices):
    x = jax.device_put(np.ones((4,), np.float32), ember_devices[0])
    text = jax.jit(lambda a: a * 2, donate_argnums=0).lower(x).as_text()
    assert "jax.buffer_donor" in text or "tf.aliasing_output" in text


@pytest.mark.parametrize("shape", [(8,), (3, 5), (64, 64)])
def test_donated_input_is_deleted_and_result_matches_xla(ember_devices, shape):
    rng = np.random.default_rng(0)
    host = rng.standard_normal(shape).astype(np.float32)
    f = jax.jit(lambda a, b: (a * 3 + b, b - 1), donate_argnums=0)
    want = f(jax.device_put(host, jax.devices("cpu")[0]), jax.device_put(host, jax.devices("cpu")[0]))
    x = jax.device_put(host, ember_devices[0])
    y = jax.device_put(host, ember_devices[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # JAX warns when it drops a donation
        got = f(x, y)
    assert x.is_deleted()
    assert not y.is_deleted()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    with pytest.raises(RuntimeError, match="deleted|donated"):
        np.asarray(x)
    with pytest.raises((RuntimeError, ValueError), match="deleted|donated"):
        f(x, y)
    np.testing.assert_array_equal(np.asarray(y), host)  # the kept input is intact


def test_donation_in_a_training_loop(ember_devices):
    """The usual pattern: params donated to the step that returns their update."""
    @jax.jit
    def loss(w, x):
        return jnp.sum(jnp.square(x @ w))

    step = jax.jit(lambda w, x: w - 0.01 * jax.grad(loss)(w, x), donate_argnums=0)
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((16, 4)).astype(np.float32)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w_e = jax.device_put(w0, ember_devices[0])
    w_c = jax.device_put(w0, jax.devices("cpu")[0])
    xe = jax.device_put(x, ember_devices[0])
    xc = jax.device_put(x, jax.devices("cpu")[0])
    for _ in range(5):
        old = w_e
        w_e = step(w_e, xe)
        w_c = step(w_c, xc)
        assert old.is_deleted()
    np.testing.assert_allclose(np.asarray(w_e), np.asarray(w_c), rtol=1e-5, atol=1e-6)
