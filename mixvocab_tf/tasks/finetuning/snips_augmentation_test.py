"""Tests for slot-value substitution on SNIPS."""

import pytest

from mixvocab_tf import data
from mixvocab_tf.tasks.finetuning import snips_augmentation
from mixvocab_tf.tasks.finetuning import snips_data


def _examples():
  return snips_data.SnipsExamples(
      words=[["play", "dark", "ambient", "on", "spotify"],
             ["play", "jazz", "now"],
             ["hello", "there"]],
      tags=[["O", "B-genre", "I-genre", "O", "B-service"],
            ["O", "B-genre", "O"],
            ["O", "O"]],
      intents=["PlayMusic", "PlayMusic", "Other"], path="toy")


def test_chunks_follow_conll_reading():
  assert snips_augmentation.chunks(["B-a", "I-a", "O", "I-b", "I-a"]) == [
      (0, 2, "a"), (3, 4, "b"), (4, 5, "a")]


def test_substitution_swaps_whole_values_and_keeps_tags_valid():
  examples = _examples()
  values = snips_augmentation.slot_values(examples)
  assert values == {"genre": [("dark", "ambient"), ("jazz",)],
                    "service": [("spotify",)]}
  new = snips_augmentation.augment(examples, copies=4, p_replace=1.0, seed=1)
  assert new.words, "p_replace=1 over two genre values must make a new query"
  originals = {tuple(w) for w in examples.words}
  for words, tags, intent in zip(new.words, new.tags, new.intents):
    assert tuple(words) not in originals
    assert len(words) == len(tags) and intent == "PlayMusic"
    assert words[0] == "play" and tags[0] == "O"
    genre = [w for w, t in zip(words, tags) if t.endswith("genre")]
    assert tuple(genre) in values["genre"]
    # Every I- tag continues a chunk of its own type.
    for previous, tag in zip(["O"] + tags, tags):
      assert not tag.startswith("I-") or previous[2:] == tag[2:]
  assert len({tuple(w) for w in new.words}) == len(new.words)
  again = snips_augmentation.augment(examples, copies=4, p_replace=1.0, seed=1)
  assert again.words == new.words


def test_on_snips_train():
  train = snips_data.read_snips(data.snips_dir("train"))
  new = snips_augmentation.augment(train, copies=1, seed=0)
  assert 0.5 * len(train.words) < len(new.words) <= len(train.words)
  labels = snips_data.SnipsLabels.from_examples(train)
  assert labels.encode(new)[2] == 0  # Every tag is a known label.


def test_bad_arguments():
  with pytest.raises(ValueError, match="p_replace in"):
    snips_augmentation.augment(_examples(), p_replace=0.0)
