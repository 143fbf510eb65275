"""Tests for warm_start: an earlier run's weights, heads mapped by label."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks.finetuning import warm_start


def _encoder(hidden_size=32):
  return student_encoder.build_student_encoder(
      None, vocab_size=100, num_layers=2, hidden_size=hidden_size,
      max_sequence_length=16)


def _intent_slot(intents, tags, hidden_size=32):
  return joint_intent_slot_model.JointIntentSlotModel(
      _encoder(hidden_size), num_intents=len(intents), num_slots=len(tags))


def _saved(model, tmp_path):
  return tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt-1"))


def test_rows_follow_label_names():
  np.testing.assert_array_equal(
      warm_start.rows(["a", "b", "c"], ["c", "new", "a"]), [2, -1, 0])


def test_changes_name_added_and_dropped_labels():
  assert warm_start.changes({"h": (["a", "b"], ["a", "b"])}) == ""
  assert warm_start.changes({"h": (["a", "b"], ["b", "c"])}) == (
      "h: 1 new (c); h: 1 no longer (a)")


def test_load_copies_the_encoder_and_maps_head_rows(tmp_path):
  old_intents, old_tags = ["Book", "Play"], ["O", "B-x", "I-x"]
  new_intents, new_tags = ["Ask", "Book", "Play"], ["O", "B-x", "B-y", "I-x"]
  old = _intent_slot(old_intents, old_tags)
  path = _saved(old, tmp_path)
  new = _intent_slot(new_intents, new_tags)
  fresh_intent = new.intent_classifier.kernel.numpy()
  fresh_slot_bias = new.slot_classifier.bias.numpy()
  count = warm_start.load(
      new, _intent_slot(old_intents, old_tags), path,
      {"intent_classifier": (old_intents, new_intents),
       "slot_classifier": (old_tags, new_tags)})
  assert count == len(new.variables)
  for a, b in zip(old.encoder_network.variables,
                  new.encoder_network.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  kernel = new.intent_classifier.kernel.numpy()
  old_kernel = old.intent_classifier.kernel.numpy()
  np.testing.assert_array_equal(kernel[:, 1:], old_kernel)  # Book, Play.
  np.testing.assert_array_equal(kernel[:, 0], fresh_intent[:, 0])  # Ask.
  slot_kernel = new.slot_classifier.kernel.numpy()
  old_slot = old.slot_classifier.kernel.numpy()
  np.testing.assert_array_equal(slot_kernel[:, [0, 1, 3]], old_slot)
  bias = new.slot_classifier.bias.numpy()
  np.testing.assert_array_equal(bias[2], fresh_slot_bias[2])  # B-y: fresh.
  np.testing.assert_array_equal(bias[[0, 1, 3]],
                                old.slot_classifier.bias.numpy())


def test_same_labels_give_the_same_model(tmp_path):
  labels = ["neg", "pos"]
  old = sentence_classifier.SentenceClassifier(_encoder(), num_classes=2)
  path = _saved(old, tmp_path)
  new = sentence_classifier.SentenceClassifier(_encoder(), num_classes=2)
  warm_start.load(new, sentence_classifier.SentenceClassifier(
      _encoder(), num_classes=2), path, {"classifier": (labels, labels)})
  for a, b in zip(old.variables, new.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_another_model_size_is_refused(tmp_path):
  tags = ["O", "B-x"]
  path = _saved(_intent_slot(["a"], tags, hidden_size=32), tmp_path)
  with pytest.raises(ValueError, match="same task and model size"):
    warm_start.load(
        _intent_slot(["a"], tags, hidden_size=64),
        _intent_slot(["a"], tags, hidden_size=32), path,
        {"intent_classifier": (["a"], ["a"]),
         "slot_classifier": (tags, tags)})


def test_run_checkpoint_prefers_best(tmp_path):
  model = sentence_classifier.SentenceClassifier(_encoder(), num_classes=2)
  checkpoint = tf.train.Checkpoint(model=model)
  manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), 1)
  latest = manager.save(checkpoint_number=20)
  best = tf.train.CheckpointManager(checkpoint, str(tmp_path / "best"), 1)
  kept = best.save(checkpoint_number=10)
  assert warm_start.run_checkpoint(str(tmp_path)) == kept
  assert warm_start.run_dir(kept) == str(tmp_path)
  assert warm_start.run_dir(latest) == str(tmp_path)
  with pytest.raises(FileNotFoundError):
    warm_start.run_checkpoint(str(tmp_path / "none"))
