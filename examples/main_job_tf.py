"""Ember's main job in TensorFlow: the softmax classifier of TensorFlow's XLA tutorial (one dense
layer, sparse softmax cross-entropy, SGD with learning rate 0.5, a training step compiled with
`tf.function(jit_compile=True)`) trained on Fashion-MNIST, once on Ember (/device:EMBER:0) and once
with TensorFlow's own XLA on its CPU device, in the same process. Prints test accuracy and mean
step time for both, and their ratio; the same model, data and steps as examples/main_job.py.

Data: Debian's dataset-fashion-mnist package (IDX files), or --data DIR.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import ember.tensorflow  # noqa: E402,F401  (registers /device:EMBER:0)
from fashion_mnist import load  # noqa: E402
from main_job_report import parse_args, print_report, summarize  # noqa: E402


def make_model(device):
    """Variables on `device` and the tutorial's jit-compiled step and prediction."""
    with tf.device(device):
        w = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))

    @tf.function(jit_compile=True)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, w) + b
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grad_w, grad_b = tape.gradient(loss, [w, b])
        w.assign_sub(0.5 * grad_w)
        b.assign_sub(0.5 * grad_b)
        return loss

    @tf.function(jit_compile=True)
    def predict(x):
        return tf.argmax(tf.matmul(x, w) + b, axis=1, output_type=tf.int32)

    return w, b, train_step, predict


def train(device, data, steps, batch):
    x_train, y_train, x_test, y_test = data
    w, b, train_step, predict = make_model(device)
    times = []
    with tf.device(device):
        for step in range(steps):
            lo = (step * batch) % (len(x_train) - batch)
            xb = tf.identity(x_train[lo:lo + batch])
            yb = tf.identity(y_train[lo:lo + batch])
            start = time.perf_counter()
            loss = train_step(xb, yb)
            loss.numpy()  # waits for the step
            times.append(time.perf_counter() - start)
        predictions = predict(tf.identity(x_test)).numpy()
    return summarize(times, predictions, y_test, w.numpy())


def main():
    args = parse_args(__doc__)
    data = load(args.data)
    print(f"tensorflow {tf.__version__}; Fashion-MNIST: {len(data[0])} train / {len(data[2])} test "
          f"images; {args.steps} steps of batch {args.batch}, SGD 0.5, jit_compile=True")
    results = {}
    for name, device in (("ember", "/device:EMBER:0"), ("tf-xla:cpu", "/device:CPU:0")):
        results[name] = train(device, data, args.steps, args.batch)
    print_report(results, "tf-xla:cpu")


if __name__ == "__main__":
    main()
