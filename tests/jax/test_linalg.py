"""eigh, svd, eig, schur, hessenberg, tridiagonal, lu and what is built on them (issue 12, item 4),
on Ember (lowered by jax_plugins.ember.linalg to Ember's custom calls) and on XLA:CPU (LAPACK)
in this process. Values LAPACK defines uniquely (eigenvalues, singular values, the packed
Hessenberg and tridiagonal forms) are compared directly; vectors, defined up to phase, are
compared after aligning phases, and every factorization must reconstruct its input."""
import functools

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

# LAPACK-level tolerances relative to the matrix's norm: a few hundred ulps of the type.
RTOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-10, np.complex128: 1e-10}
REAL_AND_COMPLEX = [np.float32, np.complex64, np.float64, np.complex128]


def _random(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _hermitian(shape, dtype, seed):
    a = _random(shape, dtype, seed)
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _run(fn, *args):
    """(Ember's results, XLA:CPU's results) of jit(fn) on the same host arguments."""
    f = jax.jit(fn)
    want = f(*[jax.device_put(a, jax.devices("cpu")[0]) for a in args])
    got = f(*[jax.device_put(a, jax.devices("ember")[0]) for a in args])
    for leaf in jax.tree_util.tree_leaves(got):
        assert leaf.devices() == {jax.devices("ember")[0]}
    return (jax.tree_util.tree_map(np.asarray, got), jax.tree_util.tree_map(np.asarray, want))


def _close(got, want, dtype, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)


def _align_columns(got, want):
    """Multiplies each column of `got` by the unit phase that best matches `want`'s column."""
    dots = np.sum(np.conj(got) * want, axis=-2, keepdims=True)
    phase = np.where(np.abs(dots) > 0, dots / np.maximum(np.abs(dots), 1e-30), 1)
    return got * phase


def _sorted_spectrum(z):
    """Eigenvalues in a canonical order that rounding differences do not reshuffle."""
    return z[np.lexsort((np.round(z.imag, 4), np.round(z.real, 4)))]


def _enable_x64(dtype):
    return dtype in (np.float64, np.complex128)


@pytest.fixture(autouse=True)
def _x64_for_double(request):
    dtype = request.node.callspec.params.get("dtype") if hasattr(request.node, "callspec") else None
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", dtype is not None and _enable_x64(dtype))
    yield
    jax.config.update("jax_enable_x64", previous)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 8, 8), (33, 33)], ids=str)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh(dtype, shape, lower, ember_devices):
    a = _hermitian(shape, dtype, 1)
    (w, v), (w_cpu, v_cpu) = _run(lambda x: jnp.linalg.eigh(x, UPLO="L" if lower else "U"), a)
    scale = np.abs(a).max()
    _close(w, w_cpu, dtype, scale)
    _close(_align_columns(v, v_cpu), v_cpu, dtype, 10)
    recon = (v * w[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))
    _close(recon, a, dtype, 10 * scale)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (2, 7, 3), (1, 9), (0, 3)], ids=str)
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd(dtype, shape, full_matrices, ember_devices):
    a = _random(shape, dtype, 2)
    (u, s, vt), (u_cpu, s_cpu, vt_cpu) = _run(
        functools.partial(jnp.linalg.svd, full_matrices=full_matrices), a)
    assert u.shape == u_cpu.shape and vt.shape == vt_cpu.shape and s.shape == s_cpu.shape
    scale = max(np.abs(a).max(initial=0), 1)
    _close(s, s_cpu, dtype, scale)
    k = min(shape[-2:])
    _close(_align_columns(u[..., :k], u_cpu[..., :k]), u_cpu[..., :k], dtype, 10)
    recon = (u[..., :k] * s[..., None, :]) @ vt[..., :k, :]
    _close(recon, a, dtype, 10 * scale)
    eye = np.eye(u.shape[-1])
    _close(np.conj(np.swapaxes(u, -1, -2)) @ u, np.broadcast_to(eye, u.shape[:-2] + eye.shape),
           dtype, 10)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
def test_singular_values_only_and_rank_deficient(dtype, ember_devices):
    a = (_random((7, 3), dtype, 3) @ _random((3, 5), dtype, 4)).astype(dtype)
    s, s_cpu = _run(lambda x: jnp.linalg.svd(x, compute_uv=False), a)
    _close(s, s_cpu, dtype, np.abs(s_cpu).max())
    assert np.all(s[3:] < RTOL[dtype] * s[0])


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("n", [1, 4, 9])
def test_eig(dtype, n, ember_devices):
    a = _random((n, n), dtype, 5)
    (w, vl, vr), (w_cpu, vl_cpu, vr_cpu) = _run(
        lambda x: jax.lax.linalg.eig(x, compute_left_eigenvectors=True), a)
    scale = np.abs(a).max()
    # LAPACK orders eigenvalues as they come off the Schur form; compare as sorted sets.
    _close(_sorted_spectrum(w), _sorted_spectrum(w_cpu), dtype, scale)
    ac = a.astype(np.complex128)
    _close(ac @ vr, vr * w[None, :], dtype, 10 * scale)
    _close(np.conj(vl).T @ ac, w[:, None] * np.conj(vl).T, dtype, 10 * scale)
    _close(np.linalg.norm(vr, axis=0), np.ones(n), dtype)
    # Same normalization as LAPACK: the largest component of each vector is real.
    big = np.argmax(np.abs(vr), axis=0)
    np.testing.assert_array_equal(vr[big, np.arange(n)].imag, 0)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("n", [1, 3, 8])
def test_schur(dtype, n, ember_devices):
    a = _random((n, n), dtype, 6)
    (t, z), (t_cpu, _) = _run(jsl.schur, a)
    scale = np.abs(a).max()
    _close(z @ t @ np.conj(z).T, a, dtype, 10 * scale)
    _close(np.conj(z).T @ z, np.eye(n), dtype, 10)
    below = np.tril(t, -2 if np.isrealobj(a) else -1)
    np.testing.assert_array_equal(below, 0)
    # The same spectrum on the diagonal (blocks) as LAPACK's.
    ev = _sorted_spectrum(np.linalg.eigvals(t.astype(np.complex128)))
    ev_cpu = _sorted_spectrum(np.linalg.eigvals(t_cpu.astype(np.complex128)))
    _close(ev, ev_cpu, dtype, scale)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("n", [1, 2, 6, 40])
def test_hessenberg_matches_lapack_packing(dtype, n, ember_devices):
    a = _random((n, n), dtype, 7)
    (packed, taus), (packed_cpu, taus_cpu) = _run(jax.lax.linalg.hessenberg, a)
    scale = np.abs(a).max()
    _close(packed, packed_cpu, dtype, 10 * scale)
    _close(taus, taus_cpu, dtype, 10)
    (h, q), _ = _run(functools.partial(jsl.hessenberg, calc_q=True), a)
    _close(q @ h @ np.conj(q).T, a, dtype, 10 * scale)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 7, 7)], ids=str)
def test_tridiagonal_matches_lapack_packing(dtype, lower, shape, ember_devices):
    a = _hermitian(shape, dtype, 8)
    got, want = _run(functools.partial(jax.lax.linalg.tridiagonal, lower=lower), a)
    scale = np.abs(a).max()
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        _close(g, w, dtype, 10 * scale)


@pytest.mark.parametrize("name,fn", [
    ("pinv", jnp.linalg.pinv),
    ("lstsq", lambda a: jnp.linalg.lstsq(a, a[:, :2])[0]),
    ("norm2", lambda a: jnp.linalg.norm(a, ord=2)),
    ("nuclear_norm", lambda a: jnp.linalg.norm(a, ord="nuc")),
    ("matrix_rank", jnp.linalg.matrix_rank),
    ("cond", jnp.linalg.cond),
    ("eigvalsh", lambda a: jnp.linalg.eigvalsh(a @ a.T)),
    ("sqrtm_like", lambda a: jsl.expm(a * 0.1)),
    ("polar", lambda a: jsl.polar(a)[0]),
])
def test_functions_built_on_them(name, fn, ember_devices):
    a = _random((6, 4), np.float32, 9)
    if name in ("cond", "sqrtm_like", "polar"):
        a = _random((5, 5), np.float32, 9)
    got, want = _run(fn, a)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * np.abs(want).max())


@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal(method, ember_devices):
    rng = np.random.default_rng(10)
    cov = rng.standard_normal((4, 4)).astype(np.float32)
    cov = cov @ cov.T + np.eye(4, dtype=np.float32)
    mean = rng.standard_normal(4).astype(np.float32)
    key = jax.random.key_data(jax.random.key(0))
    sample = lambda k, m, c: jax.random.multivariate_normal(
        jax.random.wrap_key_data(k), m, c, (20000,), method=method)
    got, want = _run(sample, key, mean, cov)
    # The factor of cov is unique only up to the phases of svd/eigh's vectors, so the samples
    # agree where the factors do (cholesky: always); both must have the requested moments.
    if method == "cholesky":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    for samples in (got, want):
        np.testing.assert_allclose(samples.mean(0), mean, atol=0.1)
        np.testing.assert_allclose(np.cov(samples.T), cov, atol=0.05 * np.abs(cov).max())


def test_nan_input_gives_nan_like_xla(ember_devices):
    a = np.full((3, 3), np.nan, np.float32)
    (w, v), (w_cpu, v_cpu) = _run(jnp.linalg.eigh, a)
    assert np.isnan(w).all() and np.isnan(w_cpu).all()
    s, s_cpu = _run(lambda x: jnp.linalg.svd(x, compute_uv=False), a)
    assert np.isnan(s).all() and np.isnan(s_cpu).all()


def test_options_xla_cpu_rejects_are_rejected(ember_devices):
    a = jax.device_put(_random((3, 3), np.float32, 11), ember_devices[0])
    with pytest.raises(NotImplementedError, match="sort"):
        jax.jit(lambda x: jax.lax.linalg.schur(x, sort_eig_vals=True)).lower(a)
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        jax.jit(lambda x: jax.lax.linalg.eigh(x, subset_by_index=(0, 1))).lower(a)


@pytest.mark.parametrize("dtype", REAL_AND_COMPLEX, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 6, 6), (7, 4), (4, 7), (0, 0)], ids=str)
def test_lu_matches_getrf(dtype, shape, ember_devices):
    """lax.linalg.lu lowers to ember_lu (not JAX's generic Python LU): XLA:CPU's (LAPACK
    getrf's) pivots and permutation, and its packed factors."""
    a = _random(shape, dtype, 12)
    (lu, pivots, perm), (lu_cpu, pivots_cpu, perm_cpu) = _run(jax.lax.linalg.lu, a)
    np.testing.assert_array_equal(pivots, pivots_cpu)
    np.testing.assert_array_equal(perm, perm_cpu)
    _close(lu, lu_cpu, dtype, 10 * max(np.abs(a).max(initial=0), 1))
    text = jax.jit(jax.lax.linalg.lu).lower(a).as_text()
    assert "ember_lu" in text, text


def test_lu_of_singular_matrices_and_what_is_built_on_it(ember_devices):
    sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)
    got, want = _run(jax.lax.linalg.lu, sing)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    a = _random((6, 6), np.float32, 13)
    b = _random((6, 2), np.float32, 14)
    for fn in (jnp.linalg.solve, lambda a, b: jnp.linalg.slogdet(a)[1] + b[0, 0],
               lambda a, b: jnp.linalg.inv(a) @ b, lambda a, b: jnp.linalg.det(a) * b):
        got, want = _run(fn, a, b)
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * np.abs(want).max())
