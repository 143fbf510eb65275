"""Tests for PlainBertEncoder."""

import pytest
import numpy as np

from mixvocab_testing import testing_utils
from mixvocab_tf.networks import plain_bert_encoder


def _encoder(**kwargs):
  return plain_bert_encoder.PlainBertEncoder(
      vocab_size=100, hidden_size=32, num_layers=2, num_attention_heads=4,
      inner_dim=64, max_sequence_length=16, type_vocab_size=2,
      inner_activation="gelu", **kwargs)


def test_weights_exist_at_construction():
  encoder = _encoder()
  # Word, position, type embeddings, embedding LN, 2 x 16 layer weights, pooler.
  assert len(encoder.weights) == 3 + 2 + 2 * 16 + 2
  assert encoder.get_embedding_table().shape == (100, 32)


@pytest.mark.large
def test_serialization_keeps_attention_weights(tmp_path):
  # A tf_keras SavedModel reload of the stock BertEncoderV2 loses the attention
  # kernels (keras-team/tf-keras#514); PlainBertEncoder must keep them.
  encoder = _encoder(return_attention_scores=True)
  features = dict(
      input_word_ids=np.array([[2, 9, 99, 3, 0]], np.int32),
      input_mask=np.array([[1, 1, 1, 1, 0]], np.int32),
      input_type_ids=np.array([[0, 0, 0, 1, 0]], np.int32))
  testing_utils.assert_config_round_trip(encoder)
  testing_utils.assert_save_and_reload(encoder, features, str(tmp_path))
