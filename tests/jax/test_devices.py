"""Ember as JAX sees it: devices, memories, attributes, transfers of every dtype."""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest


def test_plugin_is_registered_under_its_platform_name(ember_devices):
    assert ember_devices[0].platform == "ember"
    backend = jax.extend.backend.get_backend("ember") if hasattr(jax, "extend") else None
    if backend is not None:
        assert backend.platform == "ember"
        assert tuple(backend.stablehlo_current_version)[:2] >= (1, 0)
        assert backend.xla_version == 2


def test_host_device_count_from_environment(ember_devices):
    assert len(ember_devices) == 4
    assert [d.id for d in ember_devices] == [0, 1, 2, 3]
    assert len({d.local_hardware_id for d in ember_devices}) == 4
    for d in ember_devices:
        assert d.process_index == 0
        assert "Ember" in d.device_kind or d.device_kind


def test_default_memory_and_addressable_memories(ember_devices):
    for d in ember_devices:
        mem = d.default_memory()
        assert mem.kind == "device"
        assert d in mem.addressable_by_devices()
        assert [m.kind for m in d.addressable_memories()] == ["device"]


def test_memory_stats_grow_with_allocations(ember_devices):
    d = ember_devices[1]
    before = d.memory_stats()
    assert before is not None
    for key in ("bytes_in_use", "peak_bytes_in_use", "num_allocs", "bytes_limit"):
        assert key in before, key
    x = jax.device_put(np.ones((1024, 256), np.float32), d)
    x.block_until_ready()
    after = d.memory_stats()
    assert after["bytes_in_use"] >= before["bytes_in_use"] + 1024 * 256 * 4
    assert after["peak_bytes_in_use"] >= after["bytes_in_use"]
    del x


def _random_array(dtype, shape, rng):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu" and dtype.itemsize == 1 and dtype.name not in ("int8", "uint8"):
        info = ml_dtypes.iinfo(dtype)  # int2/int4/uint2/uint4
        return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    # Floats of every width: draw in float32 and round to the type (values the type can hold).
    return (rng.standard_normal(shape) * 4).astype(np.float32).astype(dtype)


ALL_DTYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128, ml_dtypes.bfloat16,
    ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2,
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3b11fnuz,
    ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3,
    ml_dtypes.float8_e3m4, ml_dtypes.float8_e8m0fnu, ml_dtypes.float4_e2m1fn,
]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (2, 0, 4), (2, 3, 4, 5)], ids=str)
def test_device_put_round_trip(dtype, shape, x64, ember_devices):
    rng = np.random.default_rng(abs(hash((np.dtype(dtype).name, shape))) % 2**32)
    host = _random_array(dtype, shape, rng)
    expected = np.asarray(jax.device_put(host, jax.devices("cpu")[0]))  # XLA:CPU's canonical form
    on_ember = jax.device_put(host, ember_devices[0])
    assert on_ember.devices() == {ember_devices[0]}
    assert on_ember.dtype == expected.dtype
    assert on_ember.shape == shape
    back = np.asarray(on_ember)
    assert back.dtype == expected.dtype
    # Compare bytes, so NaNs and signed zeros of every float type must match exactly.
    np.testing.assert_array_equal(back.reshape(-1).view(np.uint8), expected.reshape(-1).view(np.uint8))


def test_transposed_and_sliced_host_arrays(ember_devices):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 8)).astype(np.float32)
    for host in (base.T, base[::2, 1::3], np.asfortranarray(base)):
        np.testing.assert_array_equal(np.asarray(jax.device_put(host, ember_devices[0])), host)


def test_copies_between_devices(ember_devices):
    rng = np.random.default_rng(2)
    host = rng.standard_normal((33, 17)).astype(np.float32)
    x = jax.device_put(host, ember_devices[0])
    for d in ember_devices[1:]:
        y = jax.device_put(x, d)
        assert y.devices() == {d}
        np.testing.assert_array_equal(np.asarray(y), host)
    # Ember -> XLA:CPU and back.
    z = jax.device_put(jax.device_put(x, jax.devices("cpu")[0]), ember_devices[3])
    np.testing.assert_array_equal(np.asarray(z), host)


def test_delete_then_use_is_a_clean_error(ember_devices):
    x = jax.device_put(np.arange(10, dtype=np.int32), ember_devices[0])
    keep = jax.device_put(np.arange(5, dtype=np.int32), ember_devices[0])
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError):
        np.asarray(x)
    np.testing.assert_array_equal(np.asarray(keep), np.arange(5))


def test_jit_runs_on_ember_and_keeps_results_there(ember_devices):
    host = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    x = jax.device_put(host, ember_devices[2])
    y = jax.jit(lambda a: jnp.tanh(a) * 2 + 1)(x)
    assert y.devices() == {ember_devices[2]}
    np.testing.assert_allclose(np.asarray(y), np.tanh(host) * 2 + 1, rtol=1e-6)


def test_wrong_argument_shape_is_a_clean_error_and_buffers_survive(ember_devices):
    f = jax.jit(lambda a: a + 1).lower(jax.ShapeDtypeStruct((3,), np.float32)).compile()
    good = jax.device_put(np.arange(3, dtype=np.float32), ember_devices[0])
    with pytest.raises(Exception):
        f(jax.device_put(np.arange(4, dtype=np.float32), ember_devices[0]))
    np.testing.assert_array_equal(np.asarray(f(good)), np.arange(3) + 1)


def test_dump_flag_writes_the_programs_jax_sends(ember_devices, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_FLAGS", f"--dump_to={tmp_path}")
    x = jax.device_put(np.ones((2, 3), np.float32), ember_devices[0])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a * 7 - 2)(x)), np.full((2, 3), 5.0))
    inputs = list(tmp_path.glob("*.input.mlir*"))
    imported = list(tmp_path.glob("*.imported.txt"))
    assert inputs and imported, list(tmp_path.iterdir())
    assert inputs[0].read_bytes()[:4] == b"ML\xefR"  # JAX sends a StableHLO portable artifact
    assert "multiply" in imported[0].read_text()
