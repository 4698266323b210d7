"""How fast Ember's frontends read a large program, against jaxlib's own readers in the same run.

The program is the training step of a 12-layer transformer encoder (Adam, hidden 256, 4 heads,
sequence 128, batch 4), lowered by JAX once and written in the three forms a PJRT plugin is sent:
the StableHLO portable artifact (VHLO bytecode, what JAX sends), the MLIR text, and the serialized
xla.HloModuleProto (what TensorFlow sends). Ember's numbers come from the C++ binary
frontend_read_bench (build it with -DEMBER_BUILD_BENCH=ON); jaxlib's from its Python bindings:
`deserialize_portable_artifact` (VHLO bytecode -> StableHLO module), `ir.Module.parse` (text) and
`hlo_to_stablehlo` (HloModuleProto -> StableHLO, which also serializes its result: an upper
bound for jaxlib's HLO import).

    cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_BUILD_BENCH=ON
    cmake --build build-bench --target frontend_read_bench
    .venv/bin/python bench/frontend_read.py --bench build-bench/bench/frontend_read_bench

This is a benchmark, not a test: nothing here asserts a speed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def transformer_step(layers=12, d=256, heads=4, ff=1024, seq=128, batch=4, vocab=512):
    rng = np.random.default_rng(0)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    params = {
        "embed": w(vocab, d),
        "layers": [{"qkv": w(d, 3 * d), "o": w(d, d), "ln1": np.ones(d, np.float32),
                    "ln2": np.ones(d, np.float32), "ff1": w(d, ff), "ff2": w(ff, d)}
                   for _ in range(layers)],
        "out": w(d, vocab),
    }

    def norm(x, g):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g

    def loss(p, tokens, labels):
        x = p["embed"][tokens]
        for lp in p["layers"]:  # unrolled: one large module, as many training steps are
            h = norm(x, lp["ln1"])
            q, k, v = jnp.split(h @ lp["qkv"], 3, axis=-1)
            split = lambda t: t.reshape(batch, seq, heads, d // heads).transpose(0, 2, 1, 3)
            q, k, v = split(q), split(k), split(v)
            a = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads), axis=-1)
            x = x + (a @ v).transpose(0, 2, 1, 3).reshape(batch, seq, d) @ lp["o"]
            x = x + jax.nn.gelu(norm(x, lp["ln2"]) @ lp["ff1"]) @ lp["ff2"]
        logits = x @ p["out"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[..., None], -1))

    def step(p, m, v, tokens, labels):
        g = jax.grad(loss)(p, tokens, labels)
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        p = jax.tree.map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), p, m, v)
        return p, m, v

    zeros = jax.tree.map(np.zeros_like, params)
    tokens = rng.integers(0, vocab, (batch, seq)).astype(np.int32)
    return jax.jit(step), (params, zeros, zeros, tokens, tokens)


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", default="build-bench/bench/frontend_read_bench",
                        help="path of the frontend_read_bench binary")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--keep", help="write the program files to this folder and keep them")
    args = parser.parse_args()

    step, step_args = transformer_step(layers=args.layers)
    t0 = time.perf_counter()
    lowered = step.lower(*step_args)
    exported = jax.export.export(step)(*step_args)
    print(f"lowered and exported in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    forms = {
        "step.mlirbc": exported.mlir_module_serialized,  # the portable artifact JAX sends
        "step.mlir": lowered.as_text().encode(),
        "step.hlo.pb": lowered.compiler_ir("hlo").as_serialized_hlo_module_proto(),
    }
    folder = args.keep or tempfile.mkdtemp(prefix="ember_frontend_read_")
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, data in forms.items():
        paths.append(os.path.join(folder, name))
        with open(paths[-1], "wb") as f:
            f.write(data)

    # jaxlib's readers, same files, same process run.
    from jax._src.interpreters import mlir
    from jax._src.lib import _jax
    from jax._src.lib.mlir import ir

    def xla_bytecode():
        with mlir.make_ir_context():
            _jax.mlir.deserialize_portable_artifact(forms["step.mlirbc"])

    def xla_text():
        with mlir.make_ir_context():
            ir.Module.parse(forms["step.mlir"].decode())

    def xla_hlo():
        _jax.mlir.hlo_to_stablehlo(forms["step.hlo.pb"])

    xla_ms = {"step.mlirbc": timed(xla_bytecode, args.repeats),
              "step.mlir": timed(xla_text, args.repeats),
              "step.hlo.pb": timed(xla_hlo, args.repeats)}

    if not os.path.exists(args.bench):
        sys.exit(f"{args.bench} not found: configure with -DEMBER_BUILD_BENCH=ON and build "
                 "frontend_read_bench (see the module docstring)")
    out = subprocess.run([args.bench, f"--repeats={args.repeats}"] + paths, check=True,
                         capture_output=True, text=True).stdout
    ember = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        ember[f[0]] = (f[1], float(f[2]), float(f[3]), float(f[4]), float(f[5]), int(f[7]))

    print(f"12-layer transformer training step ({args.layers} layers), median of "
          f"{args.repeats}; Ember = read + import to ir::Module")
    print(f"{'form':<12} {'reader':<9} {'MB':>7} {'read ms':>9} {'import ms':>10} "
          f"{'Ember ms':>9} {'Ember MB/s':>11} {'IR ops':>7} {'jaxlib ms':>10} {'jaxlib MB/s':>12} "
          f"{'Ember/jaxlib':>13}")
    for name in forms:
        reader, mb, read, imp, total, ops = ember[name]
        x = xla_ms[name]
        print(f"{name:<12} {reader:<9} {mb:7.2f} {read:9.2f} {imp:10.2f} {total:9.2f} "
              f"{mb / (total / 1e3):11.1f} {ops:7d} {x:10.2f} {mb / (x / 1e3):12.1f} "
              f"{total / x:13.2f}")
    print("jaxlib columns: bytecode = deserialize_portable_artifact (VHLO -> StableHLO), "
          "text = ir.Module.parse, hlo = hlo_to_stablehlo (includes re-serializing its result)")
    if not args.keep:
        for p in paths:
            os.remove(p)
        os.rmdir(folder)


if __name__ == "__main__":
    main()
