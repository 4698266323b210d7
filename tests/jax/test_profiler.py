"""jax.profiler.trace shows Ember (issue 12, item 6): the PJRT profiler extension hands JAX the
compile stages (read/import, each pass, the host backend) and, per device, each launch and the
kernels it ran, in the same trace as XLA:CPU's own events. Read back with jaxlib's XSpace reader."""
import glob

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.lib import _profile_data


def _trace(tmp_path, body):
    with jax.profiler.trace(str(tmp_path)):
        body()
    files = glob.glob(str(tmp_path / "**" / "*.xplane.pb"), recursive=True)
    assert len(files) == 1, files
    return _profile_data.ProfileData.from_file(files[0])


def _events(profile, plane_part, line_name):
    out = []
    for plane in profile.planes:
        if plane_part not in plane.name:
            continue
        for line in plane.lines:
            if line.name == line_name:
                out += [(plane.name, e.name, e.start_ns, e.duration_ns) for e in line.events]
    return out


def test_trace_shows_compile_launches_and_kernels(ember_devices, tmp_path):
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)

    def step(a):
        return jnp.tanh(a @ a.T).sum(axis=0) * 2

    results = {}

    def body():
        for backend in ("cpu", "ember"):
            f = jax.jit(step)
            results[backend] = np.asarray(f(jax.device_put(x, jax.devices(backend)[0])))

    profile = _trace(tmp_path, body)
    np.testing.assert_allclose(results["ember"], results["cpu"], rtol=1e-5, atol=1e-5)
    compile_events = _events(profile, "Ember host", "Compile")
    names = [e[1] for e in compile_events]
    assert any(n.startswith("compile ember-") for n in names), names
    assert "read and import" in names
    assert any(n.startswith("pass ") for n in names), names
    launches = _events(profile, "Ember device 0", "Launches")
    assert [e[1] for e in launches] == ["jit_step"], launches
    kernels = _events(profile, "Ember device 0", "Kernels")
    assert any("dot" in e[1] for e in kernels), kernels
    _, _, start, duration = launches[0]
    for _, name, k_start, k_duration in kernels:
        assert start <= k_start and k_start + k_duration <= start + duration, name
    # XLA:CPU's own events are in the same trace.
    cpu_names = [e.name for p in profile.planes if p.name == "/host:CPU" for line in p.lines
                 for e in line.events]
    assert any("jit_step" in n for n in cpu_names), cpu_names[:20]


def test_each_device_of_a_multi_device_launch_has_its_plane(ember_devices, tmp_path):
    n = 2
    f = jax.pmap(lambda a: a * 2 + 1, devices=ember_devices[:n])
    x = np.arange(n * 8, dtype=np.float32).reshape(n, 8)
    f(x).block_until_ready()  # compile outside the trace
    profile = _trace(tmp_path, lambda: f(x).block_until_ready())
    planes = {e[0] for e in _events(profile, "Ember device", "Launches")}
    assert planes == {f"/custom:Ember device {d.id}" for d in ember_devices[:n]}, planes
    assert not _events(profile, "Ember host", "Compile")  # nothing compiled in this trace


def test_nothing_is_recorded_outside_a_trace(ember_devices, tmp_path):
    f = jax.jit(lambda a: a + 1)
    x = jax.device_put(np.ones(4, np.float32), ember_devices[0])
    f(x).block_until_ready()  # outside any trace
    profile = _trace(tmp_path, lambda: None)
    assert not _events(profile, "Ember", "Launches")
