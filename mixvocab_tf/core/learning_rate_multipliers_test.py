"""Tests for learning_rate_multipliers: Adam's first step scales with the rate."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import lazy_adam
from mixvocab_tf.core import learning_rate_multipliers as lr_multipliers
from official.modeling.optimization import legacy_adamw

LR = 0.01


def _apply(optimizer, grads_and_vars):
  @tf.function
  def step():
    optimizer.apply_gradients(grads_and_vars)
  step()


def _first_step(optimizer, sparse=False):
  """How far one step moves an encoder and a head variable, and a table row.

  Adam's first step is the rate times the gradient's sign (up to epsilon),
  whatever the gradient's size, so each distance is the variable's rate.
  """
  encoder = tf.Variable(np.ones([3, 2], np.float32), name="encoder/kernel")
  head = tf.Variable(np.ones([3, 2], np.float32), name="slot_classifier/kernel")
  table = tf.Variable(np.ones([5, 2], np.float32), name="slot_classifier/table")
  grads = [(tf.fill([3, 2], 0.3), encoder), (tf.fill([3, 2], 7.0), head)]
  if sparse:
    grads.append((tf.IndexedSlices(tf.fill([1, 2], 2.0), tf.constant([1]),
                                   tf.constant([5, 2])), table))
  _apply(optimizer, grads)
  return (1 - encoder.numpy(), 1 - head.numpy(), 1 - table.numpy())


@pytest.mark.parametrize("lazy", [False, True])
def test_matching_variables_move_multiplier_times_as_far(lazy):
  optimizer = tf_keras.optimizers.legacy.Adam(LR, epsilon=1e-9)
  if lazy:
    lazy_adam.use_lazy_sparse_updates(optimizer)
  lr_multipliers.use_learning_rate_multipliers(
      optimizer, {"intent_classifier|slot_classifier": 10.0})
  encoder, head, table = _first_step(optimizer, sparse=True)
  np.testing.assert_allclose(encoder, LR, rtol=1e-4)
  np.testing.assert_allclose(head, 10 * LR, rtol=1e-4)
  # The sparse update (Keras's or the lazy one) scales the same way.
  np.testing.assert_allclose(table[1], 10 * LR, rtol=1e-4)
  np.testing.assert_array_equal(table[[0, 2, 3, 4]], 0.0)


def test_first_matching_pattern_wins_and_others_keep_the_rate():
  optimizer = lr_multipliers.use_learning_rate_multipliers(
      tf_keras.optimizers.legacy.Adam(LR, epsilon=1e-9),
      {"slot_classifier/kernel": 3.0, "classifier": 10.0, "nothing": 5.0})
  encoder, head, _ = _first_step(optimizer)
  np.testing.assert_allclose(encoder, LR, rtol=1e-4)
  np.testing.assert_allclose(head, 3 * LR, rtol=1e-4)


def test_weight_decay_scales_with_the_rate():
  def decay_only(multipliers):
    optimizer = legacy_adamw.AdamWeightDecay(
        LR, weight_decay_rate=0.1, epsilon=1e-9, gradient_clip_norm=0.0)
    if multipliers:
      lr_multipliers.use_learning_rate_multipliers(optimizer, multipliers)
    head = tf.Variable(np.ones([2], np.float32), name="classifier/kernel")
    # A zero gradient: Adam's step is 0, what moves is the decay.
    _apply(optimizer, [(tf.zeros([2]), head)])
    return 1 - head.numpy()
  plain = decay_only(None)
  np.testing.assert_allclose(plain, LR * 0.1, rtol=1e-4)
  np.testing.assert_allclose(decay_only({"classifier": 4.0}), 4 * plain,
                             rtol=1e-4)


def test_wrapping_twice_replaces_the_multipliers():
  optimizer = tf_keras.optimizers.legacy.Adam(LR, epsilon=1e-9)
  lr_multipliers.use_learning_rate_multipliers(optimizer, {"classifier": 2.0})
  lr_multipliers.use_learning_rate_multipliers(optimizer, {"classifier": 5.0})
  assert type(optimizer).__name__ == "AdamWithMultipliers"
  _, head, _ = _first_step(optimizer)
  np.testing.assert_allclose(head, 5 * LR, rtol=1e-4)


def test_bad_arguments_say_what_was_received():
  with pytest.raises(ValueError, match="legacy Keras Adam .* received SGD"):
    lr_multipliers.use_learning_rate_multipliers(
        tf_keras.optimizers.legacy.SGD(LR), {"classifier": 2.0})
  adam = tf_keras.optimizers.legacy.Adam(LR)
  with pytest.raises(ValueError, match=r"'\(classifier' is not a regular"):
    lr_multipliers.use_learning_rate_multipliers(adam, {"(classifier": 2.0})
  for bad in (0.0, -1.0, "10", True):
    with pytest.raises(ValueError, match="positive numbers; received"):
      lr_multipliers.use_learning_rate_multipliers(adam, {"classifier": bad})
  assert type(adam) is tf_keras.optimizers.legacy.Adam
