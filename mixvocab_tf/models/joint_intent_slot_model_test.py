"""Tests for JointIntentSlotModel."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_testing import testing_utils
from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.networks import student_encoder


def _encoder(num_layers=2):
  return student_encoder.build_student_encoder(
      None, vocab_size=100, num_layers=num_layers, hidden_size=32,
      max_sequence_length=16)


def _features():
  return dict(
      input_word_ids=np.array([[2, 9, 99, 3, 0], [2, 5, 6, 7, 3]], np.int32),
      input_mask=np.array([[1, 1, 1, 1, 0], [1] * 5], np.int32),
      input_type_ids=np.zeros((2, 5), np.int32))


def test_heads_read_pooled_and_sequence_outputs():
  model = joint_intent_slot_model.JointIntentSlotModel(
      _encoder(), num_intents=7, num_slots=11)
  features = _features()
  # Extra keys (labels, decoding aids) are ignored.
  out = model(dict(features, slot_ids=np.zeros((2, 5), np.int32)))
  assert set(out) == {"intent_logits", "slot_logits"}
  assert out["intent_logits"].shape == (2, 7)
  assert out["slot_logits"].shape == (2, 5, 11)
  assert out["intent_logits"].dtype == tf.float32
  encoded = model.encoder_network(features, training=False)
  intent = model.intent_classifier
  slot = model.slot_classifier
  np.testing.assert_allclose(
      out["intent_logits"].numpy(),
      encoded["pooled_output"].numpy() @ intent.kernel.numpy() +
      intent.bias.numpy(), atol=1e-5)
  np.testing.assert_allclose(
      out["slot_logits"].numpy(),
      encoded["sequence_output"].numpy() @ slot.kernel.numpy() +
      slot.bias.numpy(), atol=1e-5)
  # Every weight exists at construction: encoder + 2 x (kernel, bias).
  assert len(model.weights) == len(model.encoder_network.weights) + 4
  assert set(model.checkpoint_items) == {"encoder", "intent_classifier",
                                         "slot_classifier"}


def test_dropout_only_in_training():
  model = joint_intent_slot_model.JointIntentSlotModel(
      _encoder(num_layers=1), num_intents=3, num_slots=4, dropout_rate=0.5)
  features = _features()
  a = model(features, training=False)["slot_logits"].numpy()
  b = model(features, training=False)["slot_logits"].numpy()
  c = model(features, training=True)["slot_logits"].numpy()
  np.testing.assert_array_equal(a, b)
  assert np.abs(a - c).max() > 1e-3


def test_bad_arguments_say_what_was_received():
  with pytest.raises(ValueError, match="num_slots .* received 0"):
    joint_intent_slot_model.JointIntentSlotModel(_encoder(1), 3, 0)
  with pytest.raises(ValueError, match="dropout_rate .* received 1.5"):
    joint_intent_slot_model.JointIntentSlotModel(_encoder(1), 3, 4,
                                                 dropout_rate=1.5)
  model = joint_intent_slot_model.JointIntentSlotModel(_encoder(1), 3, 4)
  with pytest.raises(ValueError, match="lack .*input_type_ids"):
    model({"input_word_ids": np.ones((1, 3), np.int32),
           "input_mask": np.ones((1, 3), np.int32)})


def test_serialization(tmp_path):
  model = joint_intent_slot_model.JointIntentSlotModel(
      _encoder(num_layers=1), num_intents=3, num_slots=5, dropout_rate=0.2)
  rebuilt = testing_utils.assert_config_round_trip(model)
  assert rebuilt.num_slots == 5 and rebuilt.dropout_rate == 0.2
  reloaded = testing_utils.assert_save_and_reload(model, _features(),
                                                  str(tmp_path))
  # The SavedModel takes other batch sizes and lengths than the one it saw.
  longer = dict(input_word_ids=np.ones((3, 9), np.int32),
                input_mask=np.ones((3, 9), np.int32),
                input_type_ids=np.zeros((3, 9), np.int32))
  for name in ("intent_logits", "slot_logits"):
    np.testing.assert_allclose(reloaded["tf"](longer)[name].numpy(),
                               model(longer)[name].numpy(), atol=1e-5)


def test_checkpoint_restores_into_a_fresh_model(tmp_path):
  model = joint_intent_slot_model.JointIntentSlotModel(_encoder(1), 3, 5)
  path = tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
  fresh = joint_intent_slot_model.JointIntentSlotModel(_encoder(1), 3, 5)
  tf.train.Checkpoint(model=fresh).read(path).assert_consumed()
  for name in ("intent_logits", "slot_logits"):
    np.testing.assert_allclose(fresh(_features())[name].numpy(),
                               model(_features())[name].numpy(), atol=1e-6)
  assert isinstance(fresh, tf_keras.Model)
