"""Tests for SentenceClassifier."""

import numpy as np
import pytest

from mixvocab_testing import testing_utils
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder


def _encoder(num_layers=1):
  return student_encoder.build_student_encoder(
      None, vocab_size=100, num_layers=num_layers, hidden_size=32,
      max_sequence_length=16)


def _features():
  return dict(
      input_word_ids=np.array([[2, 9, 3, 7, 3], [2, 5, 6, 7, 3]], np.int32),
      input_mask=np.array([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]], np.int32),
      input_type_ids=np.array([[0, 0, 0, 1, 1], [0] * 5], np.int32))


def test_logits_from_pooled_output():
  model = sentence_classifier.SentenceClassifier(_encoder(2), num_classes=3)
  out = model(_features())
  assert out["logits"].shape == (2, 3)
  pooled = model.encoder_network(_features())["pooled_output"].numpy()
  np.testing.assert_allclose(
      out["logits"].numpy(), pooled @ model.classifier.kernel.numpy() +
      model.classifier.bias.numpy(), atol=1e-5)
  # Type ids reach the encoder: B's segment changes the logits.
  other = dict(_features(), input_type_ids=np.zeros((2, 5), np.int32))
  assert np.abs(model(other)["logits"].numpy()[0] -
                out["logits"].numpy()[0]).max() > 1e-6


def test_mean_pooling_reads_the_masked_mean_of_the_tokens():
  model = sentence_classifier.SentenceClassifier(_encoder(2), num_classes=3,
                                                 pooling="mean")
  features = _features()
  sequence = model.encoder_network(features)["sequence_output"].numpy()
  mask = features["input_mask"][..., None].astype(np.float32)
  mean = (sequence * mask).sum(1) / mask.sum(1)
  np.testing.assert_allclose(
      model(features)["logits"].numpy(), mean @ model.classifier.kernel.numpy()
      + model.classifier.bias.numpy(), atol=1e-5)
  # A padding position's state does not count: change its token, same logits.
  other = dict(features, input_word_ids=features["input_word_ids"].copy())
  other["input_word_ids"][1, 4] = 50
  np.testing.assert_allclose(model(other)["logits"].numpy()[1],
                             model(features)["logits"].numpy()[1], atol=1e-5)


def test_bad_arguments():
  with pytest.raises(ValueError, match="num_classes .* received 0"):
    sentence_classifier.SentenceClassifier(_encoder(), num_classes=0)
  with pytest.raises(ValueError, match="pooling must be one of"):
    sentence_classifier.SentenceClassifier(_encoder(), num_classes=2,
                                           pooling="max")


@pytest.mark.large
@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_serialization(tmp_path, pooling):
  model = sentence_classifier.SentenceClassifier(_encoder(), num_classes=2,
                                                 dropout_rate=0.3,
                                                 pooling=pooling)
  testing_utils.assert_config_round_trip(model)
  testing_utils.assert_save_and_reload(model, _features(), str(tmp_path))
