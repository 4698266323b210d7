"""Shared fixtures for the JAX-on-Ember tests: the suite runs with JAX_PLATFORMS=ember,cpu so
that Ember and XLA:CPU can be compared in one process."""
import os

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")
# Several host devices, so multi-device transfers are covered.
os.environ.setdefault("EMBER_HOST_DEVICE_COUNT", "4")

import jax  # noqa: E402
import pytest  # noqa: E402

# As many XLA:CPU devices as Ember host devices, so multi-device programs (pmap, sharded jit,
# shard_map) can run on both and be compared (test_multidevice.py).
jax.config.update("jax_num_cpu_devices", int(os.environ["EMBER_HOST_DEVICE_COUNT"]))


@pytest.fixture(scope="session")
def ember_devices():
    devices = jax.devices("ember")
    assert devices, "no Ember devices"
    return devices


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    """Runs a test with jax_enable_x64 off and on."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", request.param)
    yield request.param
    jax.config.update("jax_enable_x64", previous)
