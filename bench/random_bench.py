"""Random numbers at scale on Ember and on XLA:CPU (issue 12, item 7): time and peak resident
memory of `jax.random.bernoulli(key, 1e-10, shape=N)` (and of uniform / normal draws of the same
size), each backend measured in a child process of its own so that its peak RSS is its own, all
from one run of this script. Prints a table with Ember / XLA:CPU ratios. A benchmark, not a test.

    .venv/bin/python bench/random_bench.py                  # N = 10**8
    .venv/bin/python bench/random_bench.py --size 10000000  # smaller
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

PROGRAMS = {
    "bernoulli": "lambda k: jax.random.bernoulli(k, 1e-10, shape=(n,))",
    "uniform": "lambda k: jax.random.uniform(k, (n,))",
    "normal": "lambda k: jax.random.normal(k, (n,))",
}


def child(backend, name, n):
    os.environ["JAX_PLATFORMS"] = backend
    import jax  # pylint: disable=import-outside-toplevel
    fn = jax.jit(eval(PROGRAMS[name], {"jax": jax, "n": n}))  # pylint: disable=eval-used
    key = jax.random.key(0)
    t0 = time.perf_counter()
    out = fn(key)
    out.block_until_ready()
    first = time.perf_counter() - t0
    del out
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn(key).block_until_ready()
        times.append(time.perf_counter() - t0)
    times.sort()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"first_s": first, "step_s": times[len(times) // 2],
                      "peak_rss_mb": peak_kb / 1024}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10**8)
    parser.add_argument("--only", default="")
    parser.add_argument("--child", nargs=3, metavar=("BACKEND", "PROGRAM", "SIZE"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    print(f"N = {args.size}: first call (compile + run), median step of 3, peak RSS of the process")
    print(f"{'program':10s} {'backend':7s} {'first s':>9s} {'step s':>9s} {'peak MB':>9s}")
    for name in PROGRAMS:
        if args.only not in name:
            continue
        result = {}
        for backend in ("cpu", "ember"):
            proc = subprocess.run([sys.executable, __file__, "--child", backend, name,
                                   str(args.size)], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"{name:10s} {backend:7s} failed: {proc.stderr.strip()[-300:]}")
                continue
            result[backend] = json.loads(proc.stdout.strip().splitlines()[-1])
            r = result[backend]
            print(f"{name:10s} {backend:7s} {r['first_s']:9.2f} {r['step_s']:9.3f} "
                  f"{r['peak_rss_mb']:9.0f}")
        if len(result) == 2:
            e, c = result["ember"], result["cpu"]
            print(f"{name:10s} {'ratio':7s} {e['first_s'] / c['first_s']:9.2f} "
                  f"{e['step_s'] / c['step_s']:9.2f} {e['peak_rss_mb'] / c['peak_rss_mb']:9.2f}")


if __name__ == "__main__":
    main()
