"""Tests of constrained IOB decoding."""

import itertools

import numpy as np

from mixvocab_tf.tasks import iob_decoding

SLOTS = ("O", "B-city", "B-time", "I-city", "I-time")


def _logits(rows):
  return np.log(np.asarray(rows, np.float64))


def test_invalid_inside_tags():
  count = iob_decoding.invalid_inside_tags
  assert count(["O", "B-city", "I-city", "I-city"]) == 0
  assert count(["I-city"]) == 1
  assert count(["O", "I-city", "B-time", "I-city"]) == 2
  assert count(["B-time", "I-time", "I-city"]) == 1


def test_viterbi_repairs_an_inside_tag_after_outside():
  # Arg-max: O I-city (invalid). Best valid: B-city I-city.
  logits = _logits([[0.5, 0.4, 0.02, 0.04, 0.04],
                    [0.1, 0.05, 0.05, 0.75, 0.05]])
  assert [SLOTS[i] for i in logits.argmax(-1)] == ["O", "I-city"]
  assert iob_decoding.viterbi_decode(logits, SLOTS) == ["B-city", "I-city"]


def test_viterbi_keeps_valid_argmax_and_is_exact():
  rng = np.random.default_rng(0)
  allowed = iob_decoding.allowed_transitions(SLOTS)
  for _ in range(50):
    logits = rng.normal(size=(4, len(SLOTS))) * 3
    decoded = iob_decoding.viterbi_decode(logits, SLOTS)
    assert iob_decoding.invalid_inside_tags(decoded) == 0
    argmax = [SLOTS[i] for i in logits.argmax(-1)]
    if iob_decoding.invalid_inside_tags(argmax) == 0:
      assert decoded == argmax
    # Brute force over all valid sequences.
    scores = iob_decoding.log_softmax(logits)
    best = max((seq for seq in itertools.product(range(len(SLOTS)), repeat=4)
                if not SLOTS[seq[0]].startswith("I-") and all(
                    allowed[a, b] for a, b in zip(seq, seq[1:]))),
               key=lambda seq: sum(scores[i, t] for i, t in enumerate(seq)))
    assert decoded == [SLOTS[t] for t in best]
