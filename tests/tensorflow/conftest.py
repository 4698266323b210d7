"""Shared setup of the TensorFlow tests: quiet TensorFlow logs, the examples folder on the path
(the main job's model and Fashion-MNIST reader are reused), and the devices compared."""
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))

EMBER = "/device:EMBER:0"
CPU = "/device:CPU:0"
# Where TensorFlow cannot be installed the tests are skipped with this reason (never silently).
NO_TENSORFLOW = ("tensorflow-cpu is not installed in this venv (scripts/setup.sh installs "
                 "python/requirements-tensorflow.txt)")
