"""One process of a 2-process JAX job on Ember (run by tests/jax/test_multi_process.py).

Usage: worker.py COORDINATOR_PORT PROCESS_ID NUM_PROCESSES SCENARIO. Each process has
EMBER_HOST_DEVICE_COUNT Ember devices; the scenario's checks raise on failure, and the process
prints "ok <scenario>" when they all hold.
"""
import os
import sys

os.environ["JAX_PLATFORMS"] = "ember"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def devices_and_psum(pid, nproc):
    local = jax.local_device_count()
    check(jax.process_index() == pid, f"process_index {jax.process_index()} != {pid}")
    check(jax.process_count() == nproc, f"process_count {jax.process_count()}")
    check(jax.device_count() == nproc * local, f"device_count {jax.device_count()}")
    check([d.id for d in jax.devices()] == list(range(nproc * local)),
          f"device ids {[d.id for d in jax.devices()]}")
    check([d.process_index for d in jax.devices()] == [i // local for i in range(nproc * local)],
          f"process indices {[d.process_index for d in jax.devices()]}")
    check(all(d.process_index == pid for d in jax.local_devices()), "local devices")
    # psum over every device of the job (pmap over the global devices: each process feeds its own).
    x = np.arange(local, dtype=np.float32) + pid * local + 1.0
    out = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(x)
    total = sum(range(1, nproc * local + 1))
    check(np.allclose(np.asarray(out), total), f"pmap psum {out} != {total}")
    # The same with jit over a global mesh: an array sharded over all devices, summed.
    mesh = Mesh(np.array(jax.devices()), ("d",))
    global_shape = (nproc * local * 3,)
    full = np.arange(np.prod(global_shape), dtype=np.float32).reshape(global_shape)
    arr = jax.make_array_from_callback(global_shape, NamedSharding(mesh, P("d")),
                                       lambda index: full[index])
    s = jax.jit(jnp.sum, out_shardings=NamedSharding(mesh, P()))(arr)
    check(float(s.addressable_data(0)) == float(full.sum()), f"jit sum {s} != {full.sum()}")


def training_step(pid, nproc):
    """A data-parallel step over the job's devices equals the same step on one device."""
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    rng = np.random.default_rng(0)
    n = jax.device_count() * 4
    xs = rng.standard_normal((n, 8)).astype(np.float32)
    ys = rng.standard_normal((n, 1)).astype(np.float32)
    w0 = rng.standard_normal((8, 1)).astype(np.float32) * 0.1

    def loss(w, x, y):
        return jnp.mean((x @ w - y) ** 2)

    def step(w, x, y):
        value, grad = jax.value_and_grad(loss)(w, x, y)
        return w - 0.1 * grad, value

    data = NamedSharding(mesh, P("batch"))
    replicated = NamedSharding(mesh, P())
    per_process = n // nproc
    x = multihost_utils.host_local_array_to_global_array(
        xs[pid * per_process:(pid + 1) * per_process], mesh, P("batch"))
    y = multihost_utils.host_local_array_to_global_array(
        ys[pid * per_process:(pid + 1) * per_process], mesh, P("batch"))
    w = jax.device_put(w0, replicated)
    sharded_step = jax.jit(step, in_shardings=(replicated, data, data),
                           out_shardings=(replicated, replicated))
    expected_w = w0
    for _ in range(3):
        w, value = sharded_step(w, x, y)
        # The reference: the same step in numpy on the whole batch.
        err = xs @ expected_w - ys
        expected_value = float(np.mean(err ** 2))
        expected_w = expected_w - 0.1 * (2.0 / n) * xs.T @ err
        got = float(np.asarray(value.addressable_data(0)))
        check(abs(got - expected_value) <= 1e-5 * max(1.0, abs(expected_value)),
              f"loss {got} != {expected_value}")
    got_w = np.asarray(w.addressable_data(0))
    check(np.allclose(got_w, expected_w, rtol=1e-5, atol=1e-6), f"weights {got_w} != {expected_w}")


def multihost_helpers(pid, nproc):
    gathered = multihost_utils.process_allgather(np.array([pid * 10.0, pid + 0.5], np.float32))
    check(np.array_equal(np.asarray(gathered),
                         np.array([[p * 10.0, p + 0.5] for p in range(nproc)], np.float32)),
          f"process_allgather {gathered}")
    value = np.full((3,), 7.0 if pid == 0 else -1.0, np.float32)
    broadcast = multihost_utils.broadcast_one_to_all(value)
    check(np.array_equal(np.asarray(broadcast), np.full((3,), 7.0, np.float32)),
          f"broadcast_one_to_all {broadcast}")
    multihost_utils.sync_global_devices("ember multi-process test")
    multihost_utils.assert_equal(np.arange(4), "the same on every process")


def peer_dies(pid, nproc):
    """Process 1 dies between two collectives; process 0's second one fails (no hang, no crash)
    and process 0 still runs single-device work."""
    psum = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
    x = np.ones((jax.local_device_count(),), np.float32)
    check(np.allclose(np.asarray(psum(x)), jax.device_count()), "the first psum")
    if pid == 1:
        sys.stdout.flush()
        os.kill(os.getpid(), 9)
    try:
        out = np.asarray(psum(x))
    except Exception as e:  # pylint: disable=broad-except
        message = str(e)
        check("devices [" in message, f"the error does not name the clique: {message}")
        print(f"collective failed as expected: {message[:300]}", flush=True)
    else:
        raise AssertionError(f"the psum without its peer returned {out}")
    y = jax.jit(lambda v: v * 2 + 1)(jnp.arange(3.0))
    check(np.array_equal(np.asarray(y), np.array([1.0, 3.0, 5.0])), f"single-device work {y}")


SCENARIOS = {
    "devices_and_psum": devices_and_psum,
    "training_step": training_step,
    "multihost_helpers": multihost_helpers,
}


def main():
    port, pid, nproc, scenario = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=nproc,
                               process_id=pid, initialization_timeout=60)
    if scenario == "peer_dies":
        peer_dies(pid, nproc)
        print("ok peer_dies", flush=True)
        os._exit(0)  # the job's other process is gone: no orderly distributed shutdown
    names = list(SCENARIOS) if scenario == "all" else [scenario]
    for name in names:
        SCENARIOS[name](pid, nproc)
        print(f"ok {name}", flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
