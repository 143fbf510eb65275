"""Tests for read_student_embeddings."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf.models import dual_vocab_pretrainer
from mixvocab_tf.models import stage_handoff
from mixvocab_tf.networks import dual_vocab_bert_encoder


def _teacher():
  encoder = dual_vocab_bert_encoder.DualVocabBertEncoder(
      teacher_vocab_size=50, student_vocab_size=30, student_embedding_width=8,
      hidden_size=16, num_layers=1, num_attention_heads=2, inner_dim=32,
      max_sequence_length=8)
  return dual_vocab_pretrainer.DualVocabPretrainer(encoder)


@pytest.mark.parametrize("wrap", ["items", "model", "encoder"])
def test_reads_the_table_however_the_model_was_wrapped(tmp_path, wrap):
  teacher = _teacher()
  optimizer = tf_keras.optimizers.Adam()
  optimizer.build(teacher.trainable_variables)  # Slots must not be picked up.
  if wrap == "items":
    checkpoint = tf.train.Checkpoint(**teacher.checkpoint_items)
  elif wrap == "model":
    checkpoint = tf.train.Checkpoint(model=teacher, optimizer=optimizer)
  else:
    checkpoint = tf.train.Checkpoint(encoder=teacher.encoder_network)
  checkpoint.save(str(tmp_path / "ckpt"))
  out = stage_handoff.read_student_embeddings(str(tmp_path))
  encoder = teacher.encoder_network
  np.testing.assert_array_equal(out["student_embeddings"],
                                encoder.get_student_embedding_table().numpy())
  np.testing.assert_array_equal(out["up_projection_kernel"],
                                encoder.up_projection.kernel.numpy())
  assert out["up_projection_bias"].shape == (16,)


def test_a_checkpoint_without_a_student_table(tmp_path):
  tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / "ckpt"))
  with pytest.raises(ValueError, match="has no student table"):
    stage_handoff.read_student_embeddings(str(tmp_path))
