"""Tests for MLMPretrainer."""

import numpy as np
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.models import mlm_pretrainer
from mixvocab_tf.networks import student_encoder


def _student(num_layers=2):
  return student_encoder.build_student_encoder(
      None, vocab_size=100, num_layers=num_layers, hidden_size=32,
      max_sequence_length=16)


def _features():
  return dict(
      input_word_ids=np.array([[2, 9, 99, 3, 0], [2, 5, 6, 7, 3]], np.int32),
      input_mask=np.array([[1, 1, 1, 1, 0], [1] * 5], np.int32),
      input_type_ids=np.zeros((2, 5), np.int32),
      input_vocab_ids=np.ones((2, 5), np.int32),
      masked_lm_positions=np.array([[1, 2, 0], [3, 1, 4]], np.int32))


def test_logits_at_masked_positions_with_tied_output_weights():
  model = mlm_pretrainer.MLMPretrainer(_student())
  features = _features()
  out = model(features)
  assert out["mlm_logits"].shape == (2, 3, 100)
  assert out["sequence_output"].shape == (2, 5, 32)
  head = model.masked_lm
  assert head.embedding_table is model.encoder_network.get_embedding_table()
  # Recompute the head by hand at the masked positions.
  seq = out["sequence_output"].numpy()
  gathered = np.take_along_axis(
      seq, features["masked_lm_positions"][..., None], axis=1)
  h = tf.keras.activations.gelu(gathered @ head.dense.kernel.numpy()
                                + head.dense.bias.numpy()).numpy()
  mean, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
  h = ((h - mean) / np.sqrt(var + 1e-12) * head.layer_norm.gamma.numpy()
       + head.layer_norm.beta.numpy())
  expected = (h @ model.encoder_network.get_embedding_table().numpy().T
              + head.bias.numpy())
  np.testing.assert_allclose(out["mlm_logits"].numpy(), expected, atol=1e-4)
  # Without masked positions there is nothing to predict.
  del features["masked_lm_positions"]
  assert "mlm_logits" not in model(features)
  assert set(model.checkpoint_items) == {"encoder", "masked_lm"}


def test_build_student_pretrainer():
  model = mlm_pretrainer.build_student_pretrainer(
      "L6-H96", vocab_size=100, max_sequence_length=16)
  out = model(_features())
  assert out["mlm_logits"].shape == (2, 3, 100)
  assert len(out["encoder_outputs"]) == 6
  assert out["sequence_output"].shape == (2, 5, 96)


def test_serialization(tmp_path):
  model = mlm_pretrainer.MLMPretrainer(_student(num_layers=1))
  testing_utils.assert_config_round_trip(model)
  reloaded = testing_utils.assert_save_and_reload(model, _features(),
                                                  str(tmp_path))
  # The SavedModel takes other batch sizes and lengths than the one it saw.
  longer = dict(input_word_ids=np.ones((3, 9), np.int32),
                input_mask=np.ones((3, 9), np.int32),
                input_type_ids=np.zeros((3, 9), np.int32),
                masked_lm_positions=np.ones((3, 2), np.int32))
  np.testing.assert_allclose(reloaded["tf"](longer)["mlm_logits"].numpy(),
                             model(longer)["mlm_logits"].numpy(), atol=1e-5)
