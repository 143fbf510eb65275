"""Tests for DualVocabBertEncoder."""

import functools

import pytest
import numpy as np
import tensorflow as tf

from official.nlp.modeling import networks as nlp_networks

from mixvocab_testing import testing_utils
from mixvocab_tf.networks import dual_vocab_bert_encoder

_SIZES = dict(hidden_size=32, num_layers=2, num_attention_heads=4, inner_dim=64,
              max_sequence_length=16, type_vocab_size=2)


def _encoder(**kwargs):
  return dual_vocab_bert_encoder.DualVocabBertEncoder(
      teacher_vocab_size=100, student_vocab_size=60, student_embedding_width=8,
      **dict(_SIZES, **kwargs))


def _features(vocab_ids=None):
  word_ids = np.array([[2, 59, 99, 7, 3, 0], [2, 5, 40, 3, 0, 0]], np.int32)
  if vocab_ids is None:
    vocab_ids = np.array([[0, 1, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0]], np.int32)
  return dict(
      input_word_ids=word_ids,
      input_mask=(word_ids > 0).astype(np.int32) | (np.arange(6) == 0),
      input_type_ids=np.array([[0, 0, 0, 1, 1, 0], [0] * 6], np.int32),
      input_vocab_ids=vocab_ids)


def test_outputs_and_attention_scores():
  encoder = _encoder(return_attention_scores=True)
  out = encoder(_features())
  assert out["sequence_output"].shape == (2, 6, 32)
  assert out["pooled_output"].shape == (2, 32)
  assert len(out["encoder_outputs"]) == 2
  assert [s.shape for s in out["attention_scores"]] == [(2, 4, 6, 6)] * 2
  np.testing.assert_allclose(tf.reduce_sum(out["attention_scores"][0], -1),
                             np.ones((2, 4, 6)), atol=1e-5)


def test_teacher_only_input_is_exactly_the_plain_teacher():
  encoder = _encoder()
  features = _features(vocab_ids=np.zeros((2, 6), np.int32))
  dual_out = encoder(features)
  plain = nlp_networks.BertEncoderV2(vocab_size=100, inner_activation="gelu",
                                     **_SIZES)
  plain(features)
  # The plain encoder's weights in the dual encoder's creation order: the word
  # table first, then everything after it in the same order.
  dual_weights = encoder.get_weights()
  embedding = encoder.embedding_layer
  teacher_table = embedding.teacher_embeddings.numpy()
  rest = encoder.bert_encoder.get_weights()
  plain.set_weights([teacher_table] + rest)
  plain_out = plain(features)
  assert len(dual_weights) == len(rest) + 4  # Two tables, projection kernel+bias.
  # The same computation; equal up to float32 rounding, which moved one of
  # the 384 outputs by one unit in the last place (1.9e-9) once in a full
  # test run on loaded cores, where every other run gave them bit for bit.
  same = functools.partial(np.testing.assert_allclose, rtol=1e-6, atol=1e-7)
  for key in ("sequence_output", "pooled_output"):
    same(dual_out[key].numpy(), plain_out[key].numpy())
  # Without input_vocab_ids, all tokens are teacher tokens too.
  del features["input_vocab_ids"]
  same(encoder(features)["sequence_output"].numpy(),
       plain_out["sequence_output"].numpy())


def test_student_tokens_train_the_student_table_and_up_projection():
  encoder = _encoder()
  features = _features()
  with tf.GradientTape() as tape:
    out = encoder(features, training=True)
    loss = tf.reduce_sum(out["sequence_output"] ** 2)
  student_table = encoder.get_student_embedding_table()
  up = encoder.up_projection
  grads = tape.gradient(loss, [student_table, up.kernel, up.bias])
  student_grad = tf.convert_to_tensor(grads[0]).numpy()
  # Student tokens are ids 59, 7 and 40; nothing else may get a gradient.
  used = np.zeros(60, bool)
  used[[59, 7, 40]] = True
  assert np.all(np.abs(student_grad[used]).sum(-1) > 0)
  assert not np.any(student_grad[~used])
  assert np.any(grads[1].numpy()) and np.any(grads[2].numpy())

  # Teacher-only input gives the student side no gradient at all.
  features_teacher_only = dict(features,
                               input_vocab_ids=np.zeros((2, 6), np.int32))
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(encoder(features_teacher_only)["sequence_output"])
  for grad in tape.gradient(loss, [student_table, up.kernel]):
    assert grad is None or not np.any(tf.convert_to_tensor(grad).numpy())


def test_rejects_heads_not_dividing_hidden():
  try:
    _encoder(num_attention_heads=5)
  except ValueError as e:
    assert "received 32 and 5" in str(e)
  else:
    raise AssertionError("expected a ValueError")


@pytest.mark.large
def test_serialization(tmp_path):
  encoder = _encoder(return_attention_scores=True)
  testing_utils.assert_config_round_trip(encoder)
  testing_utils.assert_save_and_reload(encoder, _features(), str(tmp_path))
