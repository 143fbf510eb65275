"""Tests of the unigram floor of masked-LM losses."""

import numpy as np
import pytest

from mixvocab_tf.text import unigram

_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat",
          "on", "mat", "##s", "."]


@pytest.fixture()
def corpus(tmp_path):
  path = tmp_path / "train.txt"
  path.write_text("The cat sat on the mat.\n\nThe cats sat.\n")
  return str(path)


def test_counts_are_wordpieces_of_the_vocabulary(corpus):
  counts = unigram.token_counts(corpus, _VOCAB)
  by_token = dict(zip(_VOCAB, counts))
  assert by_token["the"] == 3 and by_token["cat"] == 2
  assert by_token["##s"] == 1 and by_token["."] == 2
  assert by_token["[CLS]"] == by_token["[MASK]"] == 0
  assert counts.sum() == 12


def test_floor_is_the_cross_entropy_of_smoothed_frequencies(corpus):
  floor = unigram.UnigramFloor.from_files(corpus, _VOCAB)
  probs = (unigram.token_counts(corpus, _VOCAB) + 1.0) / (12 + len(_VOCAB))
  ids = np.array([[5, 6, 0], [9, 5, 7]])
  weights = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
  loss, accuracy = floor.score(ids, weights)
  expected = -np.log(probs[[5, 6, 9, 5, 7]]).mean()
  assert loss == pytest.approx(expected)
  # "the" is the most frequent token: 2 of the 5 weighted ids.
  assert accuracy == pytest.approx(2 / 5)
  assert floor.summary()["tokens"] == 12
  assert floor.summary()["most_frequent_share"] == pytest.approx(3 / 12)


def test_no_weighted_token_gives_nan():
  floor = unigram.UnigramFloor([1, 2, 3])
  assert all(np.isnan(floor.score([[0]], [[0.0]])))


def test_bad_counts_are_refused():
  with pytest.raises(ValueError, match="non-negative"):
    unigram.UnigramFloor([1, -1])
