"""Tests for the 16-bit dropout the trainer's models use."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import dropout
from mixvocab_tf.core import trainer as trainer_lib


def _model(rate):
  with trainer_lib._generator_backed_dropout():  # pylint: disable=protected-access
    inputs = tf_keras.Input([4096])
    model = tf_keras.Model(inputs, tf_keras.layers.Dropout(rate)(inputs))
  return model


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_drops_the_rate_and_keeps_the_expected_value(rate):
  model = _model(rate)
  assert dropout.use_sixteen_bit_dropout(model) == 1
  outputs = model(tf.ones([64, 4096]), training=True).numpy()
  dropped = np.mean(outputs == 0)
  # 262,144 Bernoulli draws: 5 standard deviations is under 0.005.
  assert abs(dropped - rate) < 0.005, dropped
  threshold = round(rate * 65536)
  kept = outputs[outputs != 0]
  np.testing.assert_allclose(kept, 65536 / (65536 - threshold), rtol=1e-6)
  assert abs(outputs.mean() - 1.0) < 0.01
  # Inference and a zero rate leave the input alone.
  np.testing.assert_array_equal(model(tf.ones([2, 4096]), training=False), 1)
  zero = _model(0.0)
  dropout.use_sixteen_bit_dropout(zero)
  np.testing.assert_array_equal(zero(tf.ones([2, 4096]), training=True), 1)


def test_masks_follow_the_layer_generator_state():
  model = _model(0.5)
  dropout.use_sixteen_bit_dropout(model)
  model(tf.ones([1, 4096]), training=True)  # Creates the generator.
  (generator,) = trainer_lib.dropout_generators(model)
  state = generator.state.numpy()
  first = model(tf.ones([8, 4096]), training=True).numpy()
  second = model(tf.ones([8, 4096]), training=True).numpy()
  assert not np.array_equal(first, second)
  generator.state.assign(state)  # What restoring a checkpoint does.
  np.testing.assert_array_equal(
      model(tf.ones([8, 4096]), training=True), first)


def test_layers_without_generator_backed_dropout_are_left_alone():
  inputs = tf_keras.Input([16])
  model = tf_keras.Model(inputs, tf_keras.layers.Dropout(0.1)(inputs))
  assert dropout.use_sixteen_bit_dropout(model) == 0
  # Patching twice changes nothing.
  model = _model(0.1)
  assert dropout.use_sixteen_bit_dropout(model) == 1
  assert dropout.use_sixteen_bit_dropout(model) == 0
