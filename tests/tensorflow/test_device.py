"""Registering Ember's device with TensorFlow: the device exists, jit-compiled functions run on
it, loading happens once whatever the route, and a late import says what went wrong."""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import EMBER, NO_TENSORFLOW

tf = pytest.importorskip("tensorflow", reason=NO_TENSORFLOW)
import ember.tensorflow  # noqa: E402
from jax_plugins.ember import library_path  # noqa: E402


def run_python(code, **env):
    """Runs `code` in a fresh interpreter (TensorFlow fixes its devices once per process)."""
    full_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **env)
    full_env.pop("TF_XLA_FLAGS", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, timeout=300)


def test_device_is_registered():
    assert [d.name for d in tf.config.list_physical_devices("EMBER")] == [
        "/physical_device:EMBER:0"]
    assert "/device:EMBER:0" in [d.name for d in tf.config.list_logical_devices()]
    assert "--tf_xla_use_device_api=true" in os.environ["TF_XLA_FLAGS"]


def test_jit_function_runs_on_ember():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    y = rng.standard_normal((7, 3)).astype(np.float32)

    @tf.function(jit_compile=True)
    def f(a, b):
        return tf.nn.relu(tf.matmul(a, b)) * 2.0 - 1.0

    with tf.device(EMBER):
        out = f(tf.constant(x), tf.constant(y))
    assert out.device.endswith("device:EMBER:0")
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ y, 0) * 2 - 1, rtol=1e-5, atol=1e-6)


def test_variable_update_in_place_keeps_earlier_reads():
    # The update is an input/output alias (the variable's buffer may be donated): tensors read
    # from the variable before must keep their values.
    start = np.random.default_rng(1).standard_normal(4).astype(np.float32)
    with tf.device(EMBER):
        v = tf.Variable(start)

        @tf.function(jit_compile=True)
        def bump():
            v.assign(v * 2.0 + 1.0)
            return v.read_value()

        before = v.read_value()
        first = bump()
        second = bump()
    np.testing.assert_array_equal(before.numpy(), start)
    np.testing.assert_allclose(first.numpy(), start * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(second.numpy(), (start * 2 + 1) * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), second.numpy())


def test_importing_again_loads_nothing():
    import importlib  # pylint: disable=import-outside-toplevel
    importlib.reload(ember.tensorflow)  # a second load of the library would abort the process
    assert len(tf.config.list_physical_devices("EMBER")) == 1


def test_env_route_and_module_load_once():
    result = run_python("""
        import tensorflow as tf
        import ember.tensorflow
        with tf.device("/device:EMBER:0"):
            print(tf.function(lambda x: x * 3.0, jit_compile=True)(tf.constant([1.0, 2.0])).numpy())
        """, TF_PLUGGABLE_DEVICE_LIBRARY_PATH=library_path())
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[3. 6.]" in result.stdout


def test_device_count_and_ordinals_follow_ember_options():
    result = run_python("""
        import tensorflow as tf
        import ember.tensorflow
        print(len(tf.config.list_logical_devices("EMBER")))
        f = tf.function(lambda x: x + 1.0, jit_compile=True)
        with tf.device("/device:EMBER:1"):
            y = f(tf.constant([1.0, 2.0]))
        print(y.device, y.numpy())
        """, EMBER_PLATFORM="host", EMBER_HOST_DEVICE_COUNT="2")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.split("\n")
    assert lines[0] == "2"
    assert "device:EMBER:1 [2. 3.]" in lines[1]


def test_import_after_first_op_is_a_clear_error():
    result = run_python("""
        import tensorflow as tf
        tf.constant(1.0) + 1.0
        import ember.tensorflow
        """)
    assert result.returncode != 0
    assert "import ember.tensorflow before TensorFlow's first op" in result.stderr


def test_missing_helper_is_a_clear_error(tmp_path):
    # The plugin without the TensorFlow helper beside it (e.g. built before TensorFlow was there).
    source = pathlib.Path(library_path()).parent
    for lib in source.glob("lib*.so*"):
        if "tf_helper" not in lib.name:
            shutil.copy(lib, tmp_path)
    result = run_python("""
        import tensorflow as tf
        import ember.tensorflow
        tf.constant(1.0)
        """, EMBER_PJRT_PLUGIN_PATH=str(tmp_path / "libpjrt_ember.so"))
    assert result.returncode != 0
    assert "FailedPreconditionError" in result.stderr
    assert "cannot load Ember's TensorFlow helper" in result.stderr
