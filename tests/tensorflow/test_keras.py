"""Keras `fit(jit_compile=True)` on Ember gives TensorFlow-CPU's losses: a small CNN (convolution,
max pooling, dropout, Adam) for 3 epochs, and the XLA tutorial's BERT-like encoder (embeddings and
LayerNorm, 2 layers of multi-head attention and a GELU MLP, hidden size 32) for a few steps. The
train step is one program with a Keras-sized set of input/output aliases (the variables), all
written in place."""
import os
import re

import numpy as np
import pytest

from conftest import CPU, EMBER, NO_TENSORFLOW

tf = pytest.importorskip("tensorflow", reason=NO_TENSORFLOW)
import ember.tensorflow  # noqa: E402,F401
import keras  # noqa: E402
from fashion_mnist import DEFAULT_DATA, load  # noqa: E402


def cnn():
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.25),  # stateless RNG: rng-bit-generator, shifts, bitcast-convert
        keras.layers.Dense(10),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=True, metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_cnn_fit_matches_tensorflow_cpu(tmp_path, monkeypatch):
    x, y, _, _ = load(DEFAULT_DATA)
    x, y = x[:512].reshape(-1, 28, 28, 1), y[:512]
    history = {}
    for device in (EMBER, CPU):
        if device == EMBER:  # Ember writes the programs it receives, as imported, here
            monkeypatch.setenv("EMBER_FLAGS", f"--dump_to={tmp_path}")
        with tf.device(device):
            model = cnn()
            history[device] = model.fit(x, y, batch_size=64, epochs=3, shuffle=False,
                                        verbose=0).history
        monkeypatch.delenv("EMBER_FLAGS", raising=False)
        assert model.trainable_variables[0].value.device.endswith(device.lstrip("/"))
    ember_loss, cpu_loss = history[EMBER]["loss"], history[CPU]["loss"]
    print("CNN losses per epoch: ember", ember_loss, "tf-cpu", cpu_loss)
    np.testing.assert_allclose(ember_loss, cpu_loss, rtol=1e-5)
    np.testing.assert_allclose(history[EMBER]["accuracy"], history[CPU]["accuracy"], atol=1e-6)
    assert ember_loss[-1] < ember_loss[0]

    # The train step's variables, optimizer slots and metric totals (24) are input/output aliases
    # of its HLO module; Ember's buffer report shows them written into their parameters' buffers
    # (the bias updates are fused into the reductions that give their gradients). The one
    # exception allowed is the dropout RNG's 16-byte state: the fused kernel drawing the bits
    # reads the old state and needs the new one, so no order lets the new state overwrite it.
    reports = [(tmp_path / p).read_text() for p in os.listdir(tmp_path)
               if p.endswith(".buffers.txt")]
    step = max(reports, key=lambda r: r.count("is written into parameter"))
    assert step.count("is written into parameter") >= 18, step
    sizes = {int(m.group(1)): int(m.group(2))
             for m in re.finditer(r"parameter index=(\d+) size=(\d+)", step)}
    for m in re.finditer(r"result \d+ gets its own buffer, not parameter (\d+)'s", step):
        assert sizes[int(m.group(1))] <= 64, step


def bert_like():
    vocab, length, hidden, heads = 64, 16, 32, 4
    keras.utils.set_random_seed(2)
    ids = keras.Input((length,), dtype="int32")
    x = keras.layers.Embedding(vocab, hidden)(ids) + keras.layers.Embedding(length, hidden)(
        keras.ops.arange(length))
    x = keras.layers.LayerNormalization(epsilon=1e-12)(x)
    for _ in range(2):
        attention = keras.layers.MultiHeadAttention(heads, hidden // heads, dropout=0.1)(x, x)
        x = keras.layers.LayerNormalization(epsilon=1e-12)(x + attention)
        mlp = keras.layers.Dense(hidden, activation="gelu")(keras.layers.Dense(4 * hidden)(x))
        x = keras.layers.LayerNormalization(epsilon=1e-12)(x + mlp)
    logits = keras.layers.Dense(2)(x[:, 0])
    model = keras.Model(ids, logits)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=True,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def test_bert_like_encoder_trains_as_on_tensorflow_cpu():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 64, (16, 16)).astype(np.int32)
    labels = (ids[:, 0] % 2).astype(np.int32)
    losses = {}
    for device in (EMBER, CPU):
        with tf.device(device):
            model = bert_like()
            losses[device] = [float(model.train_on_batch(ids, labels)) for _ in range(4)]
    print("BERT-like losses per step: ember", losses[EMBER], "tf-cpu", losses[CPU])
    np.testing.assert_allclose(losses[EMBER], losses[CPU], rtol=1e-5)
