"""The LLVM code generator's loop kernels against Ember's chunked kernels and XLA:CPU, in the same
process: each program is compiled three times, by Ember with its loop kernels compiled by LLVM
(the default), by Ember with them off (EMBER_FLAGS=--host_llvm=off: the chunked kernels of
compiler/host/fast_loop.cc) and by XLA:CPU, and the table gives median step times, the ratios to
XLA:CPU (below 1.0: faster than XLA) and the PJRT compile times.

Programs: an f32 elementwise chain (x*y + z, max with 0, a division by |y| + 1, a select) on
4M elements, a softmax-like chain over 4096x1024 (x minus its row statistics, broadcast along
rows, scaled by a column vector, clamped) whose row statistics are inputs, so the whole program
is one loop kernel, an s32 chain (shifts, integer division, remainder, min) on 4M elements, and
an f64 chain. Exponentials and reductions are not in the code generator yet.

    EMBER_PJRT_PLUGIN_PATH=$PWD/build/pjrt_plugin/libpjrt_ember.so .venv/bin/python bench/codegen_bench.py

A benchmark, not a test: nothing here asserts a speed.
"""
import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def prog_elementwise(rng):
    n = 4 * 1024 * 1024
    x, y, z = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))

    def f(x, y, z):
        a = jnp.maximum(x * y + z, 0.0)
        b = a / (jnp.abs(y) + 1.0)
        return jnp.where(x > z, b, -b) - 0.5 * x

    return f, (x, y, z)


def prog_softmax_like(rng):
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    m = rng.standard_normal((4096,), dtype=np.float32)
    s = (rng.random((4096,), dtype=np.float32) + 0.5)
    g = rng.standard_normal((1024,), dtype=np.float32)

    def f(x, m, s, g):
        y = (x - m[:, None]) / s[:, None] * g[None, :]
        return jnp.clip(y, -3.0, 3.0)

    return f, (x, m, s, g)


def prog_int_chain(rng):
    n = 4 * 1024 * 1024
    a = rng.integers(-2**20, 2**20, n, dtype=np.int32)
    b = rng.integers(-50, 50, n, dtype=np.int32)

    def f(a, b):
        q = a // jnp.where(b == 0, 1, b)
        r = jnp.minimum((a << 3) ^ b, q) + (a >> 2)
        return r

    return f, (a, b)


def prog_f64_chain(rng):
    n = 2 * 1024 * 1024
    x, y = (rng.standard_normal(n) for _ in range(2))

    def f(x, y):
        return jnp.sqrt(jnp.abs(x * y - 0.25)) + jnp.floor(x * 3.0) * y

    return f, (x, y)


PROGRAMS = [
    ("elementwise f32 chain 4M", prog_elementwise),
    ("softmax-like chain 4096x1024", prog_softmax_like),
    ("s32 chain 4M", prog_int_chain),
    ("f64 chain 2M", prog_f64_chain),
]


def renamed(fn, name):
    """`fn` under another name: its lowering differs, so neither JAX's in-process compilation
    cache nor Ember's returns the executable compiled for another variant."""
    def wrapper(*args):
        return fn(*args)
    wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper


def llvm_report(fn, args, device):
    """The cost report's "llvm kernels" line for `fn` compiled by Ember."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["EMBER_FLAGS"] = f"--dump_to={tmp}"
        try:
            jax.jit(renamed(fn, "report")).lower(*jax.device_put(args, device)).compile()
        finally:
            os.environ.pop("EMBER_FLAGS", None)
        for path in glob.glob(os.path.join(tmp, "*.cost.txt")):
            for line in open(path):
                if line.startswith("llvm kernels:"):
                    return line.strip()
    return "no cost report"


def measure(fn, args, device, opts, flags=None, name="f"):
    """Returns (compile seconds, median step seconds, result)."""
    args = jax.device_put(args, device)
    lowered = jax.jit(renamed(fn, name)).lower(*args)
    old = os.environ.get("EMBER_FLAGS")
    if flags is not None:
        os.environ["EMBER_FLAGS"] = flags  # read by Ember at each compile
    try:
        start = time.perf_counter()
        compiled = lowered.compile()
        compile_s = time.perf_counter() - start
    finally:
        if old is None:
            os.environ.pop("EMBER_FLAGS", None)
        else:
            os.environ["EMBER_FLAGS"] = old
    out = None
    for _ in range(opts.warmup):
        out = compiled(*args)
        out.block_until_ready()
    times = []
    deadline = time.perf_counter() + opts.min_time
    while len(times) < opts.repeats and (len(times) < 3 or time.perf_counter() < deadline):
        start = time.perf_counter()
        out = compiled(*args)
        out.block_until_ready()
        times.append(time.perf_counter() - start)
    return compile_s, statistics.median(times), np.asarray(out)


def fmt(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--min-time", type=float, default=1.5)
    opts = parser.parse_args()
    ember = jax.devices("ember")[0]
    cpu = jax.devices("cpu")[0]
    print(f"jax {jax.__version__}; {os.cpu_count()} cpu cores")
    header = (f"{'program':30} {'llvm':>10} {'chunked':>10} {'xla':>10} {'llvm/xla':>9} "
              f"{'chunk/xla':>9} {'llvm/chunk':>10}   {'compile llvm/chunked/xla':>28}")
    print(header)
    print("-" * len(header))
    failed = False
    for name, make in PROGRAMS:
        fn, args = make(np.random.default_rng(0))
        try:
            cl, sl, rl = measure(fn, args, ember, opts, name="llvm")
            cc, sc, rc = measure(fn, args, ember, opts, flags="--host_llvm=off", name="chunked")
            cx, sx, rx = measure(fn, args, cpu, opts, name="xla")
            same = np.array_equal(rl, rc, equal_nan=True)
            print(f"{name:30} {fmt(sl):>10} {fmt(sc):>10} {fmt(sx):>10} {sl / sx:>8.2f}x "
                  f"{sc / sx:>8.2f}x {sl / sc:>9.2f}x   "
                  f"{fmt(cl):>9} {fmt(cc):>9} {fmt(cx):>9}"
                  f"{'' if same else '  (llvm and chunked results differ!)'}", flush=True)
            print(f"{'':30} {llvm_report(fn, args, ember)}", flush=True)
            failed = failed or not same
        except Exception as e:  # report and go on
            print(f"{name:30} FAILED: {type(e).__name__}: {str(e)[:200]}", flush=True)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
