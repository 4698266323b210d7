"""Ops TensorFlow's XLA lowering sends that JAX programs rarely do: `remainder` (truncatemod,
floormod), the integer bit ops (and, or, xor, not, shifts, popcount), `bitcast-convert`
(tf.bitcast) and `rng-bit-generator` (stateless random numbers with an explicit algorithm). Each
function runs jit-compiled on Ember and on TensorFlow's CPU device (its own XLA); the answers
must agree bit for bit."""
import numpy as np
import pytest

from conftest import CPU, EMBER, NO_TENSORFLOW

tf = pytest.importorskip("tensorflow", reason=NO_TENSORFLOW)
import ember.tensorflow  # noqa: E402,F401


def on_both(fn, *args):
    """fn jit-compiled on Ember and on TF-CPU (a fresh tf.function each, so each device compiles
    its own program); the two results as numpy values."""
    results = []
    for device in (EMBER, CPU):
        with tf.device(device):
            out = tf.function(fn, jit_compile=True)(*[tf.constant(a) for a in args])
        flat = tf.nest.flatten(out)
        assert all(t.device.endswith(device.lstrip("/")) for t in flat), [t.device for t in flat]
        results.append([t.numpy() for t in flat])
    return results


def assert_same(ember, cpu):
    assert len(ember) == len(cpu)
    for i, (e, c) in enumerate(zip(ember, cpu)):
        assert e.dtype == c.dtype, (i, e.dtype, c.dtype)
        np.testing.assert_array_equal(e, c, err_msg=f"result {i}")


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_remainder(dtype):
    rng = np.random.default_rng(3)
    if dtype == np.float32:
        a = rng.standard_normal(64).astype(dtype) * 10
        b = rng.standard_normal(64).astype(dtype) * 3
    else:
        a = rng.integers(-1000, 1000, 64).astype(dtype)
        b = rng.integers(1, 30, 64).astype(dtype) * rng.choice([-1, 1], 64).astype(dtype)
    ember, cpu = on_both(lambda x, y: (tf.truncatemod(x, y), tf.math.floormod(x, y)), a, b)
    assert_same(ember, cpu)
    if dtype != np.float32:  # C's % truncates: numpy's fmod
        np.testing.assert_array_equal(ember[0], np.fmod(a, b))
        np.testing.assert_array_equal(ember[1], np.mod(a, b))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint8])
def test_integer_bit_ops(dtype):
    rng = np.random.default_rng(4)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, 48, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, 48, dtype=dtype, endpoint=True)
    # Shift amounts beyond the width too: XLA defines them (0, or the sign for arithmetic).
    s = rng.integers(0, info.bits + 3, 48).astype(dtype)

    def f(x, y, n):
        return (tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y),
                tf.bitwise.bitwise_xor(x, y), tf.bitwise.invert(x),
                tf.bitwise.left_shift(x, n), tf.bitwise.right_shift(x, n),
                tf.raw_ops.PopulationCount(x=x))

    ember, cpu = on_both(f, a, b, s)
    assert_same(ember, cpu)
    np.testing.assert_array_equal(ember[0], a & b)
    np.testing.assert_array_equal(ember[2], a ^ b)
    np.testing.assert_array_equal(ember[6], [bin(int(v) & ((1 << info.bits) - 1)).count("1")
                                             for v in a])


def test_bitcast_convert():
    rng = np.random.default_rng(5)
    x = rng.standard_normal(32).astype(np.float32)
    i = rng.integers(-2**31, 2**31 - 1, 16, dtype=np.int64)

    def f(v, w):
        bits = tf.bitcast(v, tf.int32)
        sign = tf.constant(-2**31, tf.int32)
        return (bits, tf.bitcast(tf.bitwise.bitwise_xor(bits, sign), tf.float32),  # -v
                tf.bitcast(w, tf.float64), tf.bitcast(v, tf.uint8))        # width-changing too

    ember, cpu = on_both(f, x, i)
    assert_same(ember, cpu)
    np.testing.assert_array_equal(ember[0], x.view(np.int32))
    np.testing.assert_array_equal(ember[1], -x)
    np.testing.assert_array_equal(ember[3], x.view(np.uint8).reshape(32, 4))


@pytest.mark.parametrize("alg", ["philox", "threefry"])
def test_stateless_random_numbers(alg):
    # tf.random's stateless V2 ops with an explicit algorithm lower to rng-bit-generator.
    seed = np.array([7, 11], np.int32)

    def f(s):
        return (tf.random.stateless_uniform([5, 33], s, alg=alg),
                tf.random.stateless_uniform([70], s, minval=0, maxval=1000, dtype=tf.int32,
                                            alg=alg),
                tf.random.stateless_normal([9], s, alg=alg))

    ember, cpu = on_both(f, seed)
    assert_same(ember, cpu)
    assert 0.3 < ember[0].mean() < 0.7 and len(np.unique(ember[1])) > 50
