#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the main job: the same model and data as a JAX program on
# Ember next to XLA:CPU (examples/main_job.py), then as a TensorFlow program (jit_compile=True) on
# Ember next to TensorFlow's own XLA on its CPU device (examples/main_job_tf.py). Arguments go to
# both (--steps, --batch, --data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
.venv/bin/python examples/main_job.py "$@"
echo
if .venv/bin/python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('tensorflow') is None)"; then
  exec .venv/bin/python examples/main_job_tf.py "$@"
fi
echo "run_main: tensorflow-cpu is not installed (scripts/setup.sh could not install it): no TensorFlow main job"
