"""Tests for the sparse softmax cross-entropy from one softmax."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.core import cross_entropy


def _values_and_gradients(function, labels, logits, upstream):
  with tf.GradientTape() as tape:
    tape.watch(logits)
    losses = function(labels=labels, logits=logits)
  return losses.numpy(), tape.gradient(losses, logits, upstream).numpy()


@pytest.mark.parametrize("classes,scale", [(7, 1.0), (4929, 3.0),
                                           (300, 40.0)])
def test_equals_tf_nn_within_rounding(classes, scale):
  rng = np.random.RandomState(classes)
  logits = tf.constant(rng.normal(0, scale, (3, 50, classes)), tf.float32)
  labels = tf.constant(rng.randint(0, classes, (3, 50)), tf.int32)
  upstream = tf.constant(rng.uniform(0, 2, (3, 50)), tf.float32)
  ours = _values_and_gradients(cross_entropy.sparse_softmax_cross_entropy,
                               labels, logits, upstream)
  theirs = _values_and_gradients(
      tf.nn.sparse_softmax_cross_entropy_with_logits, labels, logits,
      upstream)
  assert ours[0].shape == (3, 50)
  np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-6, atol=2e-6)
  np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_extreme_logits_stay_exact():
  # A confident right answer (a loss far below one ulp of the logits), a
  # confident wrong one (its softmax probability underflows to 0), a tie, and
  # logits large enough that exp(z) overflows.
  logits = tf.constant([[60.0, 0.0, -30.0],
                        [-100.0, 100.0, 0.0],
                        [5.0, 5.0, 5.0],
                        [1000.0, 999.0, 0.0]])
  labels = tf.constant([0, 0, 2, 1])
  ours = cross_entropy.sparse_softmax_cross_entropy(labels=labels,
                                                    logits=logits).numpy()
  expected = [np.exp(-60.0), 200.0, np.log(3.0), 1.0 + np.log1p(np.exp(-1.0))]
  np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(
      ours, tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=labels, logits=logits), rtol=1e-6, atol=1e-7)


def test_bad_shapes_and_labels_are_refused():
  with pytest.raises(ValueError, match="one dimension more"):
    cross_entropy.sparse_softmax_cross_entropy(labels=tf.zeros([2, 3], tf.int32),
                                               logits=tf.zeros([2, 3]))
  with pytest.raises(tf.errors.InvalidArgumentError):
    cross_entropy.sparse_softmax_cross_entropy(labels=tf.constant([0, 5]),
                                               logits=tf.zeros([2, 3]))
