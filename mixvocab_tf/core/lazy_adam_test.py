"""Tests for lazy_adam: the row update against a NumPy reference."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import lazy_adam
from official.modeling.optimization import legacy_adamw

LR, B1, B2, EPS = 0.1, 0.9, 0.999, 1e-7


def _reference(table, steps, weight_decay=0.0):
  """Lazy Adam in NumPy: `steps` is a list of (unique rows, their grads)."""
  table = table.copy()
  m, v = np.zeros_like(table), np.zeros_like(table)
  for t, (rows, grads) in enumerate(steps, start=1):
    rate = LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t)
    m[rows] = B1 * m[rows] + (1 - B1) * grads
    v[rows] = B2 * v[rows] + (1 - B2) * grads ** 2
    table[rows] -= (rate * m[rows] / (np.sqrt(v[rows]) + EPS) +
                    LR * weight_decay * table[rows])
  return table


def _apply(optimizer, table, steps):
  """Applies each step's rows as an IndexedSlices gradient, in a tf.function.

  Row 0's gradient is split over two repeated indices, as a gather over a
  batch that uses a token twice produces.
  """
  var = tf.Variable(table, name="word_embeddings/embeddings")

  @tf.function
  def step(rows, grads):
    indices = tf.concat([rows, rows[:1]], 0)
    values = tf.concat([grads[:1] / 2, grads[1:], grads[:1] / 2], 0)
    grad = tf.IndexedSlices(values, indices, tf.shape(var, tf.int64))
    optimizer.apply_gradients([(grad, var)])

  for rows, grads in steps:
    step(tf.constant(rows), tf.constant(grads))
  return var


@pytest.fixture
def table_and_steps():
  rng = np.random.default_rng(0)
  table = rng.normal(size=(6, 3)).astype(np.float32)
  steps = [(np.array([0, 2], np.int32), rng.normal(size=(2, 3))),
           (np.array([1, 2], np.int32), rng.normal(size=(2, 3))),
           (np.array([4, 2, 1], np.int32), rng.normal(size=(3, 3)))]
  steps = [(rows, grads.astype(np.float32)) for rows, grads in steps]
  return table, steps


def test_only_the_rows_a_step_touches_move(table_and_steps):
  table, steps = table_and_steps
  optimizer = lazy_adam.use_lazy_sparse_updates(
      tf_keras.optimizers.legacy.Adam(LR, B1, B2, EPS))
  got = _apply(optimizer, table, steps).numpy()
  np.testing.assert_allclose(got, _reference(table, steps), rtol=1e-5,
                             atol=1e-6)
  np.testing.assert_array_equal(got[[3, 5]], table[[3, 5]])
  # Keras's own Adam moves row 0 again at steps 2 and 3 on its momentum.
  dense = _apply(tf_keras.optimizers.legacy.Adam(LR, B1, B2, EPS), table,
                 steps).numpy()
  assert np.abs(dense[0] - got[0]).max() > 1e-3
  np.testing.assert_allclose(dense[2], got[2], rtol=1e-5)


def test_weight_decay_applies_to_the_touched_rows(table_and_steps):
  table, steps = table_and_steps
  optimizer = lazy_adam.use_lazy_sparse_updates(
      legacy_adamw.AdamWeightDecay(LR, B1, B2, EPS, weight_decay_rate=0.01,
                                   exclude_from_weight_decay=["bias"],
                                   gradient_clip_norm=0.0))
  assert isinstance(optimizer, legacy_adamw.AdamWeightDecay)
  got = _apply(optimizer, table, steps).numpy()
  np.testing.assert_allclose(got, _reference(table, steps, 0.01), rtol=1e-5,
                             atol=1e-6)
  np.testing.assert_array_equal(got[[3, 5]], table[[3, 5]])


def test_dense_gradients_keep_adams_update():
  rng = np.random.default_rng(1)
  start = rng.normal(size=(4, 3)).astype(np.float32)
  grad = tf.constant(rng.normal(size=(4, 3)).astype(np.float32))
  results = []
  for lazy in (False, True):
    optimizer = tf_keras.optimizers.legacy.Adam(LR)
    if lazy:
      lazy_adam.use_lazy_sparse_updates(optimizer)
    var = tf.Variable(start)
    for _ in range(3):
      optimizer.apply_gradients([(grad, var)])
    results.append(var.numpy())
  np.testing.assert_array_equal(results[0], results[1])


def test_checkpoints_are_those_of_the_optimizer_class(tmp_path,
                                                      table_and_steps):
  table, steps = table_and_steps
  optimizer = lazy_adam.use_lazy_sparse_updates(
      tf_keras.optimizers.legacy.Adam(LR))
  var = _apply(optimizer, table, steps[:1])
  path = tf.train.Checkpoint(optimizer=optimizer, var=var).save(
      str(tmp_path / "c"))
  names = {name for name, _ in tf.train.list_variables(path)}
  assert any("/.OPTIMIZER_SLOT/optimizer/m/" in name for name in names)
  plain = tf_keras.optimizers.legacy.Adam(LR)
  restored = tf.Variable(tf.zeros_like(table))
  tf.train.Checkpoint(optimizer=plain, var=restored).read(
      path).assert_existing_objects_matched()
  plain.apply_gradients([(tf.zeros_like(restored), restored)])
  assert int(plain.iterations.numpy()) == 2
  np.testing.assert_array_equal(plain.get_slot(restored, "m").numpy(),
                                optimizer.get_slot(var, "m").numpy() * B1)


def test_use_is_idempotent_and_rejects_other_optimizers():
  optimizer = tf_keras.optimizers.legacy.Adam(LR)
  assert lazy_adam.use_lazy_sparse_updates(
      lazy_adam.use_lazy_sparse_updates(optimizer)) is optimizer
  assert type(optimizer).__mro__[2] is tf_keras.optimizers.legacy.Adam
  with pytest.raises(ValueError, match="legacy Keras Adam"):
    lazy_adam.use_lazy_sparse_updates(tf_keras.optimizers.legacy.SGD(LR))
  with pytest.raises(ValueError, match="AMSGrad"):
    lazy_adam.use_lazy_sparse_updates(
        tf_keras.optimizers.legacy.Adam(LR, amsgrad=True))
