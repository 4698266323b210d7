"""Convolutions from real JAX on Ember's compiled host backend (im2col + GEMM, or the evaluator
for what that does not cover, such as batch groups) against XLA:CPU: layouts, strides, padding,
dilations, feature groups, 1-D/2-D/3-D, f64, the convolutions of gradients (transposed
kernels, lhs dilation, batch groups), and bf16/f16 convolutions and dots (widened to f32, f32
accumulation, one rounding, as XLA:CPU computes them)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax


def _run_both(f, *host):
    cpu = jax.devices("cpu")[0]
    ember = jax.devices("ember")[0]
    want = jax.jit(f)(*jax.device_put(host, cpu))
    got = jax.jit(f)(*jax.device_put(host, ember))
    return got, want


def _close(got, want, rtol, atol):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def _conv(dn, strides=None, padding="SAME", lhs_dilation=None, rhs_dilation=None, groups=1):
    def f(x, w):
        n = len(dn[0]) - 2
        return lax.conv_general_dilated(x, w, strides or (1,) * n, padding,
                                        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                                        dimension_numbers=dn, feature_group_count=groups)
    return f


NHWC = ("NHWC", "HWIO", "NHWC")
NCHW = ("NCHW", "OIHW", "NCHW")
CASES = {
    # name: (conv, x shape, w shape)
    "nhwc_3x3_same": (_conv(NHWC), (2, 12, 10, 8), (3, 3, 8, 16)),
    "nchw_3x3_valid_strided": (_conv(NCHW, (2, 2), "VALID"), (2, 8, 13, 11), (16, 8, 3, 3)),
    "nhwc_asymmetric_padding": (_conv(NHWC, (1, 2), ((2, 0), (1, 3))), (1, 9, 9, 4), (3, 2, 4, 5)),
    "nhwc_rhs_dilation": (_conv(NHWC, rhs_dilation=(2, 3)), (2, 15, 14, 3), (3, 3, 3, 6)),
    "nhwc_lhs_dilation": (_conv(NHWC, padding=((2, 2), (2, 2)), lhs_dilation=(2, 2)),
                          (1, 6, 5, 4), (3, 3, 4, 4)),
    "nhwc_grouped": (_conv(NHWC, groups=4), (2, 10, 10, 8), (3, 3, 2, 12)),
    "nchw_depthwise": (_conv(NCHW, (2, 2), groups=6), (2, 6, 16, 16), (6, 1, 3, 3)),
    "nhwc_pointwise": (_conv(NHWC, padding="VALID"), (4, 7, 7, 32), (1, 1, 32, 24)),
    "nwc_1d": (_conv(("NWC", "WIO", "NWC"), (2,), rhs_dilation=(2,)), (3, 40, 5), (5, 5, 7)),
    "ndhwc_3d": (_conv(("NDHWC", "DHWIO", "NDHWC"), (1, 2, 1)), (2, 6, 8, 5, 3), (3, 3, 2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_convolution_matches_xla(ember_devices, name):
    f, xs, ws = CASES[name]
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    got, want = _run_both(f, x, w)
    _close(got, want, rtol=1e-4, atol=1e-4)


def test_convolution_f64(ember_devices, x64):
    """f64 inputs: an f64 convolution with jax_enable_x64, f32 without."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 9, 9, 4))
    w = rng.standard_normal((3, 3, 2, 6))
    got, want = _run_both(_conv(NHWC, (2, 1), groups=2), x, w)
    assert got.dtype == (jnp.float64 if x64 else jnp.float32)
    tol = 1e-10 if x64 else 1e-4
    _close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_gradients_match_xla(ember_devices, groups):
    """grad of a strided conv: the input gradient is a conv with lhs dilation and a reversed
    kernel, the kernel gradient one with batch groups when the forward conv has groups."""
    f = _conv(NHWC, (2, 2), groups=groups)

    def loss(x, w):
        return jnp.sum(jnp.tanh(f(x, w)))

    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 11, 10, 4)).astype(np.float32)
    w = (0.3 * rng.standard_normal((3, 3, 4 // groups, 6))).astype(np.float32)
    got, want = _run_both(jax.grad(loss, argnums=(0, 1)), x, w)
    _close(got, want, rtol=1e-4, atol=1e-4)


# Narrow floats: Ember and XLA:CPU both widen to f32, accumulate in f32 and round once, in
# different summation orders. Two f32 accumulators differ by at most about 2*K*2^-24*sum|products|
# (at most ~1e-3 for these shapes, K <= 288, unit-normal inputs: the atol); after rounding, values
# on either side of a rounding boundary differ by one ulp of the narrow type, at most 2^-7 (bf16) /
# 2^-10 (f16) of the value (the rtol). A wrong product or index is off by O(1).
NARROW = [(jnp.bfloat16, 2.0 ** -7), (jnp.float16, 2.0 ** -10)]


def _narrow_close(got, want, rtol):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(w, np.float32),
                                   rtol=rtol, atol=1e-3)


@pytest.mark.parametrize("dtype,rtol", NARROW, ids=["bf16", "f16"])
@pytest.mark.parametrize("name", ["nhwc_3x3_same", "nchw_3x3_valid_strided", "nhwc_grouped",
                                  "nhwc_lhs_dilation", "nhwc_pointwise"])
def test_narrow_convolution_matches_xla(ember_devices, name, dtype, rtol):
    f, xs, ws = CASES[name]
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    got, want = _run_both(f, x, w)
    _narrow_close(got, want, rtol)


@pytest.mark.parametrize("dtype,rtol", NARROW, ids=["bf16", "f16"])
def test_narrow_convolution_gradients_match_xla(ember_devices, dtype, rtol):
    """The input and kernel gradients of a strided bf16/f16 conv are narrow convolutions too
    (the loss is linear in the conv, so nothing but convolutions differs between the two)."""
    f = _conv(NHWC, (2, 2))
    rng = np.random.default_rng(3)
    r = rng.standard_normal((2, 6, 5, 6)).astype(np.float32)

    def loss(x, w):
        return jnp.sum(f(x, w).astype(jnp.float32) * r)

    x = rng.standard_normal((2, 11, 10, 4)).astype(dtype)
    w = rng.standard_normal((3, 3, 4, 6)).astype(dtype)
    got, want = _run_both(jax.grad(loss, argnums=(0, 1)), x, w)
    _narrow_close(got, want, rtol)


@pytest.mark.parametrize("dtype,rtol", NARROW, ids=["bf16", "f16"])
def test_narrow_dots_match_xla(ember_devices, dtype, rtol):
    """Matmuls as JAX emits them: plain, transposed operands, batched (attention scores), and
    with preferred_element_type=f32 (narrow operands, f32 result)."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 24, 32)).astype(dtype)
    b = rng.standard_normal((4, 40, 32)).astype(dtype)
    m = rng.standard_normal((32, 48)).astype(dtype)

    def f(a, b, m):
        return (a[0] @ m,
                a[1].T.T @ m[:, :20],
                m.T @ a[2].T,
                jnp.einsum("bqd,bkd->bqk", a, b),
                lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))),
                                preferred_element_type=jnp.float32))

    got, want = _run_both(f, a, b, m)
    assert got[-1].dtype == jnp.float32
    _narrow_close(got, want, rtol)
