"""Registers Ember's PJRT plugin with JAX under the platform name "ember".

JAX imports this module at backend discovery (namespace package `jax_plugins` and the
`jax_plugins` entry point) and calls `initialize()`. Select Ember with JAX_PLATFORMS=ember.
Client options come from JAX_PJRT_CLIENT_CREATE_OPTIONS or the EMBER_* environment variables
(EMBER_HOST_DEVICE_COUNT, EMBER_PLATFORM, EMBER_MEMORY_LIMIT_BYTES).
"""
import logging
import os
import pathlib

_LOG = logging.getLogger(__name__)
_LIBRARY_NAME = "libpjrt_ember.so"


def library_path():
    """Path of the plugin library: $EMBER_PJRT_PLUGIN_PATH, else the copy shipped here."""
    override = os.environ.get("EMBER_PJRT_PLUGIN_PATH")
    if override:
        return override
    return str(pathlib.Path(__file__).resolve().parent / _LIBRARY_NAME)


def initialize():
    path = library_path()
    if not os.path.exists(path):
        _LOG.warning("Ember plugin library not found at %s; Ember is not registered", path)
        return
    from jax._src import xla_bridge  # pylint: disable=import-outside-toplevel

    # Below the CPU backend's priority: Ember is used when asked for (JAX_PLATFORMS=ember).
    c_api = xla_bridge.register_plugin("ember", priority=400, library_path=path)
    _allow_donation()
    _register_extensions(c_api)


def _register_extensions(c_api):
    """What JAX does for its own platforms only: jax.ffi registrations for "ember" (ffi.py),
    Python host callbacks (callbacks.py) and linear-algebra lowerings (linalg.py).

    A JAX whose internals moved must still load Ember: a failure here is logged, and only the
    features concerned are missing.
    """
    # pylint: disable=import-outside-toplevel
    steps = [("FFI registration", lambda: _install_ffi(c_api)),
             ("host callbacks", _install_callbacks),
             ("linear-algebra lowerings", _install_linalg)]
    for what, step in steps:
        try:
            step()
        except Exception as e:  # pylint: disable=broad-except
            _LOG.warning("Ember: %s not set up: %s", what, e)


def _install_ffi(c_api):
    from jax_plugins.ember import ffi  # pylint: disable=import-outside-toplevel
    ffi.install(c_api)


def _install_callbacks():
    from jax_plugins.ember import callbacks  # pylint: disable=import-outside-toplevel
    callbacks.register()


def _install_linalg():
    from jax_plugins.ember import linalg  # pylint: disable=import-outside-toplevel
    linalg.register()


def _allow_donation():
    """Lets JAX emit buffer donation for Ember.

    JAX lowers `donate_argnums` to `jax.buffer_donor` / `tf.aliasing_output` attributes only for
    the platform names in `jax._src.interpreters.mlir._platforms_with_donation` (cpu, cuda, rocm,
    tpu, neuron in jax 0.10.2); for any other name it warns and drops the donation. Ember
    implements donation (a donated buffer is deleted and its memory reused), so it adds its own
    name to that list. EMBER_DISABLE_DONATION=1 leaves JAX's list alone.
    """
    if os.environ.get("EMBER_DISABLE_DONATION", "0") not in ("", "0"):
        return
    try:
        from jax._src.interpreters import mlir  # pylint: disable=import-outside-toplevel
    except ImportError:  # a JAX without this module: nothing to extend
        return
    platforms = getattr(mlir, "_platforms_with_donation", None)
    if isinstance(platforms, list):
        if "ember" not in platforms:
            platforms.append("ember")
    else:
        _LOG.warning("this JAX has no donation allowlist Ember knows; donation stays off")
