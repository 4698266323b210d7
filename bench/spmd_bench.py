"""Partitioned (SPMD) training steps on 1, 2 and 4 host devices, Ember next to XLA:CPU with the
same device counts in the same process (issue 16's bench row): a data-parallel MLP step (batch
split, parameters replicated, the weight gradients all-reduced) and a Megatron-style MLP on a
2x2 mesh (data x model: the hidden layer split over "model"). For each: the median step time,
the ratio (below 1.0: Ember is faster), the largest difference of the results, and Ember's
per-device peak memory over one step (memory_stats() after the first step, each configuration
in a fresh process) next to what a partitioned step needs, and next to XLA:CPU's own per-device
arguments + outputs + temporaries (memory_analysis()). "needed" is the 1-device peak / devices,
plus what each device holds beyond its 1/devices share because the layout replicates it:
- data-parallel: every parameter whole;
- Megatron: each weight split over "model" only (so whole over "data"); the batch and the
  targets split over "data" only; and the row-parallel layer's all-reduced output and its
  gradient ([batch, hidden] each), which the layout holds whole on both "model" devices (the
  next column-parallel layer reads all of it; XLA holds them too). "needed without the
  activations" leaves these last three out (the issue's first yardstick: global bytes /
  devices plus replicated parameters).

    .venv/bin/python bench/spmd_bench.py [--repeat N] [--batch B] [--width W] [--hidden H]

A benchmark, not a test: nothing here asserts a speed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")
os.environ.setdefault("EMBER_HOST_DEVICE_COUNT", "4")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.config.update("jax_num_cpu_devices", 4)


def mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss


def make_problem(rng, batch, width, hidden, depth=3):
    sizes = [width] + [hidden] * (depth - 1) + [width]
    params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
               np.zeros((b,), np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, width)).astype(np.float32)
    y = rng.standard_normal((batch, width)).astype(np.float32)
    return params, x, y


def megatron_specs(layers):
    """Column-parallel then row-parallel layers over "model": (weight, bias) specs."""
    return [(P(None, "model"), P("model")) if k % 2 == 0 else (P("model", None), P())
            for k in range(layers)]


def held_param_bytes(params, megatron, model_size=2):
    """The parameter bytes one device holds: all of them, or each split over "model"."""
    if not megatron:
        return sum(w.nbytes + b.nbytes for w, b in params)
    split = lambda spec: model_size if "model" in tuple(spec) else 1  # noqa: E731
    return sum(w.nbytes / split(sw) + b.nbytes / split(sb)
               for (w, b), (sw, sb) in zip(params, megatron_specs(len(params))))


def held_activation_bytes(batch, width, hidden, megatron, data_size=2, devices=4):
    """The activation bytes one device holds beyond its 1/devices share of the 1-device step's:
    none data-parallel; Megatron: the inputs and targets ([batch, width] each, split over "data"
    only) and the row-parallel output and its gradient ([batch, hidden] each, whole over
    "model")."""
    if not megatron:
        return 0
    beyond = 1 / data_size - 1 / devices
    return (2 * batch * width * 4 + 2 * batch * hidden * 4) * beyond


def place(platform, devices, mesh_shape, axes, params, x, y, megatron):
    mesh = Mesh(np.array(jax.devices(platform)[:devices]).reshape(mesh_shape), axes)
    data = NamedSharding(mesh, P(axes[0]))
    if megatron:
        specs = megatron_specs(len(params))
        placed = [(jax.device_put(w, NamedSharding(mesh, sw)), jax.device_put(b, NamedSharding(mesh, sb)))
                  for (w, b), (sw, sb) in zip(params, specs)]
    else:
        rep = NamedSharding(mesh, P())
        placed = [(jax.device_put(w, rep), jax.device_put(b, rep)) for w, b in params]
    return mesh, placed, jax.device_put(x, data), jax.device_put(y, data)


def time_step(step, args, repeat):
    jax.block_until_ready(step(*args))  # compile and warm up
    times, out = [], None
    for _ in range(repeat):
        out = None  # one step's results alive at a time, as in a loop that carries them
        t0 = time.perf_counter()
        out = jax.block_until_ready(step(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def peak_per_device(platform, devices):
    peaks = []
    for d in jax.devices(platform)[:devices]:
        stats = d.memory_stats() or {}
        if "peak_bytes_in_use" in stats:
            peaks.append(stats["peak_bytes_in_use"])
    return max(peaks) if peaks else None


CONFIGS = [("data-parallel MLP step", 1, (1,), ("data",), False),
           ("data-parallel MLP step", 2, (2,), ("data",), False),
           ("data-parallel MLP step", 4, (4,), ("data",), False),
           ("Megatron MLP step 2x2", 4, (2, 2), ("data", "model"), True)]


def run_config(a, k):
    name, devices, mesh_shape, axes, megatron = CONFIGS[k]
    rng = np.random.default_rng(0)
    params, x, y = make_problem(rng, a.batch, a.width, a.hidden)
    row = {}
    xla_bytes = None
    for platform in ("ember", "cpu"):
        mesh, placed, xs, ys = place(platform, devices, mesh_shape, axes, params, x, y, megatron)
        step = jax.jit(sgd_step)
        with jax.set_mesh(mesh):
            if platform == "ember":
                # One step's peak, in this fresh process: what the step itself needs.
                jax.block_until_ready(step(placed, xs, ys))
                peak = peak_per_device("ember", devices)
            row[platform] = time_step(step, (placed, xs, ys), a.repeat)
            if platform == "cpu":
                m = step.lower(placed, xs, ys).compile().memory_analysis()
                if m is not None:
                    xla_bytes = (m.argument_size_in_bytes + m.output_size_in_bytes
                                 + m.temp_size_in_bytes - m.alias_size_in_bytes)
    (te, oe), (tx, ox) = row["ember"], row["cpu"]
    diff = max(float(np.max(np.abs(np.asarray(p) - np.asarray(q))))
               for p, q in zip(jax.tree.leaves(oe), jax.tree.leaves(ox)))
    print(json.dumps({"ember": te, "xla": tx, "diff": diff,
                      "peak": peak, "xla_bytes": xla_bytes}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--config", type=int, default=-1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.config >= 0:
        run_config(a, a.config)
        return
    params, _, _ = make_problem(np.random.default_rng(0), a.batch, a.width, a.hidden)
    param_bytes = sum(w.nbytes + b.nbytes for w, b in params)
    print(f"batch {a.batch}, width {a.width}, hidden {a.hidden}, 3 layers, f32; "
          f"parameters {param_bytes / 2**20:.1f} MiB; median of {a.repeat} steps")
    print(f"{'program':26} {'devices':>7} {'Ember ms':>9} {'XLA ms':>8} {'ratio':>6} "
          f"{'max diff':>9} {'peak/device':>12} {'needed':>9} {'peak/needed':>11} "
          f"{'w/o activations':>15} {'XLA/device':>11} {'peak/XLA':>8}")
    peak1 = None
    for k, (name, devices, _, _, megatron) in enumerate(CONFIGS):
        cmd = [sys.executable, __file__, "--config", str(k), "--repeat", str(a.repeat),
               "--batch", str(a.batch), "--width", str(a.width), "--hidden", str(a.hidden)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        peak = r["peak"]
        if devices == 1:
            peak1 = peak
        needed = bare = None
        if peak is not None and peak1 is not None:
            bare = peak1 / devices + held_param_bytes(params, megatron) - param_bytes / devices
            needed = bare + held_activation_bytes(a.batch, a.width, a.hidden, megatron)
        mib = lambda b: "n/a" if b is None else f"{b / 2**20:.1f} MiB"  # noqa: E731
        share = "n/a" if needed is None else f"{peak / needed:.2f}"
        share_bare = "n/a" if bare is None else f"{peak / bare:.2f}"
        to_xla = "n/a" if peak is None or not r["xla_bytes"] else f"{peak / r['xla_bytes']:.2f}"
        print(f"{name:26} {devices:7d} {r['ember'] * 1e3:9.2f} {r['xla'] * 1e3:8.2f} "
              f"{r['ember'] / r['xla']:6.2f} {r['diff']:9.2e} {mib(peak):>12} {mib(needed):>9} "
              f"{share:>11} {share_bare:>15} {mib(r['xla_bytes']):>11} {to_xla:>8}", flush=True)


if __name__ == "__main__":
    main()
