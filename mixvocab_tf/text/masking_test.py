"""Tests for masked-LM selection: caps per vocabulary, 80/10/10, whole words."""

import hypothesis
from hypothesis import strategies as st
import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.text import masking

TEACHER_SIZE, STUDENT_SIZE = 1000, 300
TEACHER_MASK, STUDENT_MASK = 103, 4


def _config(**kwargs):
  return masking.MaskingConfig(
      mask_token_ids=(TEACHER_MASK, STUDENT_MASK),
      vocab_sizes=(TEACHER_SIZE, STUDENT_SIZE), **kwargs)


def _batch(vocab_ids, lengths, seq_length, rng):
  """Random ids in each token's own vocabulary; word_ids one word per token."""
  vocab_ids = np.asarray(vocab_ids, np.int32)
  batch = len(lengths)
  positions = np.arange(seq_length)[None]
  real = positions < np.asarray(lengths)[:, None]
  candidate = real & (positions > 0)  # [CLS] at 0 is never masked
  sizes = np.where(vocab_ids == 1, STUDENT_SIZE, TEACHER_SIZE)
  ids = np.where(real, rng.integers(5, 10**6, (batch, seq_length)) % sizes, 0)
  features = {
      "input_word_ids": tf.constant(ids, tf.int32),
      "input_vocab_ids": tf.constant(vocab_ids),
      "input_mask": tf.constant(real.astype(np.int32)),
  }
  word_ids = np.where(candidate, positions, -1).astype(np.int32)
  return features, tf.constant(word_ids)


def _check_invariants(features, word_ids, out, config):
  weights = out["masked_lm_weights"].numpy()
  positions = out["masked_lm_positions"].numpy()
  vocab = out["masked_lm_vocab_ids"].numpy()
  ids = out["masked_lm_ids"].numpy()
  original = features["input_word_ids"].numpy()
  input_vocab = features["input_vocab_ids"].numpy()
  counts = weights.sum(1)
  assert (counts <= config.max_predictions).all()
  if config.max_teacher_predictions is not None:
    assert (((vocab == 0) * weights).sum(1) <=
            config.max_teacher_predictions).all()
  for b in range(weights.shape[0]):
    n = int(counts[b])
    assert (weights[b, :n] == 1).all() and (weights[b, n:] == 0).all()
    assert (np.diff(positions[b, :n]) > 0).all()  # increasing, no repeats
    assert (word_ids.numpy()[b, positions[b, :n]] >= 0).all()
    np.testing.assert_array_equal(ids[b, :n], original[b, positions[b, :n]])
    np.testing.assert_array_equal(vocab[b, :n], input_vocab[b, positions[b, :n]])
  corrupted = out["input_word_ids"].numpy()
  sizes = np.where(input_vocab == 1, STUDENT_SIZE, TEACHER_SIZE)
  assert ((corrupted >= 0) & (corrupted < sizes)).all()
  # Only selected positions may change.
  changed = corrupted != original
  for b in range(weights.shape[0]):
    selected = set(positions[b, :int(counts[b])])
    assert set(np.nonzero(changed[b])[0]) <= selected


def test_stage1_caps_twenty_masks_at_most_ten_teacher():
  rng = np.random.default_rng(0)
  seq_length = 200
  vocab_ids = rng.integers(0, 2, (16, seq_length))
  vocab_ids[:4] = 0  # all-teacher rows: the cap leaves 10
  features, word_ids = _batch(vocab_ids, [seq_length] * 16, seq_length, rng)
  config = _config()
  out = masking.mask_batch(features, word_ids, config, seed=[1, 2])
  _check_invariants(features, word_ids, out, config)
  weights = out["masked_lm_weights"].numpy()
  np.testing.assert_array_equal(weights[:4].sum(1), [10] * 4)
  np.testing.assert_array_equal(weights[4:].sum(1), [20] * 12)


def test_fifteen_percent_of_short_sequences():
  rng = np.random.default_rng(1)
  features, word_ids = _batch(np.ones((3, 64), int), [64, 20, 2], 64, rng)
  out = masking.mask_batch(features, word_ids, _config(), seed=[0, 0])
  # round(0.15 * n), at least 1: 10, 3 and 1 (the [CLS] is not a candidate).
  np.testing.assert_array_equal(out["masked_lm_weights"].numpy().sum(1),
                                [10, 3, 1])


def test_eighty_ten_ten_with_replacements_from_the_own_vocabulary():
  rng = np.random.default_rng(2)
  seq_length = 128
  vocab_ids = rng.integers(0, 2, (256, seq_length))
  features, word_ids = _batch(vocab_ids, [seq_length] * 256, seq_length, rng)
  out = masking.mask_batch(features, word_ids, _config(max_predictions=20),
                           seed=[5, 6])
  weights = out["masked_lm_weights"].numpy().astype(bool)
  positions = out["masked_lm_positions"].numpy()
  vocab = out["masked_lm_vocab_ids"].numpy()[weights]
  new = np.take_along_axis(out["input_word_ids"].numpy(), positions, 1)[weights]
  old = out["masked_lm_ids"].numpy()[weights]
  mask_id = np.where(vocab == 1, STUDENT_MASK, TEACHER_MASK)
  masked = new == mask_id
  kept = (new == old) & ~masked
  replaced = ~masked & ~kept
  assert abs(masked.mean() - 0.8) < 0.03
  assert abs(kept.mean() - 0.1) < 0.02
  assert abs(replaced.mean() - 0.1) < 0.02
  sizes = np.where(vocab == 1, STUDENT_SIZE, TEACHER_SIZE)
  assert (new[replaced] < sizes[replaced]).all()
  # Student-vocabulary replacements stay in the student range only.
  assert new[replaced & (vocab == 1)].max() < STUDENT_SIZE


def test_whole_word_masking_masks_every_piece_of_a_word():
  rng = np.random.default_rng(3)
  seq_length, batch = 96, 32
  # Words of 1-4 pieces; a word's pieces share one vocabulary.
  word_ids = np.full((batch, seq_length), -1, np.int32)
  vocab = np.zeros((batch, seq_length), np.int32)
  for b in range(batch):
    pos, word = 1, 0
    while pos < seq_length:
      size = rng.integers(1, 5)
      word_ids[b, pos:pos + size] = word
      vocab[b, pos:pos + size] = rng.integers(0, 2)
      pos += size
      word += 1
  features, _ = _batch(vocab, [seq_length] * batch, seq_length, rng)
  config = _config(whole_word_masking=True)
  out = masking.mask_batch(features, tf.constant(word_ids), config, seed=[7, 7])
  _check_invariants(features, tf.constant(word_ids), out, config)
  weights = out["masked_lm_weights"].numpy().astype(bool)
  for b in range(batch):
    masked_positions = out["masked_lm_positions"].numpy()[b][weights[b]]
    assert len(masked_positions) > 0
    for word in set(word_ids[b, masked_positions]):
      np.testing.assert_array_equal(
          np.sort(masked_positions[word_ids[b, masked_positions] == word]),
          np.nonzero(word_ids[b] == word)[0])


def test_same_seed_same_masks_new_seed_new_masks():
  rng = np.random.default_rng(4)
  features, word_ids = _batch(rng.integers(0, 2, (4, 64)), [64] * 4, 64, rng)
  run = lambda seed: masking.mask_batch(features, word_ids, _config(),
                                        seed)["masked_lm_positions"].numpy()
  np.testing.assert_array_equal(run([1, 1]), run([1, 1]))
  assert not np.array_equal(run([1, 1]), run([1, 2]))


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(
    seq_length=st.integers(4, 48),
    batch=st.integers(1, 4),
    max_predictions=st.integers(1, 24),
    teacher_cap=st.one_of(st.none(), st.integers(0, 24)),
    wwm=st.booleans(),
    seed=st.integers(0, 2**31 - 1))
def test_invariants_hold_for_any_shape(seq_length, batch, max_predictions,
                                       teacher_cap, wwm, seed):
  hypothesis.assume(max_predictions <= seq_length)
  if teacher_cap is not None:
    teacher_cap = min(teacher_cap, max_predictions)
  rng = np.random.default_rng(seed)
  lengths = rng.integers(1, seq_length + 1, batch)
  features, word_ids = _batch(rng.integers(0, 2, (batch, seq_length)), lengths,
                              seq_length, rng)
  config = _config(max_predictions=max_predictions,
                   max_teacher_predictions=teacher_cap,
                   whole_word_masking=wwm)
  out = masking.mask_batch(features, word_ids, config, seed=[seed, 1])
  assert out["masked_lm_positions"].shape == (batch, max_predictions)
  _check_invariants(features, word_ids, out, config)


def test_rejects_inconsistent_config():
  with pytest.raises(ValueError, match="max_teacher_predictions"):
    _config(max_predictions=5, max_teacher_predictions=6)
  with pytest.raises(ValueError, match="masked_lm_prob"):
    _config(masked_lm_prob=0.0)
