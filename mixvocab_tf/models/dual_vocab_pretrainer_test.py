"""Tests for DualVocabPretrainer."""

import numpy as np
import pytest

from mixvocab_testing import testing_utils
from mixvocab_tf.models import dual_vocab_pretrainer
from mixvocab_tf.networks import dual_vocab_bert_encoder
from mixvocab_tf.networks import student_encoder


def _teacher(num_layers=2):
  encoder = dual_vocab_bert_encoder.DualVocabBertEncoder(
      teacher_vocab_size=100, student_vocab_size=60, student_embedding_width=8,
      hidden_size=32, num_layers=num_layers, num_attention_heads=4,
      inner_dim=64, max_sequence_length=16)
  return dual_vocab_pretrainer.DualVocabPretrainer(encoder)


def _features():
  return dict(
      input_word_ids=np.array([[2, 59, 99, 7, 3], [2, 5, 40, 3, 0]], np.int32),
      input_mask=np.array([[1] * 5, [1, 1, 1, 1, 0]], np.int32),
      input_type_ids=np.zeros((2, 5), np.int32),
      input_vocab_ids=np.array([[0, 1, 0, 1, 0], [0, 0, 1, 0, 0]], np.int32),
      masked_lm_positions=np.array([[1, 2], [2, 0]], np.int32))


def test_one_head_per_vocabulary_tied_to_its_table():
  model = _teacher()
  out = model(_features())
  assert out["teacher_mlm_logits"].shape == (2, 2, 100)
  assert out["student_mlm_logits"].shape == (2, 2, 60)
  encoder = model.encoder_network
  assert model.masked_lm.embedding_table is encoder.get_embedding_table()
  assert (model.student_masked_lm.embedding_table
          is encoder.get_student_embedding_table())
  # The student head's transform maps d_t = 32 to d_s = 8.
  assert model.student_masked_lm.dense.kernel.shape == (32, 8)
  assert set(model.checkpoint_items) == {"encoder", "masked_lm",
                                         "student_masked_lm"}


def test_rejects_a_single_vocabulary_encoder():
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=50, num_layers=1, hidden_size=8)
  with pytest.raises(ValueError, match="received a PlainBertEncoder"):
    dual_vocab_pretrainer.DualVocabPretrainer(encoder)


@pytest.mark.large
def test_serialization(tmp_path):
  model = _teacher(num_layers=1)
  testing_utils.assert_config_round_trip(model)
  testing_utils.assert_save_and_reload(model, _features(), str(tmp_path))
