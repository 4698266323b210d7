"""Ember's main job: the softmax classifier of the XLA tutorials (one dense layer, softmax
cross-entropy, SGD with learning rate 0.5, a jitted training step) trained on Fashion-MNIST,
once on Ember and once on XLA:CPU in the same process. Prints test accuracy and mean step time
for both, and their ratio.

Data: Debian's dataset-fashion-mnist package (IDX files), or --data DIR.
"""
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from fashion_mnist import load  # noqa: E402
from main_job_report import parse_args, print_report, summarize  # noqa: E402


def loss_fn(params, x, y_onehot):
    w, b = params
    logits = x @ w + b
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y_onehot, axis=-1))


@jax.jit
def train_step(params, x, y_onehot):
    grads = jax.grad(loss_fn)(params, x, y_onehot)
    return jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)


@jax.jit
def predict(params, x):
    w, b = params
    return jnp.argmax(x @ w + b, axis=-1)


def train(device, data, steps, batch):
    x_train, y_train, x_test, y_test = data
    params = jax.device_put((np.zeros((784, 10), np.float32), np.zeros((10,), np.float32)), device)
    eye = np.eye(10, dtype=np.float32)
    times = []
    for step in range(steps):
        lo = (step * batch) % (len(x_train) - batch)
        xb = jax.device_put(x_train[lo:lo + batch], device)
        yb = jax.device_put(eye[y_train[lo:lo + batch]], device)
        start = time.perf_counter()
        params = train_step(params, xb, yb)
        jax.block_until_ready(params)
        times.append(time.perf_counter() - start)
    predictions = predict(params, jax.device_put(x_test, device))
    return summarize(times, predictions, y_test, params[0])


def main():
    args = parse_args(__doc__)
    data = load(args.data)
    print(f"jax {jax.__version__}; Fashion-MNIST: {len(data[0])} train / {len(data[2])} test images; "
          f"{args.steps} steps of batch {args.batch}, SGD 0.5")
    results = {}
    for name, device in (("ember", jax.devices("ember")[0]), ("xla:cpu", jax.devices("cpu")[0])):
        results[name] = train(device, data, args.steps, args.batch)
    print_report(results, "xla:cpu")


if __name__ == "__main__":
    main()
