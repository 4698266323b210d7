"""The XLA tutorial's MNIST softmax step (one dense layer, sparse softmax cross-entropy, SGD 0.5,
`jit_compile=True`; the model of examples/main_job_tf.py) on a small Fashion-MNIST subset: Ember
gives TensorFlow's own answers (XLA on TensorFlow's CPU device) step by step."""
import numpy as np
import pytest

from conftest import CPU, EMBER, NO_TENSORFLOW

tf = pytest.importorskip("tensorflow", reason=NO_TENSORFLOW)
import ember.tensorflow  # noqa: E402,F401
from fashion_mnist import DEFAULT_DATA, load  # noqa: E402
from main_job_tf import make_model  # noqa: E402

STEPS, BATCH = 10, 100


@pytest.fixture(scope="module")
def data():
    x_train, y_train, x_test, y_test = load(DEFAULT_DATA)
    return x_train[:STEPS * BATCH], y_train[:STEPS * BATCH], x_test[:1000], y_test[:1000]


def train(device, data):
    x_train, y_train, x_test, y_test = data
    w, b, train_step, predict = make_model(device)
    losses = []
    with tf.device(device):
        for step in range(STEPS):
            batch = slice(step * BATCH, (step + 1) * BATCH)
            losses.append(float(train_step(tf.constant(x_train[batch]),
                                           tf.constant(y_train[batch])).numpy()))
        # predict's entry root is a plain array, not a tuple.
        predictions = predict(tf.constant(x_test))
    assert w.device.endswith(device.lstrip("/")), w.device
    assert predictions.device.endswith(device.lstrip("/"))
    return np.array(losses), w.numpy(), b.numpy(), float(np.mean(predictions.numpy() == y_test))


def test_softmax_step_matches_tensorflow_cpu(data):
    ember_losses, ember_w, ember_b, ember_acc = train(EMBER, data)
    cpu_losses, cpu_w, cpu_b, cpu_acc = train(CPU, data)
    # f32 SGD at learning rate 0.5: the products are summed in another order, so the last bits
    # differ, and the large steps let the difference grow (after 20 steps, 6e-5 relative).
    np.testing.assert_allclose(ember_losses, cpu_losses, rtol=1e-5)
    np.testing.assert_allclose(ember_w, cpu_w, atol=1e-5)
    np.testing.assert_allclose(ember_b, cpu_b, atol=1e-5)
    assert abs(ember_acc - cpu_acc) <= 0.002  # at most 2 of 1000 near-ties may flip
    print(f"accuracy after {STEPS} steps: ember {ember_acc}, tf-cpu {cpu_acc}")
    assert ember_acc > 0.3  # it learns (chance is 0.1; 0.41 after 10 steps)
