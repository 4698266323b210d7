"""The library-class ops (linear algebra, fft) on Ember next to XLA:CPU in the same process:
jnp.linalg.solve (ember_lu + triangular_solve), cholesky, cho_solve, solve_triangular, a batched
inverse, qr, eigh, svd (f32, and c64), eig, schur, hessenberg and tridiagonal (the evaluator's
double-precision cores on DecompositionThunk), a 1-D fft and a 2-D rfft, and the c64 elementwise
product and quotient (libgcc's __muldc3 and __divdc3 inline, elemental_complex.cc). Each is
jitted for both backends on the same
inputs; the table gives median step times, the ratio (below 1.0: Ember is faster) and the
largest difference of the results relative to their largest magnitude.

    .venv/bin/python bench/library_ops_bench.py [--repeat N] [--only NAME_PART] [--warmup-s S]

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


def cases(rng, n=256):
    a = rng.standard_normal((n, n)).astype(np.float32)
    spd = a @ a.T + n * np.eye(n, dtype=np.float32)
    b = rng.standard_normal((n, 64)).astype(np.float32)
    batched = rng.standard_normal((64, 32, 32)).astype(np.float32)
    x1 = rng.standard_normal((1 << 16,)).astype(np.float32)
    x2 = rng.standard_normal((64, 512)).astype(np.float32)
    c = (rng.standard_normal((128, 128)) + 1j * rng.standard_normal((128, 128))).astype(np.complex64)
    hermitian = c @ c.conj().T
    v = (rng.standard_normal(1 << 16) + 1j * rng.standard_normal(1 << 16)).astype(np.complex64)
    w = (rng.standard_normal(1 << 16) + 1j * rng.standard_normal(1 << 16)).astype(np.complex64)
    tri = lambda a, b: jax.scipy.linalg.solve_triangular(  # noqa: E731
        jnp.tril(a) + n * jnp.eye(n), b, lower=True)
    cho = lambda s, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(s), b)  # noqa: E731
    return {
        "solve 256": (jnp.linalg.solve, (a, b)),
        "cholesky 256": (jnp.linalg.cholesky, (spd,)),
        "cho_solve 256": (cho, (spd, b)),
        "solve_triangular 256": (tri, (a, b)),
        "inv 64x32x32": (jnp.linalg.inv, (batched,)),
        "qr 256": (jnp.linalg.qr, (a,)),
        "eigh 256": (jnp.linalg.eigh, (spd,)),
        "svd 128": (jnp.linalg.svd, (a[:128, :128],)),
        "eigh c64 128": (jnp.linalg.eigh, (hermitian,)),
        "svd c64 128": (jnp.linalg.svd, (c,)),
        "eig 64": (lambda m: jnp.linalg.eig(m)[0], (a[:64, :64],)),
        "schur 64": (lambda m: jax.scipy.linalg.schur(m)[0], (a[:64, :64],)),
        "hessenberg 128": (lambda m: jax.scipy.linalg.hessenberg(m), (a[:128, :128],)),
        "tridiagonal 128": (lambda m: jax.lax.linalg.tridiagonal(m)[1:3], (spd[:128, :128],)),
        "fft 64Ki": (jnp.fft.fft, (x1,)),
        "rfft2 64x512": (jnp.fft.rfft2, (x2,)),
        "c64 v*w 64Ki": (lambda v, w: v * w, (v, w)),
        "c64 v/w 64Ki": (lambda v, w: v / w, (v, w)),
    }


def time_on(fn, args, device, repeat, warmup_s):
    placed = [jax.device_put(x, device) for x in args]
    jitted = jax.jit(fn)
    result = jax.block_until_ready(jitted(*placed))
    # Steady state: Ember's tiered compile runs mid-sized kernels on quick code until their
    # optimized code, compiled in the background, replaces it (BUILD.md).
    deadline = time.perf_counter() + warmup_s
    while time.perf_counter() < deadline:
        jax.block_until_ready(jitted(*placed))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(jitted(*placed))
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", default="", help="cases whose name contains this")
    parser.add_argument("--warmup-s", type=float, default=1.0,
                        help="seconds of untimed steps before the timed ones")
    args = parser.parse_args()
    ember, cpu = jax.devices("ember")[0], jax.devices("cpu")[0]
    rng = np.random.default_rng(0)
    print(f"{'case':22s} {'ember ms':>9s} {'xla ms':>9s} {'ratio':>6s} {'max rel diff':>12s}")
    ratios = []
    for name, (fn, inputs) in cases(rng).items():
        if args.only not in name:
            continue
        t_ember, r_ember = time_on(fn, inputs, ember, args.repeat, args.warmup_s)
        t_cpu, r_cpu = time_on(fn, inputs, cpu, args.repeat, args.warmup_s)
        diff = 0.0
        # (Factors unique only up to signs or phases, eigh's and svd's vectors, are compared
        # through the eigen/singular values only; qr's by magnitude.)
        leaves_e = jax.tree_util.tree_leaves(r_ember)
        leaves_c = jax.tree_util.tree_leaves(r_cpu)
        if name.startswith("eigh"):
            leaves_e, leaves_c = leaves_e[:1], leaves_c[:1]
        elif name.startswith("svd"):
            leaves_e, leaves_c = leaves_e[1:2], leaves_c[1:2]
        elif name.startswith("eig ") or name.startswith("schur"):
            # (Eigenvalues in the solver's order; a Schur form's diagonal likewise.)
            pick = (lambda x: np.sort_complex(np.asarray(x))) if name.startswith("eig ") else (
                lambda x: np.sort(np.diagonal(np.asarray(x))))
            leaves_e, leaves_c = [pick(leaves_e[0])], [pick(leaves_c[0])]
        elif name.startswith("qr"):
            leaves_e = [np.abs(np.asarray(x)) for x in leaves_e]
            leaves_c = [np.abs(np.asarray(x)) for x in leaves_c]
        for e, c in zip(leaves_e, leaves_c):
            e, c = np.asarray(e), np.asarray(c)
            scale = max(float(np.max(np.abs(c))), 1e-30)
            diff = max(diff, float(np.max(np.abs(e - c))) / scale)
        ratios.append(t_ember / t_cpu)
        print(f"{name:22s} {t_ember * 1e3:9.3f} {t_cpu * 1e3:9.3f} {t_ember / t_cpu:6.2f} "
              f"{diff:12.2e}", flush=True)
    if ratios:
        print(f"geomean ratio {float(np.exp(np.mean(np.log(ratios)))):.2f}")


if __name__ == "__main__":
    main()
