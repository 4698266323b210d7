"""Programs over several devices, Ember against XLA:CPU in the same process: jax.pmap with every
collective, jax.jit with NamedSharding inputs/outputs over a Mesh, and jax.shard_map with
collectives inside. Each case runs the same function on a mesh of 4 Ember devices and on a mesh of
4 CPU devices (conftest.py sets both counts), on the same random inputs; results and output
shardings must match. Error cases check that bad multi-device calls give clean errors."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

N = 4


@pytest.fixture(scope="module")
def devices():
    ember = jax.devices("ember")
    cpu = jax.devices("cpu")
    assert len(ember) >= N and len(cpu) >= N, (len(ember), len(cpu))
    return {"ember": ember[:N], "cpu": cpu[:N]}


def _rand(shape, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _close(got, want, dtype=np.float32):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype)
    if np.dtype(dtype).kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---- pmap -------------------------------------------------------------------------------------

PMAP_CASES = {
    "psum": lambda x: lax.psum(x, "i"),
    "pmean": lambda x: lax.pmean(x, "i"),
    "pmax": lambda x: lax.pmax(x, "i"),
    "pmin": lambda x: lax.pmin(x, "i"),
    "all_gather": lambda x: lax.all_gather(x, "i"),
    "all_gather_tiled": lambda x: lax.all_gather(x, "i", axis=1, tiled=True),
    "ppermute_ring": lambda x: lax.ppermute(x, "i", [(k, (k + 1) % N) for k in range(N)]),
    "ppermute_partial": lambda x: lax.ppermute(x, "i", [(0, 2), (2, 0), (1, 3)]),
    "all_to_all": lambda x: lax.all_to_all(x, "i", 0, 0),
    "psum_scatter": lambda x: lax.psum_scatter(x, "i"),
    "psum_scatter_tiled": lambda x: lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
    "axis_index": lambda x: x * lax.axis_index("i"),
    "softmax_over_devices": lambda x: jnp.exp(x) / lax.psum(jnp.exp(x), "i"),
}


@pytest.mark.parametrize("name", sorted(PMAP_CASES))
def test_pmap(name, devices):
    fn = PMAP_CASES[name]
    x = _rand((N, N, 8), seed=hash(name) % 2**31)
    results = {}
    for platform, devs in devices.items():
        out = jax.pmap(fn, axis_name="i", devices=devs)(x)
        assert {d.platform for d in out.sharding.device_set} == {"ember" if platform == "ember" else "cpu"}
        results[platform] = np.asarray(out)
    _close(results["ember"], results["cpu"])


def test_pmap_integer_psum_is_exact(devices):
    x = _rand((N, 16), seed=3, dtype=np.int32)
    got = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=devices["ember"])(x)
    np.testing.assert_array_equal(np.asarray(got), np.broadcast_to(x.sum(0), (N, 16)))


def test_pmap_twice_in_a_row_and_from_threads(devices):
    import concurrent.futures

    f = jax.pmap(lambda v: lax.psum(v, "i") * 2, axis_name="i", devices=devices["ember"])
    inputs = [_rand((N, 5), seed=s) for s in range(8)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda v: np.asarray(f(v)), inputs))
    for v, out in zip(inputs, outs):
        np.testing.assert_allclose(out, np.broadcast_to(2 * v.sum(0), (N, 5)), rtol=1e-5, atol=1e-5)


# ---- jit with shardings ----------------------------------------------------------------------

def _mesh(devs, shape=(2, 2), names=("x", "y")):
    return Mesh(np.array(devs).reshape(shape), names)


JIT_CASES = {
    # name: (function, input shapes, input specs, output spec)
    "matmul_rows": (lambda a, b: a @ b, [(8, 6), (6, 4)], [P("x", None), P()], P("x", None)),
    "matmul_2d": (lambda a, b: jnp.tanh(a @ b), [(8, 6), (6, 4)], [P("x", "y"), P("y", None)],
                  P("x", "y")),
    "reduce_to_replicated": (lambda a: a.sum(0), [(8, 4)], [P(("x", "y"), None)], P()),
    "elementwise_two_axes": (lambda a, b: a * b + 1, [(4, 8), (4, 8)], [P("x", "y"), P("y", "x")],
                             P(None, ("x", "y"))),
    "reshape_transpose": (lambda a: a.reshape(4, 4, 2).transpose(2, 0, 1), [(8, 4)],
                          [P("x", None)], P(None, "y", None)),
}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_sharded_jit(name, devices):
    fn, shapes, in_specs, out_spec = JIT_CASES[name]
    args = [_rand(s, seed=i + hash(name) % 1000) for i, s in enumerate(shapes)]
    results = {}
    for platform, devs in devices.items():
        mesh = _mesh(devs)
        in_sh = tuple(NamedSharding(mesh, s) for s in in_specs)
        out_sh = NamedSharding(mesh, out_spec)
        placed = [jax.device_put(a, s) for a, s in zip(args, in_sh)]
        out = jax.jit(fn, in_shardings=in_sh, out_shardings=out_sh)(*placed)
        assert out.sharding.is_equivalent_to(out_sh, out.ndim), (platform, out.sharding)
        for shard in out.addressable_shards:  # each device holds its own piece
            np.testing.assert_array_equal(np.asarray(shard.data), np.asarray(out)[shard.index])
        results[platform] = np.asarray(out)
    _close(results["ember"], results["cpu"])


def test_sharded_jit_with_unspecified_output_sharding(devices):
    results = {}
    x = _rand((8, 4), seed=11)
    for platform, devs in devices.items():
        mesh = _mesh(devs)
        xs = jax.device_put(x, NamedSharding(mesh, P("x", "y")))
        out = jax.jit(lambda a: (a * 2).sum(1))(xs)
        results[platform] = np.asarray(out)
    _close(results["ember"], results["cpu"])


@pytest.fixture
def gspmd():
    """Shardy off: JAX sends GSPMD `mhlo.sharding` strings instead of sdy attributes."""
    previous = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", False)
    yield
    jax.config.update("jax_use_shardy_partitioner", previous)


@pytest.mark.parametrize("name", ["matmul_2d", "elementwise_two_axes", "reduce_to_replicated"])
def test_sharded_jit_gspmd(name, devices, gspmd):
    fn, shapes, in_specs, out_spec = JIT_CASES[name]
    args = [_rand(s, seed=i + 7) for i, s in enumerate(shapes)]
    results = {}
    for platform, devs in devices.items():
        mesh = _mesh(devs)
        in_sh = tuple(NamedSharding(mesh, s) for s in in_specs)
        out_sh = NamedSharding(mesh, out_spec)
        f = jax.jit(fn, in_shardings=in_sh, out_shardings=out_sh)
        assert "mhlo.sharding" in f.lower(*args).as_text()
        out = f(*[jax.device_put(a, s) for a, s in zip(args, in_sh)])
        assert out.sharding.is_equivalent_to(out_sh, out.ndim)
        results[platform] = np.asarray(out)
    _close(results["ember"], results["cpu"])


# ---- shard_map ---------------------------------------------------------------------------------

def _shard_map_cases():
    def psum_plus_index(x):
        return lax.psum(x, "i") + lax.axis_index("i")

    def gather(x):
        return lax.all_gather(x, "i", tiled=True)

    def ring(x):
        return lax.ppermute(x, "i", [(k, (k + 1) % N) for k in range(N)])

    def a2a(x):
        return lax.all_to_all(x, "i", 1, 1, tiled=True)

    def scatter(x):
        return lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True)

    def normalize(x):
        return x / jnp.sqrt(lax.psum((x * x).sum(), "i"))

    return {
        # name: (body, global input shape, in spec, out spec)
        "psum_axis_index": (psum_plus_index, (8, 4), P("i"), P("i")),
        "all_gather": (gather, (8, 4), P("i"), P("i")),
        "ppermute_ring": (ring, (8, 4), P("i"), P("i")),
        "all_to_all": (a2a, (8, 8), P("i"), P("i")),
        "psum_scatter": (scatter, (8, 8), P("i"), P("i")),
        "normalize": (normalize, (16, 3), P("i"), P("i")),
    }


SHARD_MAP_CASES = _shard_map_cases()


@pytest.mark.parametrize("name", sorted(SHARD_MAP_CASES))
def test_shard_map(name, devices):
    body, shape, in_spec, out_spec = SHARD_MAP_CASES[name]
    x = _rand(shape, seed=hash(name) % 1000)
    results = {}
    for platform, devs in devices.items():
        mesh = Mesh(np.array(devs), ("i",))
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_spec, out_specs=out_spec))
        out = f(jax.device_put(x, NamedSharding(mesh, in_spec)))
        results[platform] = np.asarray(out)
    _close(results["ember"], results["cpu"])


def test_shard_map_2d_mesh_psum_over_one_axis(devices):
    x = _rand((8, 8), seed=21)
    results = {}
    for platform, devs in devices.items():
        mesh = _mesh(devs)
        f = jax.jit(jax.shard_map(lambda v: lax.psum(v, "x") * (1 + lax.axis_index("y")), mesh=mesh,
                                  in_specs=P("x", "y"), out_specs=P(None, "y")))
        results[platform] = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P("x", "y")))))
    _close(results["ember"], results["cpu"])


# ---- errors ------------------------------------------------------------------------------------

def test_wrong_number_of_shards_is_a_clean_error(devices):
    """A four-device executable given arrays on two devices: an INVALID_ARGUMENT error like
    XLA:CPU's, and the executable keeps working."""
    messages = {}
    for platform, devs in devices.items():
        mesh = Mesh(np.array(devs), ("i",))
        sh = NamedSharding(mesh, P("i"))
        f = jax.jit(lambda a: a + 1, in_shardings=sh, out_shardings=sh)
        x = jax.device_put(_rand((8,), seed=1), sh)
        exe = f.lower(x).compile().runtime_executable()
        half = jax.device_put(np.asarray(x), NamedSharding(Mesh(np.array(devs[:2]), ("i",)), P("i")))
        with pytest.raises(Exception) as info:
            exe.execute_sharded([half])
        messages[platform] = str(info.value)
        np.testing.assert_allclose(np.asarray(f(x)), np.asarray(x) + 1)
    assert "INVALID_ARGUMENT" in messages["ember"], messages
    assert messages["ember"] == messages["cpu"], messages


def test_partially_manual_shard_map_is_a_clean_error_or_correct(devices):
    x = _rand((8, 8), seed=5)
    results = {}
    for platform, devs in devices.items():
        mesh = _mesh(devs)
        f = jax.jit(jax.shard_map(lambda v: lax.psum(v, "x"), mesh=mesh, in_specs=P("x"),
                                  out_specs=P(), axis_names={"x"}))
        try:
            results[platform] = np.asarray(f(jax.device_put(x, NamedSharding(mesh, P("x", "y")))))
        except Exception as e:  # Ember may refuse it, but cleanly and saying why
            assert platform == "ember", e
            assert "manual" in str(e), e
            return
    _close(results["ember"], results["cpu"])


def test_uneven_sharding_is_a_clean_error_or_correct(devices):
    mesh = Mesh(np.array(devices["ember"]), ("i",))
    x = _rand((6,), seed=2)
    try:
        out = jax.jit(lambda a: a * 3, out_shardings=NamedSharding(mesh, P("i")))(
            jax.device_put(x, devices["ember"][0]))
        got = np.asarray(out)
    except Exception as e:  # a clean error naming the problem, not a crash
        assert "evenly" in str(e) or "shard" in str(e).lower(), e
        return
    np.testing.assert_allclose(got, x * 3, rtol=1e-6)
