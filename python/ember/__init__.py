"""Ember, an independent PJRT device runtime, for frameworks other than JAX.

`import ember.tensorflow` registers Ember's device with TensorFlow (`/device:EMBER:0`). JAX finds
Ember by itself through the `jax_plugins.ember` package. Both use the same plugin library.
"""
