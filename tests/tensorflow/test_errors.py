"""Errors reach Python: an op TensorFlow cannot compile gives TensorFlow's own error; a program
Ember rejects gives Ember's error through PJRT, naming what it rejected."""
import numpy as np
import pytest

from conftest import EMBER, NO_TENSORFLOW

tf = pytest.importorskip("tensorflow", reason=NO_TENSORFLOW)
import ember.tensorflow  # noqa: E402,F401
from tensorflow.compiler.tf2xla.python import xla as tfxla  # noqa: E402


def test_op_tensorflow_cannot_compile():
    @tf.function(jit_compile=True)
    def f(x):
        return tf.strings.as_string(x)

    with tf.device(EMBER), pytest.raises(tf.errors.InvalidArgumentError) as error:
        f(tf.constant([1.5]))
    assert "XLA_CPU_JIT" in str(error.value) and "AsString" in str(error.value)


def test_program_ember_rejects():
    @tf.function(jit_compile=True)
    def f(x):
        return tfxla.custom_call_v2("ember_test_no_such_target", [x],
                                    [tf.TensorSpec([3], tf.float32)])[0]

    with tf.device(EMBER), pytest.raises(tf.errors.UnimplementedError) as error:
        f(tf.constant(np.arange(3, dtype=np.float32))).numpy()
    assert "ember_test_no_such_target" in str(error.value)

    # The device stays usable after the error.
    @tf.function(jit_compile=True)
    def g(x):
        return x * 2.0

    with tf.device(EMBER):
        np.testing.assert_array_equal(g(tf.constant([1.0, 4.0])).numpy(), [2.0, 8.0])
