"""Launches queued on a device are bounded (runtime/launch_admission.h): a loop that dispatches
faster than the device computes waits once a device has its limit of launches in flight,
instead of queuing results and temporaries without bound, as XLA:CPU does. A caller waiting for
a slot does not keep the host callbacks of the queued launches from running, and a host callback
that executes a program on its own device runs it at once, inside the launch, never waiting for
the launches queued behind it (it used to hang)."""
import jax
import jax.numpy as jnp
import numpy as np

LIMIT = 32  # LaunchAdmission::kDefaultLimit


def test_queued_launches_hold_bounded_memory(ember_devices):
    device = ember_devices[-1]
    x = jax.device_put(np.arange(1 << 20, dtype=np.float32), device)
    f = jax.jit(lambda x: x * 2.0)
    f(x).block_until_ready()
    before = device.memory_stats()
    result_bytes = x.size * 4
    for _ in range(6 * LIMIT):
        out = f(x)  # each result is dropped as the next is dispatched
    out.block_until_ready()
    after = device.memory_stats()
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2.0)
    # Unbounded, all 192 results would have been alive at once (768 MiB).
    bound = before["bytes_in_use"] + (LIMIT + 4) * result_bytes * 1.25
    assert after["peak_bytes_in_use"] <= max(before["peak_bytes_in_use"], bound), (before, after)


def _launches_with_callbacks_executing_on(device, callback_device):
    """Twice the limit of launches on `device` whose host callbacks run Python and execute a
    program on `callback_device`; the caller waits for a slot at the 33rd while the first ones
    need the interpreter to finish."""
    inner = jax.jit(lambda v: v + 1.0)

    def host(v):
        return np.asarray(inner(jax.device_put(v, callback_device)))

    def outer(v):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v) * 3.0

    f = jax.jit(outer)
    v = jax.device_put(jnp.arange(8, dtype=jnp.float32), device)
    outs = [f(v) for _ in range(2 * LIMIT)]
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out), (np.arange(8, dtype=np.float32) + 1) * 3)


def test_waiting_caller_lets_queued_callbacks_run(ember_devices):
    _launches_with_callbacks_executing_on(ember_devices[-1], ember_devices[-2])


def test_callback_executing_on_its_own_device_runs_nested(ember_devices):
    # The callback runs on the device's stream, inside a launch, with the launches dispatched
    # after it queued behind it.
    _launches_with_callbacks_executing_on(ember_devices[-1], ember_devices[-1])
