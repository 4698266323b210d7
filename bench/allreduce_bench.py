"""All-reduce bus bandwidth against message size (issue 17's bench row): a psum over 4 host
devices, Ember next to XLA:CPU, in one process (4 devices) and in a job of 2 processes x 2
devices (jax.distributed on loopback: Ember's Gloo transport next to XLA:CPU's gloo
collectives). Bus bandwidth is NCCL's measure, 2 (n-1)/n x bytes per device / time, so rows
compare across device counts; ratio = Ember's time / XLA's (below 1.0: Ember is faster).

    .venv/bin/python bench/allreduce_bench.py [--repeat N] [--max-mib M] [--skip-multi]

A benchmark, not a test: nothing here asserts a speed.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

DEVICES = 4


def sizes(max_mib):
    size, out = 4 * 1024, []
    while size <= max_mib * 1024 * 1024:
        out.append(size)
        size *= 16 if size < 1024 * 1024 else 4
    return out


def time_psum(jax, np, devices, size_bytes, repeat):
    """Median seconds of one psum of `size_bytes` f32 per device over `devices` (this process's
    share of the job's devices; the pmap spans the job's)."""
    n = size_bytes // 4
    psum = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i", devices=devices)
    local = [d for d in devices if d.process_index == jax.process_index()]
    # On the devices once (an identity pmap), so the timed calls move no host data.
    x = jax.pmap(lambda v: v, axis_name="i", devices=devices)(
        np.ones((len(local), n), np.float32))
    psum(x).block_until_ready()  # compile, connect
    times = []
    for _ in range(repeat if size_bytes < 64 * 1024 * 1024 else max(2, repeat // 4)):
        start = time.perf_counter()
        psum(x).block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bus_bandwidth(size_bytes, seconds, n):
    return 2 * (n - 1) / n * size_bytes / seconds / 1e9


def worker(args):
    """One process of a 2-process job: times every size on its platform, prints JSON (process 0)."""
    platform = args.platform
    os.environ["JAX_PLATFORMS"] = platform
    os.environ["EMBER_HOST_DEVICE_COUNT"] = str(DEVICES // 2)
    import jax  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel
    if platform == "cpu":
        jax.config.update("jax_num_cpu_devices", DEVICES // 2)
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{args.port}", num_processes=2,
                               process_id=args.pid, initialization_timeout=60)
    results = {}
    for size in sizes(args.max_mib):
        results[size] = time_psum(jax, np, jax.devices(), size, args.repeat)
    if args.pid == 0:
        print("RESULT " + json.dumps(results), flush=True)
    jax.distributed.shutdown()


def run_job(platform, args):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", platform, "--port", str(port),
                               "--pid", str(pid), "--repeat", str(args.repeat),
                               "--max-mib", str(args.max_mib)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for pid in range(2)]
    outs = [p.communicate(timeout=1800)[0] for p in procs]
    for line in outs[0].splitlines():
        if line.startswith("RESULT "):
            return {int(k): v for k, v in json.loads(line[len("RESULT "):]).items()}
    raise RuntimeError(f"{platform} job failed:\n{outs[0][-3000:]}\n{outs[1][-3000:]}")


def print_table(title, ember, xla):
    print(f"\n{title}")
    print(f"{'size':>10} {'Ember GB/s':>11} {'XLA GB/s':>10} {'ratio':>7}")
    for size in ember:
        e, x = ember[size], xla[size]
        label = f"{size // 1024} KiB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MiB"
        print(f"{label:>10} {bus_bandwidth(size, e, DEVICES):11.3f} "
              f"{bus_bandwidth(size, x, DEVICES):10.3f} {e / x:7.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--max-mib", type=int, default=256)
    parser.add_argument("--skip-multi", action="store_true")
    parser.add_argument("--worker", choices=["ember", "cpu"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--pid", type=int)
    args = parser.parse_args()
    if args.worker:
        args.platform = args.worker
        worker(args)
        return
    os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")
    os.environ["EMBER_HOST_DEVICE_COUNT"] = str(DEVICES)
    import jax  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel
    jax.config.update("jax_num_cpu_devices", DEVICES)
    ember, xla = {}, {}
    for size in sizes(args.max_mib):
        ember[size] = time_psum(jax, np, jax.devices("ember"), size, args.repeat)
        xla[size] = time_psum(jax, np, jax.devices("cpu"), size, args.repeat)
    print_table("1 process x 4 devices (Ember in-process transport; XLA:CPU in-process)", ember, xla)
    if not args.skip_multi:
        print_table("2 processes x 2 devices (Ember Gloo; XLA:CPU gloo)", run_job("ember", args),
                    run_job("cpu", args))


if __name__ == "__main__":
    main()
