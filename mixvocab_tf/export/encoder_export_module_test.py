"""EncoderExportModule: the encoder's outputs on `[CLS] text [SEP]`."""

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import export
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data

TEXTS = ["a tiny bert", "", "Tiny BERTs run on phones, don't they?"]


def test_pooled_and_sequence_outputs_match_the_encoder():
  vocab = assets.default_student_vocab()
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=len(open(vocab, encoding="utf-8").read().splitlines()),
      num_layers=1, hidden_size=32, num_attention_heads=2,
      max_sequence_length=16)
  module = export.EncoderExportModule(encoder, vocab, seq_length=16)
  got = module.serve(tf.constant(TEXTS))
  features = text_classification_data.text_classification_featurizer(vocab, 16, pair=False)(
      {"sentence_a": tf.constant(TEXTS)})
  want = encoder(features, training=False)
  length = got["input_mask"].shape[1]
  np.testing.assert_array_equal(got["input_mask"],
                                features["input_mask"][:, :length])
  np.testing.assert_allclose(got["pooled_output"], want["pooled_output"],
                             atol=1e-5)
  mask = got["input_mask"].numpy()[..., None]
  np.testing.assert_allclose(got["sequence_output"].numpy() * mask,
                             want["sequence_output"][:, :length] * mask,
                             atol=1e-5)
