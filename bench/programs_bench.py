"""Programs that used to fall off Ember's fast path (issue 14's table), next to XLA:CPU in the
same process: a GRU over lax.scan (while loops with captured weights, a carried output written
row by row), bf16 layernorm + gelu (narrow floats and transcendentals), an f16 MLP training step
with loss scaling, avg_pool (reduce_window), max_pool's gradient (select_and_scatter), a
concatenate/pad/reverse chain, a bf16 CNN training step, jax.random on 10^8 elements, a 2-layer
Transformer LM training step with AdamW (written in plain JAX: no flax in the pinned
environment) and an MLP step whose update sits in a lax.cond. Each program is compiled by Ember
and by XLA:CPU; the table gives median step times, the ratio (below 1.0: Ember is faster), the
first-call time (compile included) and the largest difference of the results.

    .venv/bin/python bench/programs_bench.py [--repeat N] [--only NAME_PART] [--warmup-s S]

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


def prog_max_pool_grad(rng):
    x = rng.standard_normal((8, 56, 56, 64), dtype=np.float32)

    def loss(x):
        p = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        return jnp.sum(p * p)

    return jax.grad(loss), (x,)


def prog_pad_concat_reverse(rng):
    a = rng.standard_normal((512, 300), dtype=np.float32)
    b = rng.standard_normal((512, 212), dtype=np.float32)

    def f(a, b):
        c = jnp.concatenate([a, jnp.flip(b, 1)], axis=1)
        p = jnp.pad(c, ((2, 2), (0, 4)), constant_values=1.0)
        return jnp.tanh(p) * 2.0 + jnp.roll(p, 3, axis=0)

    return f, (a, b)


def prog_random(rng, n=10**8):
    key = jax.random.key_data(jax.random.key(int(rng.integers(1 << 30))))

    def f(key):
        return jax.random.uniform(jax.random.wrap_key_data(key), (n,), jnp.float32)

    return f, (key,)


def prog_transformer_lm_step(rng, vocab=256, seq=64, batch=8, d=128, heads=4, layers=2):
    def dense(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    params = {"embed": dense(vocab, d), "out": dense(d, vocab), "layers": [
        {"qkv": dense(d, 3 * d), "proj": dense(d, d), "up": dense(d, 4 * d),
         "down": dense(4 * d, d), "g1": np.ones(d, np.float32), "g2": np.ones(d, np.float32)}
        for _ in range(layers)]}
    tokens = rng.integers(0, vocab, (batch, seq + 1)).astype(np.int32)
    zeros = jax.tree_util.tree_map(np.zeros_like, params)
    state = (params, zeros, zeros, np.int32(0))

    def norm(x, g):
        return (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5) * g

    def loss(params, tokens):
        x = params["embed"][tokens[:, :-1]]
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        for p in params["layers"]:
            q, k, v = jnp.split(norm(x, p["g1"]) @ p["qkv"], 3, axis=-1)
            split = lambda t: t.reshape(batch, seq, heads, d // heads).transpose(0, 2, 1, 3)
            a = split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(d // heads)
            a = jax.nn.softmax(jnp.where(mask, a, -1e9), axis=-1) @ split(v)
            x = x + a.transpose(0, 2, 1, 3).reshape(batch, seq, d) @ p["proj"]
            x = x + jax.nn.gelu(norm(x, p["g2"]) @ p["up"]) @ p["down"]
        logits = x @ params["out"]
        labels = jax.nn.one_hot(tokens[:, 1:], vocab)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, -1))

    def step(state, tokens):  # AdamW
        params, m, v, t = state
        l, g = jax.value_and_grad(loss)(params, tokens)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        c1, c2 = 1 - 0.9 ** t, 1 - 0.999 ** t
        params = jax.tree_util.tree_map(
            lambda p, m, v: p - 1e-3 * (m / c1 / (jnp.sqrt(v / c2) + 1e-8) + 0.01 * p),
            params, m, v)
        return l, (params, m, v, t)

    return step, (state, tokens)


def prog_cond_skip_update(rng):
    w1 = (rng.standard_normal((512, 512)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((512, 10)) * 0.05).astype(np.float32)
    x = rng.standard_normal((128, 512)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def step(w1, w2, x, y):
        def loss(w1, w2):
            logits = jnp.tanh(x @ w1) @ w2
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, -1))

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        finite = jnp.all(jnp.isfinite(g1)) & jnp.all(jnp.isfinite(g2))
        # lax.cond: the update's branch reads the weights and gradients it captures.
        return jax.lax.cond(finite, lambda: (w1 - 0.01 * g1, w2 - 0.01 * g2), lambda: (w1, w2))

    return step, (w1, w2, x, y)


PROGRAMS = [
    ("gru lax.scan T=512 value_and_grad", prog_gru_scan),
    ("bf16 layernorm+gelu 256x1024", prog_bf16_layernorm_gelu),
    ("f16 mlp step, loss scaling", prog_f16_mlp_loss_scaling),
    ("avg_pool 3x3/2 b8 56x56x64", prog_avg_pool),
    ("max_pool grad 3x3/2 b8 56x56x64", prog_max_pool_grad),
    ("concat/pad/reverse/roll 512x512", prog_pad_concat_reverse),
    ("bf16 cnn step b16 32x32 conv32/conv64", prog_bf16_cnn_step),
    ("jax.random.uniform 1e8", prog_random),
    ("transformer lm step 2x d128 adamw", prog_transformer_lm_step),
    ("lax.cond skip-update mlp step", prog_cond_skip_update),
]


def measure(fn, args, devices, repeat, warmup_s):
    """Per device: (median step seconds, first call seconds, output leaves). After the first call,
    untimed steps for `warmup_s` seconds (Ember's tiered compile runs mid-sized kernels on quick
    code until their optimized code, compiled in the background, replaces it). The timed steps
    of the devices alternate (the first swapping every round), so a machine whose speed drifts
    moves every device's median alike."""
    sides = []
    for device in devices:
        placed = jax.device_put(args, device)
        f = jax.jit(fn)
        start = time.perf_counter()
        out = jax.block_until_ready(f(*placed))
        sides.append({"f": f, "args": placed, "first": time.perf_counter() - start, "out": out,
                      "times": []})
        deadline = time.perf_counter() + warmup_s
        while time.perf_counter() < deadline:
            jax.block_until_ready(f(*placed))
    for r in range(repeat):
        for side in (sides if r % 2 == 0 else sides[::-1]):
            start = time.perf_counter()
            jax.block_until_ready(side["f"](*side["args"]))
            side["times"].append(time.perf_counter() - start)
    return [(statistics.median(s["times"]), s["first"],
             [np.asarray(v) for v in jax.tree_util.tree_leaves(s["out"])]) for s in sides]


def MaxDiff(a, b, block=1 << 22):
    """The largest |a - b| in float64, a block at a time (the random arrays are 400 MB)."""
    a, b = a.reshape(-1), b.reshape(-1)
    most = 0.0
    for i in range(0, a.size, block):
        d = np.abs(a[i:i + block].astype(np.float64) - b[i:i + block].astype(np.float64))
        most = max(most, float(np.max(d)))
    return most


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="programs whose name contains this")
    parser.add_argument("--warmup-s", type=float, default=1.0,
                        help="seconds of untimed steps per backend before the timed ones")
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
        (te, fe, oe), (tx, fx, ox) = measure(fn, args, (ember, cpu), opts.repeat, opts.warmup_s)
        diff = max(MaxDiff(a, b) for a, b in zip(oe, ox))
        ratios.append(te / tx)
        print(f"{name:36s} {te * 1e3:9.2f}ms {tx * 1e3:8.2f}ms {te / tx:6.2f}x "
              f"{fe * 1e3:10.0f}ms {fx * 1e3:8.0f}ms {diff:9.2g}")
    print(f"\ngeometric mean step ratio: {float(np.exp(np.mean(np.log(ratios)))):.2f}x")


if __name__ == "__main__":
    main()
