"""What `jax.jit(f).lower(...).compile().as_text()` shows for multi-device programs (issue 16):
the per-device program Ember runs, written as StableHLO text by compiler/export and turned into
HLO text by jaxlib, with local shapes and the collectives the partitioner inserted. Every op
family must come out in a form jaxlib's own MLIR parser and HLO converter accept."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((8, 6)).astype(np.float32)
_IMG = _RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
_KER = _RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
_IDX = _RNG.integers(0, 8, (5,)).astype(np.int32)
_SPD = (_A.T @ _A + 6 * np.eye(6)).astype(np.float32)


def _max_pool(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID")


# name: (function, arguments, an HLO opcode the program must show)
BATTERY = {
    "convolution": (lambda x, k: jax.lax.conv_general_dilated(
        x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), (_IMG, _KER),
        "convolution"),
    "gather": (lambda x, i: x[i], (_A, _IDX), "gather"),
    "scatter_add": (lambda x, i: x.at[i].add(1.0), (_A, _IDX), "scatter"),
    "sort": (lambda x: jnp.sort(x, axis=0), (_A,), "sort"),
    "top_k": (lambda x: jax.lax.top_k(x, 2)[0], (_A,), "sort"),
    "fori_loop": (lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x), (_A,), "while"),
    "cond": (lambda x: jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), (_A,), "conditional"),
    "switch": (lambda x, i: jax.lax.switch(i[0] % 3, [jnp.sin, jnp.cos, jnp.tanh], x),
               (_A, _IDX), "conditional"),
    "cumsum": (lambda x: jnp.cumsum(x, axis=0), (_A,), "reduce-window"),
    "max_pool_padded": (lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2),
                                                        (1, 1), "SAME"), (_A,), "reduce-window"),
    "max_pool_grad": (jax.grad(lambda x: _max_pool(x).sum()), (_A,), "select-and-scatter"),
    "einsum": (lambda x: jnp.einsum("ij,kj->ik", x, x), (_A,), "dot"),
    "argmax": (lambda x: jnp.argmax(x, axis=1), (_A,), "reduce"),
    "fft": (lambda x: jnp.fft.fft(x).real, (_A,), "fft"),
    "cholesky": (jnp.linalg.cholesky, (_SPD,), "cholesky"),
    "solve_triangular": (lambda x: jax.scipy.linalg.solve_triangular(
        jnp.tril(x) + 6 * jnp.eye(6), x), (_SPD,), "triangular-solve"),
    "random_uniform": (lambda x: x + jax.random.uniform(jax.random.key(1), x.shape), (_A,),
                       "shift-right-logical"),
    "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 3))), (_A,), "pad"),
    "concatenate": (lambda x: jnp.concatenate([x, x * 2], axis=1), (_A,), "concatenate"),
    "dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x, (i[0], 1), (3, 2)), (_A, _IDX),
                      "dynamic-slice"),
    "dynamic_update_slice": (lambda x, i: jax.lax.dynamic_update_slice(
        x, jnp.ones((2, 2)), (i[0], 1)), (_A, _IDX), "dynamic-update-slice"),
    "reverse": (lambda x: x[::-1], (_A,), "reverse"),
    "iota": (lambda x: x + jnp.arange(6.0), (_A,), "iota"),
    "bitcast": (lambda x: jax.lax.bitcast_convert_type(x, jnp.int32), (_A,), "bitcast-convert"),
    "bf16_round_trip": (lambda x: x.astype(jnp.bfloat16).astype(jnp.float32), (_A,), "convert"),
    "reduce_precision": (lambda x: jax.lax.reduce_precision(x, 5, 10), (_A,), "reduce-precision"),
    "constants": (lambda x: x * jnp.array([1., 2., 3., 4., 5., 6.]) +
                  jnp.array([True, False, True, True, False, True]), (_A,), "constant"),
    "complex": (lambda x: jnp.abs(jnp.exp(1j * x) * (1 + 2j)), (_A,), "complex"),
    "expm": (lambda x: jax.scipy.linalg.expm(x * 0.1), (_SPD,), "while"),
}


@pytest.fixture(scope="module")
def ember_devices():
    devices = jax.devices("ember")
    assert len(devices) >= 4, devices
    return devices[:4]


@pytest.mark.parametrize("name", sorted(BATTERY))
def test_every_op_family_reaches_the_compiled_text(name, ember_devices):
    """A program over 2 devices (replicated inputs) shows its ops: had the export failed,
    as_text() would show the signature-only module, whose body is constants."""
    fn, args, opcode = BATTERY[name]
    mesh = Mesh(np.array(ember_devices[:2]), ("x",))
    placed = [jax.device_put(a, NamedSharding(mesh, P())) for a in args]
    text = jax.jit(fn).lower(*placed).compile().as_text()
    assert f" {opcode}(" in text, text
    assert "num_partitions=2" in text


def _entry(text):
    return text[text.index("ENTRY"):]


def _compiled(fn, mesh, specs, *args):
    placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(args, specs)]
    with jax.set_mesh(mesh):
        return jax.jit(fn).lower(*placed).compile().as_text()


def _count(text, opcode):
    return len(re.findall(rf" {opcode}\(", text))


def test_data_parallel_step_shows_local_batch_and_one_combined_all_reduce(ember_devices):
    mesh = Mesh(np.array(ember_devices), ("x",))
    w = _RNG.standard_normal((6, 3)).astype(np.float32)
    v = _RNG.standard_normal((3, 2)).astype(np.float32)
    loss = lambda w, v, x: jnp.sum((jnp.tanh(x @ w) @ v) ** 2)
    text = _compiled(jax.grad(loss, argnums=(0, 1)), mesh, [P(), P(), P("x")], w, v, _A.copy())
    # The entry takes the local batch (8 rows over 4 devices) and the whole weights.
    assert re.search(r"ENTRY .*\(Arg_0[^:]*: f32\[6,3\], Arg_1[^:]*: f32\[3,2\], "
                     r"Arg_2[^:]*: f32\[2,6\]\)", text), text
    # Both weight gradients are summed by one (variadic) all-reduce, as XLA combines them.
    assert _count(text, "all-reduce") == 1, text
    assert re.search(r"= \(f32\[[0-9,]+\]\{[0-9,]+\}, f32\[[0-9,]+\]\{[0-9,]+\}\) all-reduce\(",
                     text), text
    assert _count(text, "all-gather") == 0
    assert _count(text, "all-to-all") == 0


def test_sum_over_a_split_dimension_shows_its_all_reduce(ember_devices):
    mesh = Mesh(np.array(ember_devices).reshape(2, 2), ("x", "y"))
    text = _compiled(lambda a: jnp.sum(a, axis=0), mesh, [P("x", "y")], _A.copy())
    assert _count(text, "all-reduce") == 1
    assert "f32[4,3]" in _entry(text)
    # The group is the devices that hold pieces of one column block: {0,2} and {1,3}.
    assert "replica_groups={{0,2},{1,3}}" in text


def test_fsdp_matmul_shows_an_all_gather(ember_devices):
    mesh = Mesh(np.array(ember_devices), ("x",))
    w = _RNG.standard_normal((6, 4)).astype(np.float32)
    # The weights' rows are split like the batch: each device gathers them whole.
    text = _compiled(lambda x, w: jax.lax.with_sharding_constraint(x @ w[:6], P("x")), mesh,
                     [P("x"), P("x")], _A.copy(), np.pad(w, ((0, 2), (0, 0))))
    assert _count(text, "all-gather") == 1
    assert _count(text, "all-reduce") == 0


def test_moving_an_axis_shows_an_all_to_all(ember_devices):
    mesh = Mesh(np.array(ember_devices), ("x",))
    a = _RNG.standard_normal((8, 12)).astype(np.float32)
    text = _compiled(lambda a: jax.lax.with_sharding_constraint(jnp.exp(a), P(None, "x")) * 2.0,
                     mesh, [P("x")], a)
    assert _count(text, "all-to-all") == 1
    assert _count(text, "all-gather") == 0


def test_shard_map_psum_shows_its_all_reduce_and_output_shardings_stay(ember_devices):
    mesh = Mesh(np.array(ember_devices), ("x",))
    f = jax.shard_map(lambda a: jax.lax.psum(a, "x"), mesh=mesh, in_specs=P("x"),
                      out_specs=P())
    arr = jax.device_put(_A, NamedSharding(mesh, P("x")))
    compiled = jax.jit(f).lower(arr).compile()
    assert _count(compiled.as_text(), "all-reduce") == 1
    # The shardings JAX reads back from the same module are the ones the program states.
    assert compiled.output_shardings.is_equivalent_to(NamedSharding(mesh, P()), 2)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(arr)), _A.reshape(4, 2, 6).sum(0),
                               rtol=1e-6)
