"""Tests of the GLUE transfer-set augmentation (word edits, pair swaps)."""

import numpy as np
import pytest

from mixvocab_tf.tasks.finetuning.text_classification import augment as text_classification_augment

A = ["the movie was great fun", "a dull , lifeless film", "loved it"]
B = ["", "", ""]


def test_copies_follow_the_originals_with_their_labels():
  a, b, labels, original = text_classification_augment.augment(A, B, [1, 0, 1], copies=2,
                                                p=0.3, p_delete=0.2, seed=1)
  assert len(a) == len(b) == len(labels) == 9
  assert a[:3] == A and labels == [1, 0, 1] * 3
  assert original == [True] * 3 + [False] * 6
  assert b == [""] * 9  # Single sentences stay single.
  pool = {w for s in A for w in s.split()}
  for sentence in a[3:]:
    assert sentence and set(sentence.split()) <= pool
  assert a[3:] != A + A  # Something was edited.
  # Deterministic given the seed.
  assert text_classification_augment.augment(A, B, [1, 0, 1], copies=2, p=0.3,
                              p_delete=0.2, seed=1)[0] == a


def test_pairs_swap_and_no_copies_is_the_identity():
  a, b, _, _ = text_classification_augment.augment(["x y"], ["u v"], [1], copies=1, p=0.0,
                                    p_delete=0.0, swap_pairs=True)
  assert (a, b) == (["x y", "u v"], ["u v", "x y"])
  assert text_classification_augment.augment(A, B, [1, 0, 1], copies=0) == (
      A, B, [1, 0, 1], [True] * 3)
  with pytest.raises(ValueError, match="p \\+ p_delete"):
    text_classification_augment.augment(A, B, [1, 0, 1], p=0.8, p_delete=0.5)


def test_only_examples_of_min_words_are_copied():
  a, b, labels, original = text_classification_augment.augment(
      ["a b c", "d e", "f g h i"], ["", "x", ""], [0, 1, 1], copies=2,
      p=0.0, p_delete=0.0, min_words=3)
  # "d e" + "x" counts 3 words: a pair is counted whole.
  assert a == ["a b c", "d e", "f g h i"] + ["a b c", "d e", "f g h i"] * 2
  assert labels == [0, 1, 1] * 3 and original == [True] * 3 + [False] * 6
  a, _, labels, original = text_classification_augment.augment(
      ["a b c", "d e"], ["", ""], [0, 1], copies=2, p=0.0, p_delete=0.0,
      min_words=3)
  assert a == ["a b c", "d e", "a b c", "a b c"] and labels == [0, 1, 0, 0]
  assert original == [True, True, False, False]
  with pytest.raises(ValueError, match="min_words must be >= 0"):
    text_classification_augment.augment(A, B, [1, 0, 1], min_words=-1)


def test_embedding_neighbours_are_the_nearest_alphabetic_tokens():
  tokens = ["[PAD]", "good", "great", "bad", "##ly", "fine", "awful", "9"]
  table = np.array([[0, 0], [1, 0.1], [1, 0.2], [-1, 0], [1, 0.15],
                    [0.9, 0.5], [-1, -0.1], [1, 0.12]], np.float32)
  near = text_classification_augment.embedding_neighbours(table, tokens,
                                           ["good", "bad", "okay"], k=2)
  # "##ly" and "9" are no words; "okay" is not a token; itself excluded.
  assert near == {"good": ["great", "fine"], "bad": ["awful", "fine"]}
  with pytest.raises(ValueError, match="8 tokens but 2 embedding rows"):
    text_classification_augment.embedding_neighbours(table[:2], tokens, ["good"])


def test_neighbour_substitution_uses_only_neighbours():
  neighbours = {"good": ["great", "fine"]}
  a, _, _, original = text_classification_augment.augment(
      ["good film", "Good good"], ["", ""], [1, 1], copies=20, p=1.0,
      p_delete=0.0, seed=3, neighbours=neighbours)
  copies = [s for s, o in zip(a, original) if not o]
  words = {w for s in copies for w in s.split()}
  assert words <= {"great", "fine", "film"}  # "film" has no neighbours.
  assert {"great", "fine"} <= words


def test_text_sentences_cut_filter_deduplicate_and_draw(tmp_path):
  first = tmp_path / "a.txt"
  first.write_text("Call me Ishmael. Some years ago, never mind how long "
                   "precisely, I went to sea!\n\nOh. Call me Ishmael.\n",
                   encoding="utf-8")
  second = tmp_path / "b.txt"
  second.write_text("Is it  spaced   oddly? yes\n", encoding="utf-8")
  every = text_classification_augment.text_sentences([str(first), str(second)], 100)
  assert sorted(every) == [
      "Call me Ishmael.", "Is it spaced oddly?",
      "Some years ago, never mind how long precisely, I went to sea!"]
  assert text_classification_augment.text_sentences([str(first), str(second)], 100,
                                     seed=0) == every
  assert len(text_classification_augment.text_sentences([str(first)], 1)) == 1
  assert text_classification_augment.text_sentences([str(first)], 10, max_words=3) == [
      "Call me Ishmael."]
  with pytest.raises(ValueError, match="No sentence of 20-40 words"):
    text_classification_augment.text_sentences([str(first)], 10, min_words=20)
  with pytest.raises(ValueError, match="min_words <= max_words"):
    text_classification_augment.text_sentences([str(first)], 10, min_words=5, max_words=4)
  with pytest.raises(ValueError, match="at least one text file"):
    text_classification_augment.text_sentences([], 10)
