"""Registers Ember's device with TensorFlow as `/device:EMBER:0` (one per Ember device).

    import tensorflow as tf
    import ember.tensorflow
    with tf.device("/device:EMBER:0"):
        ...  # tf.function(jit_compile=True), Keras fit(jit_compile=True)

Import it after `import tensorflow` and before anything else asks TensorFlow about its devices
or runs an op (TensorFlow reads TF_XLA_FLAGS and fixes its devices then). Functions compiled with `jit_compile=True` run on Ember; other ops stay on
TensorFlow's CPU device. The plugin library is the one JAX uses ($EMBER_PJRT_PLUGIN_PATH or the
copy in `jax_plugins.ember`). `--tf_xla_use_device_api=true` joins TF_XLA_FLAGS (TensorFlow
compiles for a pluggable device only with it) unless the flag is already set. The library is loaded once per process:
importing this module again, or after TensorFlow loaded it through TF_PLUGGABLE_DEVICE_LIBRARY_PATH
or `tensorflow-plugins/`, does nothing (a second load would abort the process).
"""
import os

import tensorflow as tf
from tensorflow.python.eager import context as _context
from tensorflow.python.framework import load_library as _load_library

from jax_plugins.ember import library_path

DEVICE_TYPE = "EMBER"


def _enable_device_api():
    """What the plugin itself does when TensorFlow loads it (pjrt_plugin/tf_device_plugin.cc), done
    before the first question to TensorFlow here: TensorFlow reads TF_XLA_FLAGS once, when it
    first lists its devices, and compiles for a pluggable device only with this flag. A user's own
    setting of the flag is left alone."""
    flags = os.environ.get("TF_XLA_FLAGS", "")
    if "tf_xla_use_device_api" not in flags:
        os.environ["TF_XLA_FLAGS"] = (flags + " --tf_xla_use_device_api=true").strip()


def is_registered():
    """True when TensorFlow has Ember's device type (by this module or by its own loaders)."""
    return bool(tf.config.list_physical_devices(DEVICE_TYPE))


def register():
    """Loads the plugin into TensorFlow unless its device type is already there."""
    _enable_device_api()
    if is_registered():
        return
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(f"Ember's plugin library is not at {path} (run scripts/setup.sh, or set "
                          "EMBER_PJRT_PLUGIN_PATH)")
    # Loading after TensorFlow created its logical devices would register the device type but give
    # no /device:EMBER:0 (TensorFlow 2.21 keeps the private handle `_context_handle` until then).
    if getattr(_context.context(), "_context_handle", None) is not None:
        raise RuntimeError("import ember.tensorflow before TensorFlow's first op: TensorFlow has "
                           "already fixed its devices, so /device:EMBER:0 would not exist")
    _load_library.load_pluggable_device_library(path)


register()
