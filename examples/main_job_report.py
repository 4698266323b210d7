"""What the two main jobs (examples/main_job.py in JAX, examples/main_job_tf.py in TensorFlow)
share around their training loops: the command line and the results table with its ratios."""
import argparse
import statistics

import numpy as np

from fashion_mnist import DEFAULT_DATA


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    return parser.parse_args()


def summarize(times, predictions, labels, weights):
    """One backend's row: (test accuracy, mean step s, first step s, final weights). The first
    step includes compilation, so it is reported apart."""
    accuracy = float(np.mean(np.asarray(predictions) == labels))
    mean = statistics.mean(times[1:]) if len(times) > 1 else times[0]
    return accuracy, mean, times[0], np.asarray(weights)


def print_report(results, reference):
    """`results`: backend name -> (test accuracy, mean step s, first step s, final weights), Ember
    ("ember") first; `reference` names the backend Ember is compared with."""
    width = max(len(name) for name in results) + 1
    print(f"{'backend':{width}s} {'test accuracy':>14s} {'mean step (ms)':>15s} {'first step (ms)':>16s}")
    for name, (acc, step, first, _) in results.items():
        print(f"{name:{width}s} {acc:14.4f} {step * 1e3:15.3f} {first * 1e3:16.1f}")
    e, x = results["ember"], results[reference]
    w_diff = float(np.max(np.abs(np.asarray(e[3]) - np.asarray(x[3]))))
    print(f"step time ratio ember / {reference}: {e[1] / x[1]:.2f}x; accuracy difference "
          f"{abs(e[0] - x[0]):.4f}; max |w_ember - w_{reference}| = {w_diff:.2e}")
