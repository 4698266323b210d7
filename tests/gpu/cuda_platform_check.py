"""Ember's CUDA platform seen from JAX: devices, transfers of every dtype and layout, memory
accounting, errors that leave buffers valid, and host<->device bandwidth next to XLA:GPU's.

Runs on a real GPU (the system libcuda.so.1) or on the virtual GPU
(EMBER_CUDA_LIBRARY_PATH=build/virtual_gpu/lib). Programs do not run on CUDA devices yet
(the CUDA backend is the next issue), so what this checks is the runtime under the plugin:
Ember's stream-executor CUDA platform, its allocator and its copy engine.

usage: EMBER_PLATFORM=cuda PYTHONPATH=python python tests/gpu/cuda_platform_check.py [--big-mib N]
Exit status 0 when every check holds; each failure is printed as FAIL with what differed.
"""
import argparse
import os
import sys
import time

import numpy as np

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("EMBER_PLATFORM", "cuda")

import jax  # pylint: disable=wrong-import-position

jax.config.update("jax_enable_x64", True)  # 64-bit types travel as they are

try:
    import ml_dtypes
    BF16 = ml_dtypes.bfloat16
except ImportError:  # jax always brings ml_dtypes; keep the check usable without it anyway
    BF16 = None

FAILURES = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def random_array(rng, dtype, shape):
    """Every bit pattern of the type may appear (NaN payloads, subnormals, negative zero)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    count = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = rng.integers(0, 256, size=count, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def round_trips(device, rng):
    dtypes = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
              np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
    if BF16 is not None:
        dtypes.append(BF16)
    shapes = [(), (0,), (7,), (3, 5, 17), (257, 1031), (2, 0, 3)]
    for dtype in dtypes:
        bad = []
        for shape in shapes:
            host = random_array(rng, dtype, shape)
            back = np.asarray(jax.device_put(host, device))
            if not same_bits(host, back):
                bad.append(shape)
        check(not bad, "round trip %s over %d shapes%s" % (np.dtype(dtype).name, len(shapes),
                                                             " (differs at %s)" % bad if bad else ""))
    # Inputs that are not C-contiguous: a transpose and a strided slice.
    host = random_array(rng, np.float32, (300, 513))
    check(same_bits(host.T, np.asarray(jax.device_put(host.T, device))), "round trip of a transposed array")
    check(same_bits(host[::3, 1::2], np.asarray(jax.device_put(host[::3, 1::2], device))),
          "round trip of a strided slice")
    # Device to device on one device, and between devices where there are several.
    on_device = jax.device_put(host, device)
    devices = jax.devices("ember")
    for other in devices[:2]:
        moved = jax.device_put(on_device, other)
        check(same_bits(host, np.asarray(moved)) and moved.devices() == {other},
              "device_put from %s to %s" % (device, other))


def memory_accounting(device):
    stats = device.memory_stats() or {}
    check("bytes_in_use" in stats and "bytes_limit" in stats,
          "memory_stats has bytes_in_use and bytes_limit (%s)" % sorted(stats)[:4])
    before = device.memory_stats()["bytes_in_use"]
    buffers = [jax.device_put(np.full((1 << 21,), i, np.float32), device) for i in range(64)]
    during = device.memory_stats()["bytes_in_use"]
    check(during - before >= 64 * (8 << 20), "64 buffers of 8 MiB counted in bytes_in_use (+%d)" % (during - before))
    values_ok = all(float(np.asarray(b)[12345]) == i for i, b in enumerate(buffers))
    check(values_ok, "64 buffers keep their own values")
    for b in buffers:
        b.delete()
    after = device.memory_stats()["bytes_in_use"]
    check(after == before, "deleting them returns bytes_in_use to %d (now %d)" % (before, after))


def errors_leave_buffers_valid(device, rng):
    host = random_array(rng, np.float32, (1000,))
    kept = jax.device_put(host, device)
    try:
        jax.jit(lambda x: x * 2)(kept).block_until_ready()
        check(True, "jit on a CUDA device ran (a CUDA backend exists)")
    except Exception as e:  # pylint: disable=broad-except
        message = str(e)
        check("cuda" in message.lower(), "jit on a CUDA device is refused with a clear error: %s" % message[:160])
    check(same_bits(host, np.asarray(kept)), "a buffer made before the failed call keeps its value")
    deleted = jax.device_put(host, device)
    deleted.delete()
    try:
        np.asarray(deleted)
        check(False, "reading a deleted buffer raises")
    except Exception as e:  # pylint: disable=broad-except
        check("delete" in str(e).lower(), "reading a deleted buffer raises: %s" % str(e)[:120])


def bandwidth(device, mib, label):
    host = np.random.default_rng(1).random((mib << 18,), dtype=np.float32)
    best_up = best_down = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        on_device = jax.device_put(host, device)
        on_device.block_until_ready()
        t1 = time.perf_counter()
        back = np.asarray(on_device)
        t2 = time.perf_counter()
        best_up, best_down = min(best_up, t1 - t0), min(best_down, t2 - t1)
        same = same_bits(host, back)
        on_device.delete()
    gb = host.nbytes / 1e9
    print("bw    %-10s %5d MiB  host->device %6.2f GB/s  device->host %6.2f GB/s" %
          (label, mib, gb / best_up, gb / best_down), flush=True)
    return same, gb / best_up, gb / best_down


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--big-mib", type=int, default=1024, help="size of the bandwidth transfer")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    devices = jax.devices("ember")
    print("ember devices:", devices, "kind:", devices[0].device_kind, flush=True)
    check(all(d.platform in ("cuda", "ember") for d in devices), "Ember's devices are CUDA devices")
    device = devices[0]
    round_trips(device, rng)
    memory_accounting(device)
    errors_leave_buffers_valid(device, rng)
    same, up, down = bandwidth(device, args.big_mib, "ember")
    check(same, "a %d MiB round trip keeps every bit" % args.big_mib)
    try:
        xla = jax.devices("cuda")[0]
    except RuntimeError:
        xla = None
    if xla is not None:
        _, xla_up, xla_down = bandwidth(xla, args.big_mib, "xla:gpu")
        print("ratio ember/xla time: host->device %.2fx, device->host %.2fx" % (xla_up / up, xla_down / down))
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
