"""Host callbacks and XLA FFI custom calls (issue 12, item 3): jax.debug.print,
jax.debug.callback, jax.pure_callback, jax.experimental.io_callback (ordered ones thread tokens
through the program's parameters and results) and jax.ffi.ffi_call targets compiled against
jaxlib's FFI headers, each on Ember and on XLA:CPU in this process; bad input gives a clean
error on both."""
import ctypes
import functools
import pathlib
import shutil
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)


def _devices():
    return [("cpu", jax.devices("cpu")[0]), ("ember", jax.devices("ember")[0])]


def _run_both(fn, *args):
    """{backend: host result} of jit(fn) on each backend (a fresh jit per backend)."""
    out = {}
    for name, device in _devices():
        with jax.default_device(device):
            got = jax.jit(fn)(*[jax.device_put(a, device) for a in args])
            out[name] = jax.tree_util.tree_map(np.asarray, got)
        jax.effects_barrier()
    return out


def test_debug_print_prints_what_xla_cpu_prints(ember_devices, capfd):
    def f(x):
        jax.debug.print("x={x} sum={s:.3f}", x=x[0], s=x.sum())
        return x * 2
    texts = {}
    for name, device in _devices():
        capfd.readouterr()
        with jax.default_device(device):
            jax.jit(f)(jax.device_put(X, device)).block_until_ready()
        jax.effects_barrier()
        texts[name] = capfd.readouterr().out
    assert texts["ember"] == texts["cpu"]
    assert "x=[" in texts["ember"]


def test_debug_callback_sees_the_values(ember_devices):
    seen = {"cpu": [], "ember": []}
    for name, device in _devices():
        def f(x, name=name):
            jax.debug.callback(lambda a, b: seen[name].append((np.asarray(a), np.asarray(b))),
                               x, x.sum(axis=0))
            return x + 1
        with jax.default_device(device):
            jax.jit(f)(jax.device_put(X, device)).block_until_ready()
        jax.effects_barrier()
    assert len(seen["ember"]) == len(seen["cpu"]) == 1
    for got, want in zip(seen["ember"][0], seen["cpu"][0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _host_fn(a, b):
    return np.sin(a) * b, (a > 0).sum(dtype=np.int32)


def _pure(a, b):
    out = (jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct((), np.int32))
    return jax.pure_callback(_host_fn, out, a, b)


def test_pure_callback_matches(ember_devices):
    b = RNG.standard_normal((3, 4)).astype(np.float32)
    results = _run_both(lambda a, b: jax.tree_util.tree_map(lambda v: v + 1, _pure(a * 2, b)), X, b)
    np.testing.assert_allclose(results["ember"][0], results["cpu"][0], rtol=1e-6)
    assert results["ember"][1] == results["cpu"][1]


def test_pure_callback_under_vmap_and_grad_of_custom_jvp(ember_devices):
    f = jax.vmap(lambda v: jax.pure_callback(lambda x: np.cumsum(x), jax.ShapeDtypeStruct(
        v.shape, v.dtype), v, vmap_method="sequential"))
    results = _run_both(f, X)
    np.testing.assert_allclose(results["ember"], results["cpu"], rtol=1e-6)
    np.testing.assert_allclose(results["ember"], np.cumsum(X, axis=1), rtol=1e-6)


def test_ordered_io_callback_keeps_program_order(ember_devices):
    logs = {}
    for name, device in _devices():
        log = []

        def step(i, carry, log=log):
            io_callback(lambda v: log.append(int(v)), None, i, ordered=True)
            return carry + i

        f = jax.jit(lambda n: jax.lax.fori_loop(0, 5, step, n))
        with jax.default_device(device):
            for start in (10, 20):
                assert int(f(jnp.int32(start))) == start + 10
        jax.effects_barrier()
        logs[name] = log
    assert logs["ember"] == logs["cpu"] == [0, 1, 2, 3, 4] * 2


def test_ordered_effects_thread_tokens_through_the_entry(ember_devices):
    f = lambda x: (io_callback(lambda v: v * 3, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                               ordered=True), x)
    text = jax.jit(f).lower(jax.device_put(X, ember_devices[0])).as_text()
    assert "!stablehlo.token" in text.split("func.func public @main")[1].split("{")[0]
    results = _run_both(f, X)
    for got, want in zip(results["ember"], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_io_callback_with_results_unordered(ember_devices):
    f = lambda x: io_callback(lambda v: np.tanh(v), jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1
    results = _run_both(f, X)
    np.testing.assert_allclose(results["ember"], results["cpu"], rtol=1e-6)


def test_callback_on_each_pmap_device(ember_devices):
    n = min(2, len(ember_devices))
    seen = []
    f = jax.pmap(lambda x: jax.debug.callback(lambda v: seen.append(float(v)), x.sum()) or x * 2,
                 devices=ember_devices[:n])
    out = f(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    jax.effects_barrier()
    np.testing.assert_array_equal(np.asarray(out), np.arange(n * 3).reshape(n, 3) * 2)
    assert sorted(seen) == sorted(float(v) for v in np.arange(n * 3).reshape(n, 3).sum(1))


def test_ordered_io_callback_inside_shard_map(ember_devices):
    """The token of an ordered callback inside a shard_map body is a StableHLO type in the
    bytecode JAX sends (VHLO does not reach sdy bodies): it must decode, and the program run."""
    from jax.sharding import Mesh, PartitionSpec as P
    mesh = Mesh(np.array(ember_devices[:4]), ("i",))
    seen = []

    def body(x, y):
        io_callback(lambda v: seen.append(v.shape), None, x, ordered=True)
        return x + y[..., None]

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(None, "i"), P(None)),
                              out_specs=P(None, "i")))
    x = np.arange(32, dtype=np.float32).reshape(2, 16)
    out = f(x, np.ones(2, np.float32))
    jax.effects_barrier()
    np.testing.assert_array_equal(np.asarray(out), x + 1)
    assert seen and all(shape == (2, 4) for shape in seen), seen


@pytest.mark.parametrize("backend", ["cpu", "ember"])
def test_callback_errors_are_clean(backend, ember_devices):
    device = dict(_devices())[backend]
    def boom(v):
        raise ValueError("no such thing")
    f = jax.jit(lambda x: jax.pure_callback(boom, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
    with jax.default_device(device), pytest.raises(Exception, match="no such thing"):
        f(jax.device_put(X, device)).block_until_ready()
    wrong = jax.jit(lambda x: jax.pure_callback(lambda v: v[:1], jax.ShapeDtypeStruct(
        x.shape, x.dtype), x))
    with jax.default_device(device), pytest.raises(Exception, match="shape"):
        wrong(jax.device_put(X, device)).block_until_ready()
    _forget_failed_launches()


def _forget_failed_launches():
    """JAX keeps the completion of launches with host callbacks as runtime tokens and re-raises
    a failed one at every effects barrier until cleared."""
    from jax._src import dispatch
    try:
        jax.effects_barrier()
    except Exception:  # pylint: disable=broad-except
        pass
    dispatch.runtime_tokens.clear()


# ---- jax.ffi targets -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ffi_library(tmp_path_factory):
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.fail("a C++ compiler is needed to build the FFI test handlers")
    src = pathlib.Path(__file__).with_name("ffi_handlers.cc")
    lib = tmp_path_factory.mktemp("ffi") / "libember_test_handlers.so"
    subprocess.run([compiler, "-std=c++17", "-O1", "-shared", "-fPIC", "-I",
                    jax.ffi.include_dir(), str(src), "-o", str(lib)], check=True)
    handlers = ctypes.cdll.LoadLibrary(str(lib))
    for name, symbol in (("ember_test_scale", handlers.EmberTestScale),
                         ("ember_test_row_sum", handlers.EmberTestRowSum)):
        for platform in ("cpu", "ember"):
            jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(symbol), platform=platform)
    return handlers


def _scale(x, scale, tag="ab"):
    return jax.ffi.ffi_call("ember_test_scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, scale=np.float32(scale), offset=np.int64(3), tag=tag,
        bias=np.array([1, 2, 4], np.int32))


def test_ffi_call_with_attributes(ffi_library, ember_devices):
    results = _run_both(lambda x: _scale(x * 2, 0.5) - 1, X)
    np.testing.assert_allclose(results["ember"], results["cpu"], rtol=1e-6)
    np.testing.assert_allclose(results["ember"], X * 2 * 0.5 + 3 + 2 + 7 - 1, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_ffi_call_any_buffer(dtype, ffi_library, ember_devices):
    x = (RNG.standard_normal((2, 3, 5)) * 10).astype(dtype)
    f = lambda v: jax.ffi.ffi_call("ember_test_row_sum",
                                   jax.ShapeDtypeStruct(v.shape[:-1], np.float32))(v)
    results = _run_both(f, x)
    np.testing.assert_allclose(results["ember"], results["cpu"], rtol=1e-6)
    np.testing.assert_allclose(results["ember"], x.sum(-1), rtol=1e-5)


@pytest.mark.parametrize("backend", ["cpu", "ember"])
def test_ffi_errors_are_clean(backend, ffi_library, ember_devices):
    device = dict(_devices())[backend]
    with jax.default_device(device), pytest.raises(Exception, match="scale must be non-negative"):
        jax.jit(functools.partial(_scale, scale=-1.0))(jax.device_put(X, device)).block_until_ready()
    bad_dtype = lambda v: jax.ffi.ffi_call("ember_test_row_sum",
                                           jax.ShapeDtypeStruct((3,), np.float32))(v)
    with jax.default_device(device), pytest.raises(Exception, match="s32 or f32"):
        jax.jit(bad_dtype)(jax.device_put(np.ones((3, 2), np.int8), device)).block_until_ready()
    _forget_failed_launches()


def test_unregistered_ffi_target_names_itself(ember_devices):
    f = jax.jit(lambda v: jax.ffi.ffi_call("ember_test_nobody_registered_this",
                                           jax.ShapeDtypeStruct(v.shape, v.dtype))(v))
    with pytest.raises(Exception, match="ember_test_nobody_registered_this"):
        f(jax.device_put(X, ember_devices[0])).block_until_ready()
    _forget_failed_launches()


def test_registration_errors_are_clean(ember_devices):
    from jax_plugins.ember import ffi as ember_ffi
    with pytest.raises(RuntimeError, match="api_version"):
        ember_ffi.register_handler("ember_test_untyped", 0x1234, api_version=0)
    with pytest.raises(RuntimeError, match="handler"):
        ember_ffi.register_handler("ember_test_null", 0)


def test_inspect_array_sharding(ember_devices):
    """One device: the callback sees the sharding, as on XLA:CPU. Several: a clean error at
    lowering, and later effects still run (nothing is left failing in the runtime tokens)."""
    seen = []

    def f(x):
        jax.debug.inspect_array_sharding(x, callback=seen.append)
        return x * 2

    for device in (ember_devices[0], jax.devices("cpu")[0]):
        out = jax.jit(f)(jax.device_put(jnp.arange(8.0), device))
        np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * 2)
    assert len(seen) == 2 and all(isinstance(s, jax.sharding.Sharding) for s in seen)
    assert seen[0].device_set == {ember_devices[0]}

    if len(ember_devices) > 1:
        mesh = jax.sharding.Mesh(np.array(ember_devices), ["dev"])
        spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("dev"))
        x = jax.device_put(jnp.arange(4.0 * len(ember_devices)), spec)
        with pytest.raises(NotImplementedError, match="inspect_array_sharding"):
            jax.jit(f)(x)
    printed = []
    jax.jit(lambda x: jax.debug.callback(printed.append, x, ordered=True))(
        jax.device_put(jnp.float32(3), ember_devices[0]))
    jax.effects_barrier()
    assert printed == [3.0]
