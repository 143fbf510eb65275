"""Tests for projection_loss."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.layers import shared_projection
from mixvocab_tf.models import projection_loss
from mixvocab_tf.networks import dual_vocab_bert_encoder
from mixvocab_tf.networks import student_encoder


def _teacher():
  return dual_vocab_bert_encoder.DualVocabBertEncoder(
      teacher_vocab_size=50, student_vocab_size=40, student_embedding_width=8,
      hidden_size=16, num_layers=2, num_attention_heads=4, inner_dim=64,
      max_sequence_length=8)


def _student(num_layers=2):
  return student_encoder.build_student_encoder(
      None, vocab_size=40, num_layers=num_layers, hidden_size=8,
      max_sequence_length=8)


def _numpy_down(u, v, w):
  k1, k2 = w.shape[0] // 16, w.shape[1] // 16
  return np.block([[u.T @ w[a * 16:(a + 1) * 16, b * 16:(b + 1) * 16] @ v
                    for b in range(k2)] for a in range(k1)])


def test_down_loss_matches_numpy_over_the_six_matrices_of_each_layer():
  teacher, student = _teacher(), _student()
  down = shared_projection.SharedProjDown(16, 8)
  pairs = projection_loss.transformer_weight_pairs(teacher, student)
  assert len(pairs) == 2 * 6
  assert pairs[-1][0] == "bert/encoder/layer_1/output/dense/kernel"
  assert pairs[-1][1].shape == (64, 16) and pairs[-1][2].shape == (32, 8)
  with tf.GradientTape() as tape:
    loss = projection_loss.shared_projection_loss(teacher, student, down)
  u, v = down.u.numpy(), down.v.numpy()
  expected = np.mean([np.mean((_numpy_down(u, v, t.numpy()) - s.numpy()) ** 2)
                      for _, t, s in pairs])
  np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)
  query = student.transformer_layers[0]._attention_layer._query_dense.kernel  # pylint: disable=protected-access
  grads = tape.gradient(loss, [down.u, down.v, query])
  assert all(g is not None and np.any(g.numpy()) for g in grads)


def test_up_loss_and_vectors():
  teacher, student = _teacher(), _student()
  up = shared_projection.SharedProjUp(16, 8)
  loss = projection_loss.shared_projection_loss(
      teacher, student, up, include_vectors=True)
  assert loss.shape == () and loss.numpy() > 0
  assert len(projection_loss.transformer_weight_pairs(
      teacher, student, include_vectors=True)) == 2 * 16


def test_errors():
  with pytest.raises(ValueError, match=r"received 2 \(teacher\) and 1"):
    projection_loss.transformer_weight_pairs(_teacher(), _student(1))
  with pytest.raises(ValueError, match="inner_dim / hidden_size ratio"):
    odd = student_encoder.build_student_encoder(
        None, vocab_size=40, num_layers=2, hidden_size=8, inner_dim=16,
        max_sequence_length=8)
    projection_loss.shared_projection_loss(
        _teacher(), odd, shared_projection.SharedProjDown(16, 8))
