"""Ember's host benchmarks: each program runs on Ember and on XLA:CPU (jaxlib's cpu backend) in
the same process, and the table gives the median times and their ratio (Ember / XLA:CPU; below
1.0 means Ember is faster).

Programs (issue 5): reduce_sum(x + y*z) on 16M f32, softmax and layernorm on 4096x1024, tanh
on 1M f32, a 1024x1024 matmul, a ResNet-like 3x3 convolution (batch 8, 56x56, 64->64 channels,
NHWC), an MLP training step (784-512-512-10, batch 128, SGD), a BERT-like encoder
layer training step (hidden 256, 4 heads, seq 128, batch 8, Adam), and the dispatch latency of a
trivial jitted function. Compile time is PJRT compile only (`Lowered.compile()`; the lowering is
shared by both backends and not counted), the median of --compiles cold compiles. The first-call
column is a cold compile and its first step together (Ember's tiered compile returns before
its optimized code is ready, and a first step may wait for it): the median of --compiles, as
a ratio. The memory
column is the ratio of the compiled programs' arguments + outputs + temporaries
(`memory_analysis()`, less what outputs alias).

    .venv/bin/python bench/bench.py                 # every program
    .venv/bin/python bench/bench.py --only matmul   # programs whose name contains "matmul"
    .venv/bin/python bench/bench.py --json out.json # also write the numbers

Each measurement runs the step on both backends, alternating one step of each, until
--min-time seconds per backend or --repeats rounds have passed (at least --min-repeats), after
--warmup untimed runs, and reports each backend's median: on a shared machine whose speed drifts,
both see the same conditions. This is a benchmark, not a
test: nothing here asserts a speed.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


# ---- programs: each returns (step function, argument tuple of numpy arrays, carries_state) ----
# A program with state (training steps) feeds its outputs back as the next call's inputs, so the
# timed loop measures steady-state steps, as a training loop would run them.

def prog_reduce_sum(rng):
    n = 16 * 1024 * 1024
    x, y, z = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    return (lambda x, y, z: jnp.sum(x + y * z)), (x, y, z), False


def prog_softmax(rng):
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    return (lambda x: jax.nn.softmax(x, axis=-1)), (x,), False


def prog_tanh(rng):
    x = rng.standard_normal(1 << 20, dtype=np.float32) * 3
    return jnp.tanh, (x,), False


def prog_layernorm(rng):
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    g = rng.standard_normal((1024,), dtype=np.float32)
    b = rng.standard_normal((1024,), dtype=np.float32)

    def layernorm(x, g, b):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    return layernorm, (x, g, b), False


def prog_matmul(rng):
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    return (lambda a, b: a @ b), (a, b), False


def prog_conv(rng):
    x = rng.standard_normal((8, 56, 56, 64), dtype=np.float32)
    w = (0.05 * rng.standard_normal((3, 3, 64, 64))).astype(np.float32)

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    return conv, (x, w), False


def _dense_init(rng, fan_in, fan_out):
    w = (rng.standard_normal((fan_in, fan_out)) / math.sqrt(fan_in)).astype(np.float32)
    return w, np.zeros((fan_out,), np.float32)


def prog_mlp_step(rng):
    sizes = [784, 512, 512, 10]
    params = tuple(_dense_init(rng, a, b) for a, b in zip(sizes[:-1], sizes[1:]))
    x = rng.standard_normal((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def loss(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i + 1 < len(params):
                h = jax.nn.relu(h)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h) * y, axis=-1))

    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), x, y

    return step, (params, x, y), True


def prog_bert_layer_step(rng):
    hidden, heads, seq, batch, ffn = 256, 4, 128, 8, 1024
    head_dim = hidden // heads

    def dense(fan_in, fan_out):
        return _dense_init(rng, fan_in, fan_out)

    params = {
        "q": dense(hidden, hidden), "k": dense(hidden, hidden), "v": dense(hidden, hidden),
        "o": dense(hidden, hidden), "f1": dense(hidden, ffn), "f2": dense(ffn, hidden),
        "ln1": (np.ones(hidden, np.float32), np.zeros(hidden, np.float32)),
        "ln2": (np.ones(hidden, np.float32), np.zeros(hidden, np.float32)),
    }
    x = rng.standard_normal((batch, seq, hidden), dtype=np.float32)
    target = rng.standard_normal((batch, seq, hidden), dtype=np.float32)

    def layernorm(h, p):
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.var(h, axis=-1, keepdims=True)
        return (h - mean) * jax.lax.rsqrt(var + 1e-5) * p[0] + p[1]

    def layer(p, h):
        def proj(name, t):
            w, b = p[name]
            return t @ w + b

        def split(t):
            return t.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)

        q, k, v = split(proj("q", h)), split(proj("k", h)), split(proj("v", h))
        att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_dim), axis=-1)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        h = layernorm(h + proj("o", ctx), p["ln1"])
        f = proj("f2", jax.nn.gelu(proj("f1", h)))
        return layernorm(h + f, p["ln2"])

    def loss(p, x, t):
        return jnp.mean(jnp.square(layer(p, x) - t))

    zeros = jax.tree_util.tree_map(np.zeros_like, params)
    state = (params, zeros, zeros, np.zeros((), np.float32))

    def step(state, x, t):
        p, m, v, count = state
        g = jax.grad(loss)(p, x, t)
        count = count + 1
        b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mhat_scale = 1 / (1 - b1 ** count)
        vhat_scale = 1 / (1 - b2 ** count)
        p = jax.tree_util.tree_map(
            lambda p, m, v: p - lr * (m * mhat_scale) / (jnp.sqrt(v * vhat_scale) + eps), p, m, v)
        return (p, m, v, count), x, t

    return step, (state, x, target), True


def prog_dispatch(rng):
    x = np.float32(1.0)
    return (lambda x: x + 1), (x,), False


PROGRAMS = [
    ("reduce_sum(x+y*z) 16M", prog_reduce_sum),
    ("softmax 4096x1024", prog_softmax),
    ("layernorm 4096x1024", prog_layernorm),
    ("tanh 1M f32", prog_tanh),
    ("matmul 1024x1024", prog_matmul),
    ("conv 3x3 nhwc b8 56x56 64->64", prog_conv),
    ("mlp step 784-512-512-10 b128", prog_mlp_step),
    ("bert layer step h256 s128 b8 adam", prog_bert_layer_step),
    ("dispatch (x+1 on a scalar)", prog_dispatch),
]


def block(tree):
    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()


def memory_bytes(compiled):
    """Arguments + outputs + temporaries (less what outputs alias) from memory_analysis()."""
    m = compiled.memory_analysis()
    if m is None:
        return None
    return (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
            - m.alias_size_in_bytes)


class Side:
    """One backend's compiled program and its arguments (a training step's state moves on)."""

    def __init__(self, fn, args, device, carries_state, opts):
        self.args = jax.device_put(args, device)
        self.carries_state = carries_state
        # The median of --compiles cold compiles (one compile alone varied up to 2x): JAX's
        # caches are cleared before each (it would otherwise hand back the first executable),
        # and the previous executable is dropped first (Ember's kernel cache keeps a kernel only
        # while some executable holds it).
        compile_times, first_calls = [], []
        for _ in range(opts.compiles):
            self.compiled = None
            lowered = jax.jit(fn).lower(*self.args)
            jax.clear_caches()
            start = time.perf_counter()
            self.compiled = lowered.compile()
            compile_times.append(time.perf_counter() - start)
            block(self.compiled(*self.args))  # (the state does not move on: no donation here)
            first_calls.append(time.perf_counter() - start)
        self.compile_s = statistics.median(compile_times)
        self.first_call_s = statistics.median(first_calls)
        self.memory = memory_bytes(self.compiled)
        for _ in range(opts.warmup):
            self.step()
        self.times = []

    def step(self):
        out = self.compiled(*self.args)
        block(out)
        if self.carries_state:
            self.args = out

    def timed_step(self):
        start = time.perf_counter()
        self.step()
        self.times.append(time.perf_counter() - start)


def measure(fn, args, devices, carries_state, opts):
    """{label: (compile seconds, median step seconds, number of timed steps, memory bytes,
    compile + first step seconds)}.

    The backends' timed steps alternate (which goes first swaps every round), so a machine
    that speeds up or slows down during the measurement moves both medians alike instead of
    the ratio.
    """
    sides = [(label, Side(fn, args, device, carries_state, opts)) for label, device in devices]
    deadline = time.perf_counter() + opts.min_time * len(sides)
    rounds = 0
    while rounds < opts.repeats and (rounds < opts.min_repeats or time.perf_counter() < deadline):
        order = sides if rounds % 2 == 0 else sides[::-1]
        for _, side in order:
            side.timed_step()
        rounds += 1
    return {label: (side.compile_s, statistics.median(side.times), len(side.times), side.memory,
                    side.first_call_s)
            for label, side in sides}


def fmt_time(seconds):
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run the programs whose name contains this")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=50, help="at most this many timed runs")
    parser.add_argument("--min-repeats", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--compiles", type=int, default=5,
                        help="compiles per program and backend (the median is reported)")
    parser.add_argument("--json", help="also write the results to this file")
    opts = parser.parse_args()

    ember = jax.devices("ember")[0]
    cpu = jax.devices("cpu")[0]
    print(f"jax {jax.__version__}; Ember device: {ember}; XLA:CPU device: {cpu}; "
          f"{os.cpu_count()} cpu cores", flush=True)
    rows = []
    header = (f"{'program':36} {'ember step':>11} {'xla step':>11} {'ratio':>7}   "
              f"{'ember compile':>13} {'xla compile':>11} {'ratio':>7}   {'first call':>10}   "
              f"{'memory':>7}")
    print(header)
    print("-" * len(header))
    for name, make in PROGRAMS:
        if opts.only not in name:
            continue
        fn, args, carries_state = make(np.random.default_rng(0))
        row = {"program": name}
        try:
            measured = measure(fn, args, (("xla", cpu), ("ember", ember)), carries_state, opts)
            for label, (c, s, n, mem, first) in measured.items():
                row[f"{label}_compile_s"], row[f"{label}_step_s"], row[f"{label}_runs"] = c, s, n
                row[f"{label}_memory_bytes"] = mem
                row[f"{label}_first_call_s"] = first
            row["step_ratio"] = row["ember_step_s"] / row["xla_step_s"]
            row["compile_ratio"] = row["ember_compile_s"] / row["xla_compile_s"]
            row["first_call_ratio"] = row["ember_first_call_s"] / row["xla_first_call_s"]
            if row["ember_memory_bytes"] and row["xla_memory_bytes"]:
                row["memory_ratio"] = row["ember_memory_bytes"] / row["xla_memory_bytes"]
            memory = f"{row['memory_ratio']:.2f}x" if "memory_ratio" in row else "n/a"
            print(f"{name:36} {fmt_time(row['ember_step_s']):>11} {fmt_time(row['xla_step_s']):>11} "
                  f"{row['step_ratio']:>6.2f}x   {fmt_time(row['ember_compile_s']):>13} "
                  f"{fmt_time(row['xla_compile_s']):>11} {row['compile_ratio']:>6.2f}x   "
                  f"{row['first_call_ratio']:>9.2f}x   {memory:>7}", flush=True)
        except Exception as e:  # a failing program is reported, and the table goes on
            row["error"] = f"{type(e).__name__}: {e}"
            print(f"{name:36} FAILED: {row['error'][:200]}", flush=True)
        rows.append(row)
    steps = [r["step_ratio"] for r in rows if "step_ratio" in r and not r["program"].startswith("dispatch")]
    compiles = [r["compile_ratio"] for r in rows if "compile_ratio" in r]
    if steps:
        print(f"\ngeometric mean step ratio (without dispatch): "
              f"{math.exp(statistics.mean(math.log(r) for r in steps)):.2f}x  (goal <= 1.0)")
    if compiles:
        print(f"geometric mean compile ratio: "
              f"{math.exp(statistics.mean(math.log(r) for r in compiles)):.2f}x  (goal <= 0.25)")
    firsts = [r["first_call_ratio"] for r in rows if "first_call_ratio" in r]
    if firsts:
        print(f"geometric mean first-call ratio (cold compile + first step): "
              f"{math.exp(statistics.mean(math.log(r) for r in firsts)):.2f}x")
    memories = [r["memory_ratio"] for r in rows if "memory_ratio" in r]
    if memories:
        print(f"geometric mean memory ratio (arguments + outputs + temporaries, memory_analysis()): "
              f"{math.exp(statistics.mean(math.log(r) for r in memories)):.2f}x  (goal <= 1.2)")
    dispatch = [r for r in rows if r["program"].startswith("dispatch") and "step_ratio" in r]
    if dispatch:
        print(f"dispatch ratio: {dispatch[0]['step_ratio']:.2f}x  (goal <= 1.2)")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
