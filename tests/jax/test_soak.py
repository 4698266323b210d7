"""Soak test (issue 19), bounded for CI: several threads compile and run a mix of programs
(compiled kernels, evaluator ops, matrix products, donated updates, programs too big for the
device) on one Ember device with a small memory limit, deleting and donating buffers as they go.
Launches past the limit must fail with RESOURCE_EXHAUSTED and nothing else; every result that is
returned must be right; at the end nothing crashed and the device's bytes_in_use is back where
it started. Runs in a child process that owns the memory limit."""
import json
import os
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent("""
    import gc, json, random, sys, threading
    import jax, jax.numpy as jnp
    import numpy as np

    device = jax.devices()[0]
    start = device.memory_stats()["bytes_in_use"]
    PROGRAMS = {
        "chain": (jax.jit(lambda x: jnp.tanh(x * 2.0 - 1.0) + x), lambda x: np.tanh(x * 2 - 1) + x),
        "sort": (jax.jit(lambda x: jnp.sort(x[::-1])), lambda x: np.sort(x[::-1])),
        "matmul": (jax.jit(lambda x: x.reshape(-1, 64) @ x.reshape(64, -1)[:, :64]),
                   lambda x: x.reshape(-1, 64) @ x.reshape(64, -1)[:, :64]),
        "donate": (jax.jit(lambda x: x * 3.0 + 1.0, donate_argnums=0), lambda x: x * 3 + 1),
        # 4n^2 bytes of temporaries: far past the limit for the larger sizes.
        "outer": (jax.jit(lambda x: jnp.sort(jnp.outer(x, x).ravel())[-4:]),
                  lambda x: np.sort(np.outer(x, x).ravel())[-4:]),
    }
    counts = {"ok": 0, "exhausted": 0}
    errors = []
    lock = threading.Lock()

    def worker(seed):
        rng = random.Random(seed)
        kept = []
        for _ in range(int(sys.argv[1])):
            name = rng.choice(sorted(PROGRAMS))
            fn, ref = PROGRAMS[name]
            n = 64 * rng.choice([16, 64, 256, 1024]) if name != "outer" else rng.choice([512, 6000])
            host = np.random.default_rng(rng.randrange(1 << 30)).uniform(-1, 1, n).astype(np.float32)
            try:
                x = jax.device_put(host, device)
                y = fn(x)
                got = np.asarray(y)
                want = ref(host.astype(np.float64)).astype(np.float32)
                if not np.allclose(got, want, rtol=2e-5, atol=2e-5):
                    with lock: errors.append(f"{name} n={n}: wrong result")
                with lock: counts["ok"] += 1
                if rng.random() < 0.5:
                    y.delete()
                else:
                    kept.append(y)
                if len(kept) > 3:
                    kept.pop(0).delete()
            except Exception as e:
                if "RESOURCE_EXHAUSTED" in str(e):
                    with lock: counts["exhausted"] += 1
                else:
                    with lock: errors.append(f"{name} n={n}: {type(e).__name__}: {str(e)[:300]}")
        for y in kept:
            y.delete()

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    gc.collect()
    print(json.dumps({"start": start, "end": device.memory_stats()["bytes_in_use"],
                      "counts": counts, "errors": errors[:10]}))
""")


def test_threads_compiling_running_and_running_out_of_memory():
    env = dict(os.environ, JAX_PLATFORMS="ember", EMBER_MEMORY_LIMIT_BYTES=str(64 << 20))
    proc = subprocess.run([sys.executable, "-c", _CHILD, "40"], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["errors"] == [], out
    assert out["counts"]["ok"] > 0 and out["counts"]["exhausted"] > 0, out
    assert out["end"] == out["start"], out
