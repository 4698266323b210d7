"""Ember's main job: a JAX program run on Ember and on XLA:CPU in one process, results and timings
side by side.

Today Ember holds device buffers and moves data; its compiler is not built yet, so the job
measures what runs: uploading a batch of Fashion-MNIST-sized images, moving them between devices
and reading them back, checked bit-for-bit against XLA:CPU. It then tries the jitted training
step and prints Ember's own error for it, so the gap is visible rather than hidden.
"""
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "ember,cpu")
os.environ.setdefault("EMBER_HOST_DEVICE_COUNT", "2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def timed(fn, repeats=20):
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def round_trip(devices, batch):
    def run():
        x = jax.device_put(batch, devices[0])
        y = jax.device_put(x, devices[-1])
        return np.asarray(y)
    return run


def main():
    rng = np.random.default_rng(0)
    batch = rng.random((1024, 784), dtype=np.float32)  # 1024 images of 28x28
    backends = {"ember": jax.devices("ember"), "xla:cpu": jax.devices("cpu")}
    print(f"jax {jax.__version__}; Ember devices: {backends['ember']}")
    results = {}
    for name, devices in backends.items():
        out = round_trip(devices, batch)()
        assert np.array_equal(out, batch), f"{name}: round trip changed the data"
        results[name] = timed(round_trip(devices, batch))
    mb = batch.nbytes / 2**20
    print(f"{'backend':10s} {'upload+copy+download of ' + format(mb, '.1f') + ' MiB':>34s} {'GB/s':>8s}")
    for name, seconds in results.items():
        print(f"{name:10s} {seconds * 1e3:31.3f} ms {3 * batch.nbytes / seconds / 1e9:8.2f}")
    print(f"ratio ember / xla:cpu: {results['ember'] / results['xla:cpu']:.2f}x (bit-exact: yes)")

    # The tutorial's training step; runs once the compiler exists.
    w = np.zeros((784, 10), np.float32)

    def loss(w, x, y):
        logits = x @ w
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

    step = jax.jit(lambda w, x, y: w - 0.5 * jax.grad(loss)(w, x, y))
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 1024)]
    try:
        step(jax.device_put(w, backends["ember"][0]), jax.device_put(batch, backends["ember"][0]),
             jax.device_put(labels, backends["ember"][0])).block_until_ready()
        print("jitted training step on Ember: ran")
    except Exception as e:  # pylint: disable=broad-except
        print(f"jitted training step on Ember: not yet ({type(e).__name__}: {e})")


if __name__ == "__main__":
    main()
