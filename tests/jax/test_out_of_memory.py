"""Out of memory is an error, never an abort (issue 19): allocations past the device's memory
limit fail with RESOURCE_EXHAUSTED naming what was allocated and the op with its Python line,
the values the evaluator creates while it runs part of a launch count in memory_stats and
against the limit, and the process and its devices stay usable afterwards. Each case runs in a
child process with its own EMBER_MEMORY_LIMIT_BYTES."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

_CHILD = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp
    import numpy as np

    def sort_outer(x):
        # Sorted by f16 keys: their total order is not compiled (f16 goes through f32), so the
        # sort runs on the evaluator, whose copies of operands and results are real memory. One
        # line: the errors name it for the sort and for the largest temporary alike.
        o = jnp.outer(x, x).reshape(-1); return jax.lax.sort((o.astype(jnp.float16), o), num_keys=1)[1][:10]  # SORT_LINE

    device = jax.devices()[0]
    f = jax.jit(sort_outer)
    x = jnp.linspace(0, 1, int(sys.argv[1]))
    start = device.memory_stats()["bytes_in_use"]
    out = {"start": start}
    try:
        out["first"] = np.asarray(f(x)).tolist()
    except Exception as e:
        out["error"] = str(e)
    stats = device.memory_stats()
    out["peak"] = stats["peak_bytes_in_use"]
    out["temp"] = f.lower(x).compile().memory_analysis().temp_size_in_bytes
    # The device still works, and what the failed launch held is back.
    out["after"] = float(jnp.arange(10.0).sum())
    out["end"] = device.memory_stats()["bytes_in_use"]
    if len(sys.argv) > 2:  # a sort too big for any machine: XLA:CPU says RESOURCE_EXHAUSTED too
        try:
            jnp.sort(jax.random.uniform(jax.random.key(0), (1 << 36,))).block_until_ready()
        except Exception as e:
            out["huge"] = str(e)
        out["after_huge"] = float(jnp.arange(4.0).sum())
    print(json.dumps(out))
""")


def _run(tmp_path, n, limit, *extra):
    script = tmp_path / "oom_child.py"
    script.write_text(_CHILD)
    line = next(i for i, text in enumerate(_CHILD.splitlines(), 1) if "SORT_LINE" in text)
    env = dict(os.environ, JAX_PLATFORMS="ember", EMBER_MEMORY_LIMIT_BYTES=str(limit))
    proc = subprocess.run([sys.executable, str(script), str(n), *extra], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]  # no abort, no crash
    return json.loads(proc.stdout.strip().splitlines()[-1]), f"{script}:{line}"


def test_evaluator_values_count_in_memory_stats(tmp_path):
    # 3000^2 f32 = 36 MB: fits in 400 MB. The sort runs on the evaluator, whose copies of its
    # operand and its result are real memory: the device's peak must show them on top of the
    # compiled program's own temporaries.
    out, _ = _run(tmp_path, 3000, 400_000_000)
    assert "error" not in out, out
    assert out["first"] == [0.0] * 10
    assert out["peak"] >= out["temp"] + 2 * 3000 * 3000 * 4, out
    assert out["end"] <= out["start"], out


def test_a_launch_past_the_limit_fails_naming_the_op_and_line(tmp_path):
    # The compiled temporaries (72 MB) fit in 100 MB; the evaluator's values on top do not.
    out, where = _run(tmp_path, 3000, 100_000_000)
    assert "RESOURCE_EXHAUSTED" in out.get("error", ""), out
    assert where in out["error"], out["error"]
    assert "100000000" in out["error"], out["error"]
    assert out["after"] == 45.0
    assert out["end"] <= out["start"], out


def test_temporaries_past_the_limit_name_the_largest(tmp_path):
    # 6400^2 f32 = 164 MB of temporaries cannot be allocated under 100 MB.
    out, where = _run(tmp_path, 6400, 100_000_000)
    error = out.get("error", "")
    assert "RESOURCE_EXHAUSTED" in error and "temporaries of jit_sort_outer" in error, out
    assert where in error and "163840000 bytes" in error, error
    assert out["after"] == 45.0 and out["end"] <= out["start"], out


def test_a_sort_larger_than_memory_is_resource_exhausted(tmp_path):
    out, _ = _run(tmp_path, 10, 1_000_000_000, "huge")
    assert "RESOURCE_EXHAUSTED" in out["huge"], out
    assert "274877906944" in out["huge"], out["huge"]  # the 256 GiB asked for
    assert out["after_huge"] == 6.0


_COMPILED_SORT_CHILD = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp
    x = jnp.linspace(0, 1, 3000)
    f = jax.jit(lambda x: jnp.sort(jnp.outer(x, x).reshape(-1))[:10])
    out = {}
    try:
        out["first"] = [float(v) for v in f(x)]
    except Exception as e:
        out["error"] = str(e)
    out["after"] = float(jnp.arange(10.0).sum())
    print(json.dumps(out))
""")


def test_a_compiled_sort_whose_scratch_exceeds_the_limit_is_resource_exhausted(tmp_path):
    # The compiled sort orders a 9M-element line with two int64 index arrays (144 MB) on top of
    # the program's 72 MB of buffers: under a 160 MB limit the launch fails with an error naming
    # the sort, and the device keeps working; under 400 MB it sorts.
    script = tmp_path / "sort_child.py"
    script.write_text(_COMPILED_SORT_CHILD)
    results = {}
    for limit in (160_000_000, 400_000_000):
        env = dict(os.environ, JAX_PLATFORMS="ember", EMBER_MEMORY_LIMIT_BYTES=str(limit))
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[limit] = json.loads(proc.stdout.strip().splitlines()[-1])
    small, large = results[160_000_000], results[400_000_000]
    assert "RESOURCE_EXHAUSTED" in small.get("error", ""), small
    assert "sort" in small["error"], small["error"]
    assert small["after"] == 45.0
    assert "error" not in large and large["first"] == [0.0] * 10, large
