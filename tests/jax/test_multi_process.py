"""JAX jobs of 2 processes on Ember (jax.distributed.initialize), 2 Ember devices each: the
global device list, psum over all 4 devices, a data-parallel training step equal to numpy's,
jax.experimental.multihost_utils, and a peer that dies mid-job. Each job runs
multi_process/worker.py twice as subprocesses, bounded in time."""
import os
import pathlib
import socket
import subprocess
import sys

import pytest

WORKER = pathlib.Path(__file__).parent / "multi_process" / "worker.py"
NUM_PROCESSES = 2
JOB_TIMEOUT_S = 240


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_job(scenario, collective_timeout_s):
    port = _free_port()
    env = dict(os.environ)
    env.update({"EMBER_HOST_DEVICE_COUNT": "2",
                "EMBER_COLLECTIVE_TIMEOUT_SECONDS": str(collective_timeout_s),
                "JAX_PLATFORMS": "ember"})
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(port), str(pid),
                               str(NUM_PROCESSES), scenario],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
             for pid in range(NUM_PROCESSES)]
    outputs = []
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=JOB_TIMEOUT_S)
            outputs.append((proc.returncode, out))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return outputs


@pytest.fixture(scope="module")
def job():
    return _run_job("all", 60)


@pytest.mark.parametrize("scenario", ["devices_and_psum", "training_step", "multihost_helpers"])
def test_two_process_job(job, scenario):
    for pid, (returncode, out) in enumerate(job):
        assert f"ok {scenario}" in out.splitlines(), \
            f"process {pid} (exit {returncode}) did not pass {scenario}:\n{out[-4000:]}"
    for pid, (returncode, out) in enumerate(job):
        assert returncode == 0, f"process {pid} exited with {returncode}:\n{out[-4000:]}"


def test_a_peer_that_dies_fails_the_collective_in_the_other():
    (rc0, out0), (rc1, out1) = _run_job("peer_dies", 5)
    assert rc1 == -9, f"process 1 should have killed itself, exit {rc1}:\n{out1[-3000:]}"
    assert rc0 == 0 and "ok peer_dies" in out0.splitlines(), \
        f"process 0 (exit {rc0}):\n{out0[-4000:]}"
    assert "collective failed as expected" in out0
