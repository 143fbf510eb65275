"""Tests for constrained IOB decoding: exact, valid, the same in TF, NumPy, TFLite."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.tasks.finetuning import iob_decoding

NAMES = ["O", "B-playlist", "I-playlist", "B-playlist_owner",
         "I-playlist_owner"]


def _follows(previous, tag):
  return not tag.startswith("I-") or previous[2:] == tag[2:]


def _valid(tags):
  return all(_follows(p, t) for p, t in zip(["O"] + tags, tags))


def _brute_force(logits, names):
  scores = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  best, best_score = None, -np.inf
  for ids in itertools.product(range(len(names)), repeat=len(logits)):
    if not _valid([names[i] for i in ids]):
      continue
    score = sum(scores[t, i] for t, i in enumerate(ids))
    if score > best_score:
      best, best_score = list(ids), score
  return best


def test_transitions_forbid_exactly_the_invalid_iob_pairs():
  start, transitions = iob_decoding.allowed_transitions(NAMES)
  assert [n for n, s in zip(NAMES, start) if s < 0] == [
      "I-playlist", "I-playlist_owner"]
  for i, j in itertools.product(range(len(NAMES)), repeat=2):
    allowed = transitions[i, j] == 0
    assert allowed == _follows(NAMES[i], NAMES[j]), (NAMES[i], NAMES[j])


@pytest.mark.parametrize("seed", range(4))
def test_viterbi_is_the_best_valid_sequence(seed):
  rng = np.random.RandomState(seed)
  logits = rng.randn(6, 4, len(NAMES)).astype(np.float32) * 3
  num_words = np.array([4, 3, 1, 0, 2, 4], np.int32)
  start, transitions = iob_decoding.allowed_transitions(NAMES)
  graph = iob_decoding.viterbi_decode(logits, num_words, start,
                                      transitions).numpy()
  numpy = iob_decoding.viterbi_decode_numpy(logits, num_words, start,
                                            transitions)
  for row, logit, count, np_row in zip(graph, logits, num_words, numpy):
    expected = _brute_force(logit[:count], NAMES) if count else []
    assert list(row[:count]) == expected == np_row
    assert (row[count:] == -1).all()


@pytest.mark.parametrize("batch", [1, 3])
def test_valid_arg_max_batches_skip_the_loop_with_the_same_tags(batch):
  # One query per batch is often a valid arg-max (no Viterbi pass), three
  # rarely: both branches against the brute force and the NumPy decoder.
  start, transitions = iob_decoding.allowed_transitions(NAMES)
  rng = np.random.RandomState(11)
  skipped = 0
  for _ in range(40):
    logits = rng.randn(batch, 4, len(NAMES)).astype(np.float32) * 3
    num_words = rng.randint(0, 5, size=[batch]).astype(np.int32)
    graph = iob_decoding.viterbi_decode(logits, num_words, start,
                                        transitions).numpy()
    numpy = iob_decoding.viterbi_decode_numpy(logits, num_words, start,
                                              transitions)
    arg_max_valid = True
    for row, logit, count, np_row in zip(graph, logits, num_words, numpy):
      expected = _brute_force(logit[:count], NAMES) if count else []
      assert list(row[:count]) == expected == np_row
      assert (row[count:] == -1).all()
      arg_max_valid &= _valid([NAMES[i] for i in logit[:count].argmax(-1)])
    skipped += arg_max_valid
  assert 0 < skipped < 40


def test_fixes_the_undertrained_taggers_error_and_keeps_valid_arg_maxes():
  # "my flow espanol playlist": arg-max B-playlist_owner I-playlist
  # I-playlist (invalid); the best valid reading keeps the playlist chunk.
  logits = np.log(np.array([[
      [0.1, 0.35, 0.05, 0.45, 0.05],
      [0.05, 0.05, 0.6, 0.05, 0.25],
      [0.05, 0.05, 0.8, 0.05, 0.05],
  ]], np.float32))
  start, transitions = iob_decoding.allowed_transitions(NAMES)
  tags = iob_decoding.viterbi_decode(logits, [3], start, transitions).numpy()
  assert [NAMES[i] for i in tags[0]] == ["B-playlist", "I-playlist",
                                         "I-playlist"]
  valid = np.log(np.array([[[0.8, 0.05, 0.05, 0.05, 0.05],
                            [0.1, 0.6, 0.1, 0.1, 0.1],
                            [0.1, 0.1, 0.6, 0.1, 0.1]]], np.float32))
  tags = iob_decoding.viterbi_decode(valid, [3], start, transitions).numpy()
  assert list(tags[0]) == list(valid[0].argmax(-1))


def test_tflite_gives_the_graphs_tags():
  from ai_edge_litert import interpreter as litert  # pylint: disable=g-import-not-at-top
  start, transitions = iob_decoding.allowed_transitions(NAMES)

  class Decoder(tf.Module):

    @tf.function(input_signature=[
        tf.TensorSpec([None, None, len(NAMES)], tf.float32),
        tf.TensorSpec([None], tf.int32)])
    def decode(self, logits, num_words):
      return {"tags": iob_decoding.viterbi_decode(logits, num_words, start,
                                                  transitions)}

  decoder = Decoder()
  converter = tf.lite.TFLiteConverter.from_concrete_functions(
      [decoder.decode.get_concrete_function()], decoder)
  runner = litert.Interpreter(
      model_content=converter.convert()).get_signature_runner()
  rng = np.random.RandomState(7)
  logits = rng.randn(3, 5, len(NAMES)).astype(np.float32) * 3
  num_words = np.array([5, 2, 0], np.int32)
  # A valid arg-max (the model skips its Viterbi loop) and the same query
  # with an I- tag after O (it runs the loop).
  valid = np.log(np.array([[[0.8, 0.05, 0.05, 0.05, 0.05],
                            [0.1, 0.6, 0.1, 0.1, 0.1],
                            [0.1, 0.1, 0.6, 0.1, 0.1]]], np.float32))
  invalid = valid[:, ::-1, :]
  for logits, num_words in ((logits, num_words), (valid, [3]), (invalid, [3]),
                            (invalid, [1])):
    num_words = np.asarray(num_words, np.int32)
    expected = decoder.decode(logits, num_words)["tags"].numpy()
    got = runner(logits=logits, num_words=num_words)["tags"]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", range(3))
def test_the_sparse_step_makes_the_dense_steps_choices_ties_included(seed):
  # SNIPS-sized tag set; integer logits make many ties.
  kinds = ["album", "artist", "playlist", "playlist_owner", "time"]
  names = ["O"] + [f"{p}-{k}" for k in kinds for p in "BI"] + ["I-orphan"]
  start, transitions = iob_decoding.allowed_transitions(names)
  rng = np.random.RandomState(seed)
  best = tf.constant(rng.randint(-3, 3, size=[8, len(names)]), tf.float32)
  sparse = iob_decoding._sparse_step(transitions)  # pylint: disable=protected-access
  dense = iob_decoding._dense_step(transitions)  # pylint: disable=protected-access
  for got, expected in zip(sparse(best), dense(best)):
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_other_transition_scores_take_the_dense_step():
  _, transitions = iob_decoding.allowed_transitions(NAMES)
  assert iob_decoding._sparse_step(transitions) is not None  # pylint: disable=protected-access
  assert iob_decoding._sparse_step(transitions * 0.5) is None  # pylint: disable=protected-access
