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


def _on(device, host):
    return jax.device_put(host, device)


def test_sgd_update_writes_into_the_donated_parameter(ember_devices):
    """w - lr * g with w donated: the result lives where w lived (Ember aliases it), no new
    device allocation is made for it, and the values match XLA:CPU."""
    step = jax.jit(lambda w, g: w - 0.125 * g, donate_argnums=0)
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((256, 64)).astype(np.float32)
    g = rng.standard_normal((256, 64)).astype(np.float32)
    cpu = jax.devices("cpu")[0]
    want = np.asarray(step(_on(cpu, w0), _on(cpu, g)))
    ge = _on(ember_devices[0], g)
    step(_on(ember_devices[0], w0), ge).block_until_ready()  # compile outside the measurement
    w = _on(ember_devices[0], w0)
    w.block_until_ready()
    pointer = w.unsafe_buffer_pointer()
    stats = ember_devices[0].memory_stats() or {}
    out = step(w, ge)
    out.block_until_ready()
    assert w.is_deleted()
    assert out.unsafe_buffer_pointer() == pointer
    after = ember_devices[0].memory_stats() or {}
    if "num_allocs" in stats and "num_allocs" in after:
        assert after["num_allocs"] == stats["num_allocs"]
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)


def test_sgd_update_keeps_aliasing_through_a_loop(ember_devices):
    step = jax.jit(lambda w, g: w - 0.125 * g, donate_argnums=0)
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((1000,)).astype(np.float32)
    g = rng.standard_normal((1000,)).astype(np.float32)
    w = _on(ember_devices[0], w0)
    ge = _on(ember_devices[0], g)
    w.block_until_ready()
    pointer = w.unsafe_buffer_pointer()
    for _ in range(4):
        w = step(w, ge)
    assert w.unsafe_buffer_pointer() == pointer
    np.testing.assert_allclose(np.asarray(w), w0 - 4 * 0.125 * g, rtol=1e-5, atol=1e-5)


# Programs where writing a result into the donated input would be wrong in program order (the
# input is read again after the result is written, read at other elements, or read by a kernel
# that needs the result): results must still match XLA:CPU.
UNSAFE_IN_PROGRAM_ORDER = {
    "sum_after": lambda w: (w * 2 + w.sum(), w.mean()),
    "written_then_reduced": lambda w: (w * 2, jnp.sum(w, axis=0)),
    "transposed": lambda w: w.T + w,
    "needs_the_result": lambda w: (jnp.exp(w), jnp.exp(w) @ w),
}


@pytest.mark.parametrize("name", sorted(UNSAFE_IN_PROGRAM_ORDER))
def test_donation_where_aliasing_is_unsafe_matches_xla(ember_devices, name):
    f = jax.jit(UNSAFE_IN_PROGRAM_ORDER[name], donate_argnums=0)
    rng = np.random.default_rng(5)
    host = rng.standard_normal((32, 32)).astype(np.float32)
    want = f(_on(jax.devices("cpu")[0], host))
    x = _on(ember_devices[0], host)
    with warnings.catch_warnings():
        # JAX warns when no result has the donated input's type (nothing to donate into).
        warnings.simplefilter("ignore")
        got = f(x)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_two_donated_inputs_each_read_for_both_results_match_xla(ember_devices):
    """One fused kernel stores a + b, then a * b: had the sum gone into a's buffer, the product
    would read sums (it did, before the aliasing rule looked at the writer's other outputs)."""
    f = jax.jit(lambda a, b: (a + b, a * b), donate_argnums=(0, 1))
    rng = np.random.default_rng(6)
    a, b = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    got = f(_on(ember_devices[0], a), _on(ember_devices[0], b))
    np.testing.assert_array_equal(np.asarray(got[0]), a + b)
    np.testing.assert_array_equal(np.asarray(got[1]), a * b)


def test_update_fused_into_a_reduction_writes_into_the_donated_parameters(ember_devices):
    """Momentum SGD on a bias (the gradient a sum over the batch, the update that reduction's
    epilogue, as in Keras train steps): both results go where the donated inputs were."""
    def step(b, v, x):
        v2 = 0.9 * v + x.sum(axis=0)
        return b - 0.1 * v2, v2

    f = jax.jit(step, donate_argnums=(0, 1))
    rng = np.random.default_rng(7)
    b0, v0 = (rng.standard_normal(16).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((64, 16)).astype(np.float32)
    cpu = jax.devices("cpu")[0]
    want = f(_on(cpu, b0), _on(cpu, v0), _on(cpu, x))
    b, v = _on(ember_devices[0], b0), _on(ember_devices[0], v0)
    pointers = (b.unsafe_buffer_pointer(), v.unsafe_buffer_pointer())
    got = f(b, v, _on(ember_devices[0], x))
    assert (got[0].unsafe_buffer_pointer(), got[1].unsafe_buffer_pointer()) == pointers
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


def test_same_array_donated_and_passed_again_is_an_error_like_xla(ember_devices):
    """One array as both a donated and another argument: XLA:CPU refuses the call
    (INVALID_ARGUMENT, "Attempt to use a buffer that was ... donated"), and so does Ember; the
    array stays alive and unchanged on both."""
    host = np.arange(64, dtype=np.float32)
    for donate_argnums in (0, (0, 1)):
        for device in (ember_devices[0], jax.devices("cpu")[0]):
            f = jax.jit(lambda w, v: w - 0.5 * v, donate_argnums=donate_argnums)
            x = _on(device, host)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(RuntimeError, match="donat"):
                    f(x, x).block_until_ready()
            assert not x.is_deleted()
            np.testing.assert_array_equal(np.asarray(x), host)
