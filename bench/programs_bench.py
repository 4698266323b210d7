"""Programs that used to fall off Ember's fast path, next to XLA:CPU in the same process: a GRU
over lax.scan (while loops with captured weights, a carried output written row by row), bf16
layernorm + gelu (narrow floats and transcendentals), an f16 MLP training step with loss scaling,
a bf16 CNN training step (narrow convolutions and their gradients), avg_pool (reduce_window) and a concatenate/pad/reverse chain. Each program is compiled by Ember
and by XLA:CPU; the table gives median step times, the ratio (below 1.0: Ember is faster), the
first-call time (compile included) and the largest difference of the results.

    .venv/bin/python bench/programs_bench.py [--repeat N] [--only SUBSTRING]

A benchmark, not a test: nothing here asserts a speed.
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def prog_gru_scan(rng, T=512, H=128, B=16):
    W = rng.standard_normal((H, 3 * H), dtype=np.float32) * 0.1
    U = rng.standard_normal((H, 3 * H), dtype=np.float32) * 0.1
    xs = rng.standard_normal((T, B, H), dtype=np.float32)

    def loss(W, U, xs):
        def cell(h, x):
            gx, gh = x @ W, h @ U
            z = jax.nn.sigmoid(gx[:, :H] + gh[:, :H])
            r = jax.nn.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
            n = jnp.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
            h = (1 - z) * n + z * h
            return h, h
        _, hs = jax.lax.scan(cell, jnp.zeros((B, H), jnp.float32), xs)
        return hs.sum()

    return jax.value_and_grad(loss, argnums=(0, 1)), (W, U, xs)


def prog_bf16_layernorm_gelu(rng):
    x = rng.standard_normal((256, 1024), dtype=np.float32).astype(jnp.bfloat16)
    g = rng.standard_normal((1024,), dtype=np.float32).astype(jnp.bfloat16)

    def f(x, g):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        y = (x - m) * jax.lax.rsqrt(v + 1e-5) * g
        return jax.nn.gelu(y) + jnp.tanh(y) * jax.nn.sigmoid(y)

    return f, (x, g)


def prog_f16_mlp_loss_scaling(rng):
    w1 = (rng.standard_normal((256, 512)) * 0.05).astype(np.float16)
    w2 = (rng.standard_normal((512, 10)) * 0.05).astype(np.float16)
    x = rng.standard_normal((128, 256)).astype(np.float16)
    y = np.eye(10, dtype=np.float16)[rng.integers(0, 10, 128)]

    def step(w1, w2, x, y):
        scale = jnp.float16(128.0)

        def loss(w1, w2):
            h = jax.nn.relu(x @ w1)
            logits = (h @ w2).astype(jnp.float32)
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1)) * scale

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        finite = jnp.all(jnp.isfinite(g1)) & jnp.all(jnp.isfinite(g2))
        lr = jnp.where(finite, 0.01 / scale, 0.0).astype(jnp.float16)
        return w1 - lr * g1, w2 - lr * g2

    return step, (w1, w2, x, y)


def prog_bf16_cnn_step(rng, B=16):
    x = rng.standard_normal((B, 32, 32, 3)).astype(jnp.bfloat16)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, B)]
    k1 = (rng.standard_normal((3, 3, 3, 32)) * 0.2).astype(jnp.bfloat16)
    k2 = (rng.standard_normal((3, 3, 32, 64)) * 0.05).astype(jnp.bfloat16)
    w = (rng.standard_normal((8 * 8 * 64, 10)) * 0.01).astype(jnp.bfloat16)
    dn = ("NHWC", "HWIO", "NHWC")

    def step(k1, k2, w, x, y):
        def loss(k1, k2, w):
            h = jax.nn.relu(jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME",
                                                         dimension_numbers=dn))
            h = jax.nn.relu(jax.lax.conv_general_dilated(h, k2, (2, 2), "SAME",
                                                         dimension_numbers=dn))
            h = h.reshape(B, 8, 2, 8, 2, 64).mean((2, 4))
            logits = (h.reshape(B, -1) @ w).astype(jnp.float32)
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1))

        grads = jax.grad(loss, argnums=(0, 1, 2))(k1, k2, w)
        return tuple(p - jnp.bfloat16(0.01) * g for p, g in zip((k1, k2, w), grads))

    return step, (k1, k2, w, x, y)


def prog_avg_pool(rng):
    x = rng.standard_normal((8, 56, 56, 64), dtype=np.float32)

    def f(x):
        s = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        return s / 9.0

    return f, (x,)


def prog_pad_concat_reverse(rng):
    a = rng.standard_normal((512, 300), dtype=np.float32)
    b = rng.standard_normal((512, 212), dtype=np.float32)

    def f(a, b):
        c = jnp.concatenate([a, jnp.flip(b, 1)], axis=1)
        p = jnp.pad(c, ((2, 2), (0, 4)), constant_values=1.0)
        return jnp.tanh(p) * 2.0 + jnp.roll(p, 3, axis=0)

    return f, (a, b)


PROGRAMS = [
    ("gru lax.scan T=512 value_and_grad", prog_gru_scan),
    ("bf16 layernorm+gelu 256x1024", prog_bf16_layernorm_gelu),
    ("f16 mlp step, loss scaling", prog_f16_mlp_loss_scaling),
    ("bf16 cnn step b16 32x32 conv32/conv64", prog_bf16_cnn_step),
    ("avg_pool 3x3/2 b8 56x56x64", prog_avg_pool),
    ("concat/pad/reverse/roll 512x512", prog_pad_concat_reverse),
]


def measure(fn, args, device, repeat):
    args = jax.device_put(args, device)
    f = jax.jit(fn)
    start = time.perf_counter()
    out = jax.block_until_ready(f(*args))
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - start)
    leaves = [np.asarray(v, dtype=np.float64) for v in jax.tree_util.tree_leaves(out)]
    return statistics.median(times), first, leaves


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="run the programs whose name contains this")
    opts = parser.parse_args()
    ember, cpu = jax.devices("ember")[0], jax.devices("cpu")[0]
    print(f"jax {jax.__version__}; {os.cpu_count()} cpu cores")
    print(f"{'program':36s} {'ember step':>11s} {'xla step':>10s} {'ratio':>7s} "
          f"{'ember first':>12s} {'xla first':>10s} {'max diff':>9s}")
    ratios = []
    for name, make in PROGRAMS:
        if opts.only not in name:
            continue
        fn, args = make(np.random.default_rng(0))
        te, fe, oe = measure(fn, args, ember, opts.repeat)
        tx, fx, ox = measure(fn, args, cpu, opts.repeat)
        diff = max(float(np.max(np.abs(a - b))) if a.size else 0.0 for a, b in zip(oe, ox))
        ratios.append(te / tx)
        print(f"{name:36s} {te * 1e3:9.2f}ms {tx * 1e3:8.2f}ms {te / tx:6.2f}x "
              f"{fe * 1e3:10.0f}ms {fx * 1e3:8.0f}ms {diff:9.2g}")
    print(f"\ngeometric mean step ratio: {float(np.exp(np.mean(np.log(ratios)))):.2f}x")


if __name__ == "__main__":
    main()
