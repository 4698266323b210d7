#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the main job: a JAX program on Ember next to XLA:CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
exec .venv/bin/python examples/main_job.py "$@"
