"""Programs without array results and host arrays with negative strides (issue 12, items 1 and 2):
each case runs on Ember and on XLA:CPU in this process and the two must agree."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest


def _both(fn, *host_args):
    """fn jitted on XLA:CPU and on Ember, on the same host arguments."""
    cpu, ember = jax.devices("cpu")[0], jax.devices("ember")[0]
    want = fn(*[jax.device_put(a, cpu) for a in host_args])
    got = fn(*[jax.device_put(a, ember) for a in host_args])
    return got, want


@pytest.mark.parametrize("fn", [
    lambda x: (),
    lambda x: None,
    lambda x: {},
    lambda x: ((), [None]),
], ids=["empty_tuple", "none", "empty_dict", "nested_empty"])
def test_jit_without_array_outputs(fn, ember_devices):
    x = np.random.default_rng(0).standard_normal(3).astype(np.float32)
    got, want = _both(jax.jit(fn), x)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)


def test_jit_without_arguments_or_outputs(ember_devices):
    with jax.default_device(ember_devices[0]):
        assert jax.jit(lambda: ())() == ()


def test_outputs_mixing_arrays_and_nothing(ember_devices):
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    got, want = _both(jax.jit(lambda a: ((), a.sum(0), None)), x)
    assert got[0] == () and got[2] is None
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6)


def test_no_output_program_still_validates_its_arguments(ember_devices):
    f = jax.jit(lambda a: ())
    x = jax.device_put(np.ones(3, np.float32), ember_devices[0])
    lowered = f.lower(x).compile()
    with pytest.raises((TypeError, ValueError)):
        lowered(jax.device_put(np.ones(4, np.float32), ember_devices[0]))


def test_pmap_without_outputs(ember_devices):
    n = min(len(ember_devices), 2)
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    out = jax.pmap(lambda a: (), devices=ember_devices[:n])(x)
    assert out == ()


_BASE = np.random.default_rng(2).standard_normal((6, 8))

STRIDED_VIEWS = {
    "reversed_1d": lambda: np.arange(12.)[::-1],
    "reversed_step_-3": lambda: np.arange(20, dtype=np.float32)[::-3],
    "rows_reversed": lambda: _BASE[::-1],
    "cols_reversed": lambda: _BASE[:, ::-1],
    "both_reversed_strided": lambda: _BASE.astype(np.float32)[::-2, ::-3],
    "reversed_transpose": lambda: _BASE.T[::-1],
    "reversed_int8": lambda: np.arange(-50, 50, dtype=np.int8)[::-1],
    "reversed_complex": lambda: (_BASE + 1j * _BASE[::-1]).astype(np.complex64)[:, ::-1],
    "reversed_bool": lambda: (_BASE > 0)[::-1, ::-1],
    "reversed_empty": lambda: np.zeros((0, 4), np.float32)[:, ::-1],
    "reversed_3d": lambda: np.arange(60, dtype=np.int32).reshape(3, 4, 5)[::-1, :, ::-2],
}


@pytest.mark.parametrize("name", list(STRIDED_VIEWS))
def test_device_put_of_negative_strides(name, x64, ember_devices):
    host = STRIDED_VIEWS[name]()
    assert any(s < 0 for s in host.strides) or host.size == 0
    want = np.asarray(jax.device_put(host, jax.devices("cpu")[0]))
    got = jax.device_put(host, ember_devices[0])
    assert got.devices() == {ember_devices[0]}
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(host).astype(want.dtype))


def test_negative_strides_feed_a_jitted_function(ember_devices):
    host = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)[::-1, ::-2]
    f = jax.jit(lambda a: jnp.cumsum(a, axis=1) * 2)
    got, want = _both(f, host)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    # Straight from numpy (the implicit transfer of a jit argument).
    with jax.default_device(ember_devices[0]):
        np.testing.assert_allclose(np.asarray(f(host)), np.asarray(want), rtol=1e-6)
