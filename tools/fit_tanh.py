"""Fits the f32 tanh coefficients of compiler/codegen/elemental_math.cc (TanhF32).

Two rational approximations in z = x^2, p(z) / q(z) with q(0) = 1, fitted by iterated linear
programming (minimax of the weighted linearized error p - f q, reweighted by the previous q) on
dense grids, then rounded to f32 one coefficient at a time, lowest degree first, refitting the
others after each rounding:
  small: (tanh(x) - x) / x^3 on [0, 1.25], p and q of degree 2 (tanh x = x + x^3 p / q);
  large: tanh(x / 2) / x on [0, 10], p of degree 3 with p(0) = 1/2, q of degree 3.
Both are weighted to the relative error of the tanh they give; the errors printed are in units of
2^-24, for the rounded coefficients evaluated in double (the large piece's is damped where
TanhF32 turns t = tanh(x / 2) into tanh x).
Needs numpy and scipy (python/requirements.txt): python tools/fit_tanh.py
"""
import numpy as np
from scipy.optimize import linprog

UNIT = 2.0 ** -24


def solve(z, f, w, m, n, fixed, q_prev):
    """One LP: minimize max |w (p(z) - f q(z)) / q_prev(z)| over the coefficients not fixed."""
    cols, names = [], []
    for k in range(m + 1):
        cols.append(z ** k * w / q_prev)
        names.append(("p", k))
    for k in range(n + 1):
        cols.append(-(z ** k) * f * w / q_prev)
        names.append(("q", k))
    cols = np.array(cols).T
    free = [i for i, name in enumerate(names) if name not in fixed]
    rhs = -sum(cols[:, i] * fixed[name] for i, name in enumerate(names) if name in fixed)
    a = cols[:, free]
    ones = np.ones((len(z), 1))
    res = linprog(np.r_[np.zeros(len(free)), 1.0],
                  A_ub=np.vstack([np.hstack([a, -ones]), np.hstack([-a, -ones])]),
                  b_ub=np.r_[rhs, -rhs], bounds=[(None, None)] * len(free) + [(0, None)],
                  method="highs")
    if res.x is None:
        raise RuntimeError(f"linear program failed: {res.message}")
    values = dict(fixed)
    for j, i in enumerate(free):
        values[names[i]] = res.x[j]
    return (np.array([values[("p", k)] for k in range(m + 1)]),
            np.array([values[("q", k)] for k in range(n + 1)]))


def fit(z, f, w, m, n, fixed, iterations):
    q_prev = np.ones_like(z)
    for _ in range(iterations):
        p, q = solve(z, f, w, m, n, fixed, q_prev)
        q_prev = np.polyval(q[::-1], z)
    return p, q


def fit_f32(z, f, w, m, n, fixed):
    """f ~ p(z) / q(z) weighted by w, coefficients rounded to f32."""
    fixed = dict(fixed)
    p, q = fit(z, f, w, m, n, fixed, 8)
    order = [(c, k) for k in range(max(m, n) + 1) for c, d in (("p", m), ("q", n))
             if k <= d and (c, k) not in fixed]
    for c, k in order:
        fixed[(c, k)] = float(np.float32((p if c == "p" else q)[k]))
        p, q = fit(z, f, w, m, n, fixed, 4)
    err = np.max(np.abs(w * (np.polyval(p[::-1], z) / np.polyval(q[::-1], z) - f)))
    return p, q, err


def grid(start, end):
    """Points in (start, end], denser towards end."""
    dense_at_end = end * np.sin(np.linspace(0, np.pi / 2, 5000)) ** 2
    x = np.unique(np.r_[np.linspace(start, end, 5000), dense_at_end])
    return x[x > start]


def main():
    x = grid(1e-3, 1.25)  # below, (t - x) / x^3 in double is mostly rounding error
    z, t = x * x, np.tanh(x)
    small = fit_f32(z, (t - x) / (x * z), x * z / t / UNIT, 2, 2, {("q", 0): 1.0})
    x = grid(1e-4, 10.0)
    z, t = x * x, np.tanh(x / 2)
    large = fit_f32(z, t / x, x / t / UNIT, 3, 3, {("p", 0): 0.5, ("q", 0): 1.0})
    for name, (p, q, err) in (("small", small), ("large", large)):
        print(f"{name}: max error {err:.3f} x 2^-24")
        print("  p:", ", ".join(f"{np.float32(v):.9e}" for v in p))
        print("  q:", ", ".join(f"{np.float32(v):.9e}" for v in q))


if __name__ == "__main__":
    main()
