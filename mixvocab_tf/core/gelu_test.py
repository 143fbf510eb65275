"""Tests for the exact GELU with a closed-form gradient."""

import math

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import gelu


def _points(dtype):
  # Tails, zero, subnormal-sized and ordinary values, both signs.
  edges = [-40.0, -10.0, -6.0, -1e-30, -1e-7, 0.0, 1e-7, 1e-30, 6.0, 10.0,
           40.0]
  rng = np.random.RandomState(0)
  values = np.concatenate([edges, rng.normal(0, 3, 4000)])
  return tf.constant(values, dtype)


@pytest.mark.parametrize("dtype", [tf.float32, tf.bfloat16])
def test_forward_is_tf_nn_gelu_bit_for_bit(dtype):
  x = _points(dtype)
  np.testing.assert_array_equal(
      gelu.gelu(x).numpy(), tf.nn.gelu(x, approximate=False).numpy())


def test_gradient_is_the_closed_form_and_autodiffs_to_the_last_bits():
  x = _points(tf.float32)
  upstream = tf.random.stateless_normal(x.shape, seed=[1, 2])
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    ours = gelu.gelu(x)
    theirs = tf.nn.gelu(x, approximate=False)
  our_gradient = tape.gradient(ours, x, upstream).numpy()
  their_gradient = tape.gradient(theirs, x, upstream).numpy()
  np.testing.assert_allclose(our_gradient, their_gradient, rtol=1e-5,
                             atol=1e-6)
  # Against Phi(x) + x phi(x) in float64.
  x64 = x.numpy().astype(np.float64)
  cdf = 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in x64])
  slope = cdf + x64 * np.exp(-x64 ** 2 / 2) / math.sqrt(2 * math.pi)
  np.testing.assert_allclose(our_gradient, upstream.numpy() * slope,
                             rtol=2e-6, atol=1e-6)
  assert np.all(np.isfinite(our_gradient))


def test_switches_exact_gelu_layers_only():
  inputs = tf_keras.Input([8])
  hidden = tf_keras.layers.Dense(16, activation="gelu")(inputs)
  hidden = tf_keras.layers.Activation("gelu")(hidden)
  hidden = tf_keras.layers.Activation("relu")(hidden)
  approximate = tf_keras.layers.Activation(
      lambda t: tf_keras.activations.gelu(t, approximate=True))(hidden)
  model = tf_keras.Model(inputs, approximate)
  features = tf.random.stateless_normal([4, 8], seed=[3, 4])
  before = model(features).numpy()
  assert gelu.use_closed_form_gelu_gradient(model) == 2
  assert gelu.use_closed_form_gelu_gradient(model) == 0  # Already switched.
  activations = [layer.activation for layer in model.layers[1:]]
  assert activations[:2] == [gelu.gelu, gelu.gelu]
  assert activations[2] is tf_keras.activations.relu
  np.testing.assert_array_equal(model(features).numpy(), before)
  # A switched layer still serializes as the exact GELU.
  config = model.layers[2].get_config()
  rebuilt = tf_keras.layers.Activation.from_config(config)
  assert rebuilt.activation is tf_keras.activations.gelu
