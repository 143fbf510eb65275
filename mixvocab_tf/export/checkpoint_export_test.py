"""Exports from checkpoints: a bare student encoder read by its stable name."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import data as data_lib
from mixvocab_tf.export import checkpoint_export
from mixvocab_tf.export import serving_tokenizer
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.text import vocab as vocab_lib


def test_encoder_export_reads_sizes_and_weights_from_the_checkpoint(
    tmp_path):
  vocab = data_lib.default_student_vocab()
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=len(vocab_lib.load_vocab(vocab)), num_layers=1,
      hidden_size=32, num_attention_heads=2, max_sequence_length=24)
  prefix = tf.train.Checkpoint(student_encoder=encoder).write(
      str(tmp_path / "stage2" / "ckpt-1"))
  export_dir = str(tmp_path / "encoder")
  _, read = checkpoint_export.export_encoder_checkpoint(
      prefix, export_dir, vocab, seq_length=24)
  assert read == prefix
  served = tf.saved_model.load(export_dir).signatures["serving_default"](
      text=tf.constant(["tiny bert", "on a phone"]))
  assert served["pooled_output"].shape == (2, 32)
  # The same weights: the exported encoder equals the one written.
  features = serving_tokenizer.ServingTokenizer(vocab).pack_sentences(
      tf.constant(["tiny bert", "on a phone"]), None, 24)
  np.testing.assert_allclose(
      served["pooled_output"],
      encoder(features, training=False)["pooled_output"], atol=1e-5)


def test_other_tasks_are_refused():
  class NotFinetuning:
    task_name = "stage2"

  with pytest.raises(ValueError, match="not a fine-tuning task"):
    checkpoint_export.export_module_for_task(NotFinetuning(), None)
