"""lax.top_k and the cumulative reductions (jnp.cumsum, cumprod, cummax, cummin, reverse cumsum)
on Ember against XLA:CPU in the same process: median step times of jitted single-op programs,
the ratio to XLA:CPU (below 1.0: faster than XLA), and whether the results equal XLA's (values
and indices of top_k; every bit of the scans, which Ember folds in XLA's order).

    EMBER_PJRT_PLUGIN_PATH=$PWD/build/pjrt_plugin/libpjrt_ember.so .venv/bin/python bench/select_scan_bench.py

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


def programs(shape):
    return {
        "top_k k=8": lambda x: jax.lax.top_k(x, 8),
        "top_k k=1": lambda x: jax.lax.top_k(x, 1),
        "top_k k=n/2": lambda x: jax.lax.top_k(x, shape[-1] // 2),
        "cumsum last axis": lambda x: jnp.cumsum(x, axis=-1),
        "cumsum axis 0": lambda x: jnp.cumsum(x, axis=0),
        "cumsum reverse": lambda x: jax.lax.cumsum(x, axis=1, reverse=True),
        # (Its input is 1 + x / 1000, made outside: a fused producer may round differently.)
        "cumprod": lambda x: jnp.cumprod(x, axis=-1),
        "cummax": lambda x: jax.lax.cummax(x, axis=1),
        "cummin axis 0": lambda x: jax.lax.cummin(x, axis=0),
    }


def median_ms(f, args, reps):
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    shape = (args.rows, args.cols)
    x = np.random.default_rng(0).standard_normal(shape).astype(args.dtype)
    ember, cpu = jax.devices("ember")[0], jax.devices("cpu")[0]
    print(f"{args.dtype}{list(shape)}, median of {args.reps} steps")
    for name, fn in programs(shape).items():
        results, times = [], []
        data = (1 + x / 1000).astype(x.dtype) if name == "cumprod" else x
        for dev in (ember, cpu):
            f = jax.jit(fn)
            a = jax.device_put(data, dev)
            times.append(median_ms(f, (a,), args.reps))
            results.append([np.asarray(r) for r in jax.tree_util.tree_leaves(f(a))])
        same = all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                   for a, b in zip(*results))
        print(f"{name:18s} ember {times[0]:8.3f} ms  xla {times[1]:8.3f} ms  "
              f"ratio {times[0] / times[1]:5.2f}  equal to XLA: {same}")


if __name__ == "__main__":
    main()
