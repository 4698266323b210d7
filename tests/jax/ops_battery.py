"""The JAX end-to-end battery: each case is a function, its input shapes and the dtypes to try.
test_ops.py runs every case on Ember and on XLA:CPU in the same process on random inputs and
compares with per-dtype tolerances. One config, two backends, as in jax-mps's op tests."""
import jax
import jax.numpy as jnp
from jax import lax

F = ["float32", "bfloat16", "float16"]
F32 = ["float32"]
I = ["int32", "int8", "uint8"]
B = ["bool"]
FI = F + I


def case(name, fn, shapes, dtypes, **kw):
    return dict(name=name, fn=fn, shapes=shapes, dtypes=dtypes, **kw)


UNARY_FLOAT = {
    "abs": jnp.abs, "neg": jnp.negative, "exp": jnp.exp, "log": lambda x: jnp.log(jnp.abs(x) + 1),
    "sqrt": lambda x: jnp.sqrt(jnp.abs(x)), "rsqrt": lambda x: lax.rsqrt(jnp.abs(x) + 0.5),
    "sin": jnp.sin, "cos": jnp.cos, "tan": lambda x: jnp.tan(x * 0.5), "tanh": jnp.tanh,
    "logistic": jax.nn.sigmoid, "floor": jnp.floor, "ceil": jnp.ceil, "round": jnp.round,
    "sign": jnp.sign, "expm1": jnp.expm1, "log1p": lambda x: jnp.log1p(jnp.abs(x)),
    "square": jnp.square, "reciprocal": lambda x: 1 / (jnp.abs(x) + 1), "cbrt": jnp.cbrt,
    "erf": lax.erf, "relu": jax.nn.relu, "gelu": jax.nn.gelu, "silu": jax.nn.silu,
    "softplus": jax.nn.softplus, "isfinite": jnp.isfinite, "arctan": jnp.arctan,
    "sinh": jnp.sinh, "cosh": jnp.cosh, "arcsinh": jnp.arcsinh, "atan2_self": lambda x: jnp.arctan2(x, x + 1),
}
BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum, "min": jnp.minimum,
    "eq": jnp.equal, "lt": jnp.less, "ge": jnp.greater_equal, "ne": jnp.not_equal,
    "where": lambda x, y: jnp.where(x > y, x, y),
}
BINARY_FLOAT = {
    "div": lambda x, y: x / (jnp.abs(y) + 1), "pow": lambda x, y: jnp.power(jnp.abs(x) + 0.5, y),
    "atan2": jnp.arctan2, "hypot": jnp.hypot, "logaddexp": jnp.logaddexp,
    "rem": lambda x, y: jnp.remainder(x, jnp.abs(y) + 1), "copysign": jnp.copysign,
}
BINARY_INT = {
    "floordiv": lambda x, y: x // jnp.where(y == 0, 1, y), "mod": lambda x, y: x % jnp.where(y == 0, 1, y),
    "and": jnp.bitwise_and, "or": jnp.bitwise_or, "xor": jnp.bitwise_xor,
    "shl": lambda x, y: jnp.left_shift(x, y % 8), "shr": lambda x, y: jnp.right_shift(x, y % 8),
}

CASES = []
for n, f in UNARY_FLOAT.items():
    CASES.append(case(f"unary_{n}", f, [(3, 5)], F))
for n, f in BINARY.items():
    CASES.append(case(f"binary_{n}", f, [(4, 6), (4, 6)], FI))
for n, f in BINARY_FLOAT.items():
    CASES.append(case(f"binary_{n}", f, [(4, 6), (4, 6)], F))
for n, f in BINARY_INT.items():
    CASES.append(case(f"binary_{n}", f, [(4, 6), (4, 6)], I))
CASES += [
    case("broadcast_add", lambda x, y: x + y, [(3, 1, 5), (4, 1)], FI),
    case("scalar_mul", lambda x: x * 3, [(7,)], FI),
    case("logical_ops", lambda x, y: (x & y) | ~x, [(5,), (5,)], B),
    case("select_bool", lambda p, x: jnp.where(p, x, -x), [(6,), (6,)], [("bool", "float32")]),
    case("clip", lambda x: jnp.clip(x, -0.5, 0.5), [(10,)], F),
    case("astype_int", lambda x: (x * 10).astype(jnp.int32), [(8,)], F32),
    case("astype_float", lambda x: x.astype(jnp.float32) / 3, [(8,)], I),
    case("astype_bool", lambda x: x.astype(bool), [(8,)], FI),
    case("reshape", lambda x: x.reshape(6, 4), [(2, 3, 4)], FI),
    case("transpose", lambda x: x.transpose(2, 0, 1), [(2, 3, 4)], FI),
    case("slice", lambda x: x[1:3, ::2], [(5, 6)], FI),
    case("negative_index", lambda x: x[-1], [(5, 6)], FI),
    case("concatenate", lambda x, y: jnp.concatenate([x, y], axis=1), [(3, 2), (3, 4)], FI),
    case("stack", lambda x, y: jnp.stack([x, y]), [(3, 2), (3, 2)], FI),
    case("pad", lambda x: jnp.pad(x, ((1, 2), (0, 3))), [(3, 4)], FI),
    case("pad_edge", lambda x: jnp.pad(x, 2, mode="edge"), [(3, 4)], F32),
    case("flip", lambda x: jnp.flip(x, 0), [(4, 3)], FI),
    case("roll", lambda x: jnp.roll(x, 2, axis=1), [(3, 5)], FI),
    case("tile", lambda x: jnp.tile(x, (2, 3)), [(2, 2)], FI),
    case("repeat", lambda x: jnp.repeat(x, 2, axis=0), [(2, 3)], FI),
    case("iota_arange", lambda x: x + jnp.arange(6, dtype=x.dtype), [(6,)], FI),
    case("broadcast_to", lambda x: jnp.broadcast_to(x, (4, 3)), [(3,)], FI),
    case("expand_squeeze", lambda x: jnp.squeeze(x[:, None, :], 1), [(3, 4)], FI),
    case("sum", jnp.sum, [(4, 5)], FI),
    case("sum_axis", lambda x: jnp.sum(x, axis=1), [(4, 5)], FI),
    case("mean", lambda x: jnp.mean(x, axis=0), [(6, 3)], F),
    case("max_reduce", lambda x: jnp.max(x, axis=-1), [(3, 7)], FI),
    case("min_reduce", jnp.min, [(3, 7)], FI),
    case("prod", lambda x: jnp.prod(x, axis=0), [(3, 4)], F32),
    case("argmax", lambda x: jnp.argmax(x, axis=1), [(4, 6)], F + ["int32"]),
    case("argmin", lambda x: jnp.argmin(x), [(4, 6)], F32),
    case("any_all", lambda x: (jnp.any(x), jnp.all(x)), [(5, 3)], B),
    case("cumsum", lambda x: jnp.cumsum(x, axis=0), [(6, 3)], F32 + ["int32"]),
    case("cumprod", lambda x: jnp.cumprod(x * 0.5, axis=1), [(3, 5)], F32),
    case("cummax", lambda x: lax.cummax(x, axis=0), [(6, 2)], F32),
    case("var_std", lambda x: (jnp.var(x), jnp.std(x, axis=0)), [(8, 3)], F32),
    case("logsumexp", lambda x: jax.nn.logsumexp(x, axis=1), [(4, 9)], F),
    case("softmax", lambda x: jax.nn.softmax(x, axis=-1), [(4, 9)], F),
    case("log_softmax", lambda x: jax.nn.log_softmax(x), [(4, 9)], F32),
    case("layernorm", lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5),
         [(4, 16)], F),
    case("one_hot", lambda x: jax.nn.one_hot(x % 5, 5), [(6,)], ["int32"]),
    case("matmul", jnp.matmul, [(4, 8), (8, 3)], F + ["int32"]),
    case("matvec", jnp.dot, [(5, 4), (4,)], F32),
    case("vdot", jnp.vdot, [(6,), (6,)], F32),
    case("batched_matmul", jnp.matmul, [(2, 3, 4), (2, 4, 5)], F32),
    case("einsum", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 2)], F32),
    case("einsum_outer", lambda a, b: jnp.einsum("i,j->ij", a, b), [(3,), (4,)], F32),
    case("tensordot", lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), [(2, 3, 4), (3, 4, 5)], F32),
    case("conv2d", lambda x, w: lax.conv(x, w, (1, 1), "SAME"), [(1, 2, 6, 6), (3, 2, 3, 3)], F32),
    case("conv2d_strided", lambda x, w: lax.conv(x, w, (2, 2), "VALID"), [(2, 3, 7, 7), (4, 3, 3, 3)], F32),
    case("conv1d_dilated", lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", rhs_dilation=(2,)),
         [(1, 2, 9), (2, 2, 3)], F32),
    case("conv_grouped", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
         [(1, 4, 5, 5), (4, 2, 3, 3)], F32),
    case("max_pool", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
         [(1, 2, 6, 6)], F32),
    case("avg_pool", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1), "SAME") / 9,
         [(1, 2, 5, 5)], F32),
    case("gather_take", lambda x, i: jnp.take(x, i % 5, axis=0), [(5, 3), (4,)], [("float32", "int32")]),
    case("gather_fancy", lambda x, i: x[i % 4, 1:3], [(4, 5), (3,)], [("float32", "int32")]),
    case("scatter_set", lambda x, i: x.at[i % 5].set(1.0), [(5, 3), (2,)], [("float32", "int32")]),
    case("scatter_add", lambda x, i: x.at[i % 5].add(2.0), [(5,), (6,)], [("float32", "int32")]),
    case("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i[0] % 3, 0), (2, 2)), [(5, 4), (1,)],
         [("float32", "int32")]),
    case("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u, (1, 1)), [(4, 4), (2, 2)], F32),
    case("sort", lambda x: jnp.sort(x, axis=-1), [(3, 8)], F + ["int32"]),
    case("argsort", lambda x: jnp.argsort(x), [(10,)], F32),
    case("top_k", lambda x: lax.top_k(x, 3), [(2, 8)], F32),
    case("cond", lambda x: lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, x), [(4,)], F32),
    case("while_loop", lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5),
                                                (0, x))[1], [(3,)], F32),
    case("fori_loop", lambda x: lax.fori_loop(0, 4, lambda i, v: v + i * v, x), [(3,)], F32),
    case("scan_cumsum", lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x), [(6,)], F32),
    case("switch", lambda i, x: lax.switch(i[0] % 3, [lambda v: v, lambda v: -v, lambda v: v * v], x),
         [(1,), (4,)], [("int32", "float32")]),
    case("grad_tanh_sum", jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2)), [(5,)], F32),
    case("grad_matmul", jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w))), [(4, 3), (2, 4)], F32),
    case("value_and_grad_softmax_xent",
         jax.value_and_grad(lambda w, x: -jnp.mean(jax.nn.log_softmax(x @ w)[:, 0])), [(6, 4), (3, 6)], F32),
    case("vmap_dot", jax.vmap(jnp.dot), [(4, 3), (4, 3)], F32),
    case("vmap_matvec", jax.vmap(lambda m, v: m @ v, in_axes=(None, 0)), [(3, 4), (5, 4)], F32),
    case("jacfwd", jax.jacfwd(lambda x: jnp.sin(x) * x), [(3,)], F32),
    case("hessian", jax.hessian(lambda x: jnp.sum(x ** 3)), [(3,)], F32),
    case("custom_vjp_clip", None, [(5,)], F32, builder="custom_vjp"),
    case("rng_uniform", lambda k: jax.random.uniform(jax.random.wrap_key_data(k), (4, 3)), [(2,)],
         [("uint32",)], key=True),
    case("rng_normal", lambda k: jax.random.normal(jax.random.wrap_key_data(k), (5,)), [(2,)],
         [("uint32",)], key=True),
    case("rng_bits", lambda k: jax.random.bits(jax.random.wrap_key_data(k), (6,)), [(2,)], [("uint32",)], key=True),
    case("rng_split", lambda k: jax.random.key_data(jax.random.split(jax.random.wrap_key_data(k), 3)), [(2,)],
         [("uint32",)], key=True),
    case("cholesky", lambda a: jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4, dtype=a.dtype)), [(4, 4)], F32),
    case("triangular_solve", lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 4 * jnp.eye(4, dtype=a.dtype), b,
                                                                             lower=True), [(4, 4), (4, 2)], F32),
    case("fft", lambda x: jnp.abs(jnp.fft.fft(x)), [(8,)], F32),
    case("rfft", lambda x: jnp.abs(jnp.fft.rfft(x)), [(8,)], F32),
    case("complex_mul", lambda a, b: jnp.abs(lax.complex(a, b) * lax.complex(b, a)), [(5,), (5,)], F32),
    case("clamp_int", lambda x: jnp.clip(x, 2, 100), [(9,)], I),
    case("popcount", lax.population_count, [(9,)], I),
    case("clz", lax.clz, [(9,)], ["int32", "uint8"]),
    case("integer_pow", lambda x: lax.integer_pow(x, 3), [(6,)], F + ["int32"]),
    case("nan_to_num", lambda x: jnp.nan_to_num(jnp.log(x)), [(6,)], F32),
    case("isnan", lambda x: jnp.isnan(jnp.sqrt(x)), [(6,)], F32),
    case("mlp_step", None, [(8, 4), (4, 3), (3,)], F32, builder="mlp"),
]
