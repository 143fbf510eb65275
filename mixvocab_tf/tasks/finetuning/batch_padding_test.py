"""Tests of per-batch padding: same losses, shorter batches, exact resume."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.tasks.finetuning import batch_padding
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task

SEQ_LENGTH = 48


def _task(**kwargs):
  return intent_slot_task.IntentSlotTask(
      seq_length=SEQ_LENGTH, student_preset=None, num_layers=1,
      hidden_size=32, num_attention_heads=2, global_batch_size=16,
      shuffle_buffer=256, **kwargs)


def _batches(task, n, iterator=None):
  iterator = iterator or iter(task.build_inputs(training=True))
  return [next(iterator) for _ in range(n)], iterator


@pytest.mark.large
def test_trimmed_batches_have_the_same_loss():
  fixed, _ = _batches(_task(), 3)
  trimmed, _ = _batches(_task(pad_to_longest=True), 3)
  model = _task().build_model()
  for a, b in zip(fixed, trimmed):
    length = int(tf.reduce_max(tf.reduce_sum(a["input_mask"], 1)))
    assert b["input_word_ids"].shape[1] == length < SEQ_LENGTH
    np.testing.assert_array_equal(a["input_word_ids"][:, :length],
                                  b["input_word_ids"])
    np.testing.assert_array_equal(a["intent_id"], b["intent_id"])
    loss_a, _ = intent_slot_task.joint_intent_slot_loss(
        model(a, training=False), a)
    loss_b, _ = intent_slot_task.joint_intent_slot_loss(
        model(b, training=False), b)
    np.testing.assert_allclose(float(loss_a), float(loss_b), rtol=1e-5)


@pytest.mark.parametrize("kwargs", [
    dict(pad_to_longest=True),
    dict(bucket_boundaries=[12, 16, 20, 26]),
])
@pytest.mark.large
def test_iterator_resumes_exactly(kwargs, tmp_path):
  task = _task(**kwargs)
  _, iterator = _batches(task, 5)
  checkpoint = tf.train.Checkpoint(input=iterator)
  path = checkpoint.save(str(tmp_path / "ckpt"))
  expected, _ = _batches(task, 4, iterator)
  resumed = iter(_task(**kwargs).build_inputs(training=True))
  tf.train.Checkpoint(input=resumed).read(path).assert_existing_objects_matched()
  got, _ = _batches(task, 4, resumed)
  for a, b in zip(expected, got):
    for key in a:
      np.testing.assert_array_equal(a[key], b[key])


def test_buckets_hold_similar_lengths():
  batches, _ = _batches(_task(bucket_boundaries=[12, 16, 20, 26]), 20)
  for batch in batches:
    lengths = tf.reduce_sum(batch["input_mask"], 1).numpy()
    assert batch["input_word_ids"].shape == (16, lengths.max())
    bucket = np.searchsorted([12, 16, 20, 26], lengths, side="right")
    assert len(set(bucket)) == 1


@pytest.mark.large
def test_trimmed_evaluation_gives_the_same_metrics():
  from mixvocab_tf.core import evaluation  # pylint: disable=g-import-not-at-top
  tf.keras.utils.set_random_seed(1)
  fixed = _task()
  model = fixed.build_model()
  expected = evaluation.evaluate(fixed, model)
  trimmed = _task(pad_to_longest=True)
  # Batches of near-equal lengths (`evaluation_order`), each cut.
  batches = list(trimmed.build_inputs(training=False))
  for batch in batches:
    lengths = batch["input_mask"].numpy().sum(1)
    assert batch["input_word_ids"].shape[1] == lengths.max() < SEQ_LENGTH
  assert sorted(np.concatenate([b["example_index"] for b in batches])) == (
      list(range(expected["num_examples"])))
  got = evaluation.evaluate(trimmed, model)
  for key in ("intent_accuracy", "slot_f1", "sentence_accuracy",
              "slot/loss"):
    np.testing.assert_allclose(got[key], expected[key], rtol=1e-5)


def test_evaluation_order_batches_near_equal_lengths():
  lengths = np.random.RandomState(0).randint(3, 60, size=103)
  order = batch_padding.evaluation_order(lengths, 10)
  assert sorted(order) == list(range(103))
  batches = [lengths[order[i:i + 10]] for i in range(0, 103, 10)]
  # Each batch is a run of the sorted lengths; the partial one (the
  # longest) last; the full ones not in length order.
  np.testing.assert_array_equal(
      np.concatenate(sorted(batches, key=lambda b: (b.min(), b.max()))),
      np.sort(lengths))
  assert len(batches[-1]) == 3 and batches[-1].max() == lengths.max()
  firsts = [b.min() for b in batches[:-1]]
  assert firsts != sorted(firsts)
  padded = sum(b.max() * len(b) for b in batches)
  in_file_order = sum(lengths[i:i + 10].max() * len(lengths[i:i + 10])
                      for i in range(0, 103, 10))
  assert padded < 0.8 * in_file_order
  # Fixed: the same order every time.
  np.testing.assert_array_equal(order,
                                batch_padding.evaluation_order(lengths, 10))
  with pytest.raises(ValueError, match="batch_size must be positive"):
    batch_padding.evaluation_order(lengths, 0)


def test_fine_boundaries_are_two_four_then_eight_apart():
  boundaries = batch_padding.fine_boundaries(128)
  assert boundaries[:3] == [6, 8, 10] and boundaries[-1] == 120
  gaps = {b: n - b for b, n in zip(boundaries, boundaries[1:])}
  assert {g for b, g in gaps.items() if b < 30} == {2}
  assert {g for b, g in gaps.items() if 32 <= b < 64} == {4}
  assert {g for b, g in gaps.items() if b >= 64} == {8}
  assert batch_padding.fine_boundaries(48)[-1] == 44
  with pytest.raises(ValueError, match="at least 7; received 4"):
    batch_padding.fine_boundaries(4)


def test_fine_buckets_pad_less_than_a_few_wide_ones():
  """Padding of batches cut to their longest query, on SNIPS-like lengths."""
  def padded_over_real(boundaries):
    batches, _ = _batches(_task(bucket_boundaries=boundaries), 30)
    return sum(b["input_word_ids"].shape[1] * 16 for b in batches) / sum(
        int(tf.reduce_sum(b["input_mask"])) for b in batches)
  fine = padded_over_real(batch_padding.fine_boundaries(SEQ_LENGTH))
  assert 1.0 <= fine < padded_over_real([12, 16, 20, 26])
