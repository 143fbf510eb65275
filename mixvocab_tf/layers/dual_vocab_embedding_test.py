"""Tests for DualVocabEmbedding."""

import numpy as np
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.layers import dual_vocab_embedding


def _layer():
  return dual_vocab_embedding.DualVocabEmbedding(
      teacher_vocab_size=50, student_vocab_size=120,
      teacher_embedding_width=16, student_embedding_width=8)


def _inputs():
  # Student ids reach 119, beyond the teacher table; teacher ids reach 49.
  return dict(
      input_word_ids=np.array([[2, 119, 49, 7], [0, 0, 100, 3]], np.int32),
      input_vocab_ids=np.array([[0, 1, 0, 1], [0, 0, 1, 0]], np.int32))


def test_picks_the_table_of_each_token_vocabulary():
  layer = _layer()
  inputs = _inputs()
  out = layer(inputs).numpy()
  assert out.shape == (2, 4, 16)
  teacher = layer.teacher_embeddings.numpy()
  student = layer.student_embeddings.numpy()
  kernel = layer.up_projection.kernel.numpy()
  bias = layer.up_projection.bias.numpy()
  for b in range(2):
    for t in range(4):
      word, vocab = inputs["input_word_ids"][b, t], inputs["input_vocab_ids"][b, t]
      expected = (student[word] @ kernel + bias) if vocab else teacher[word]
      np.testing.assert_allclose(out[b, t], expected, atol=1e-6)


def test_without_vocab_ids_every_token_is_a_teacher_token():
  layer = _layer()
  ids = np.array([[1, 2, 3]], np.int32)
  np.testing.assert_array_equal(
      layer(dict(input_word_ids=ids)).numpy(),
      layer.teacher_embeddings.numpy()[ids])


def test_gradients_reach_only_the_rows_used():
  layer = _layer()
  inputs = _inputs()
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(inputs) ** 2)
  grads = tape.gradient(loss, [layer.teacher_embeddings,
                               layer.student_embeddings,
                               layer.up_projection.kernel])
  teacher_grad = tf.convert_to_tensor(grads[0]).numpy()
  student_grad = tf.convert_to_tensor(grads[1]).numpy()
  assert np.abs(student_grad[[119, 7, 100]]).sum(-1).min() > 0
  # Row 0 of the student table is where masked-out teacher tokens were sent; it
  # must get no gradient from them.
  assert not np.any(student_grad[0])
  assert np.abs(teacher_grad[[2, 49, 0, 3]]).sum(-1).min() > 0
  assert not np.any(teacher_grad[7])
  assert np.any(grads[2].numpy())


def test_rejects_bad_sizes():
  try:
    dual_vocab_embedding.DualVocabEmbedding(0, 10, 4, 4)
  except ValueError as e:
    assert "teacher_vocab_size" in str(e) and "0" in str(e)
  else:
    raise AssertionError("expected a ValueError")


def test_serialization(tmp_path):
  layer = _layer()
  testing_utils.assert_config_round_trip(layer)
  testing_utils.assert_save_and_reload(layer, _inputs(), str(tmp_path))
