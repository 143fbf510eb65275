"""Tests of slot-value substitution."""

from mixvocab_tf import assets
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.tasks.finetuning import metrics
from mixvocab_tf.tasks.finetuning.intent_slot import augment as intent_slot_augment


def test_slot_spans():
  spans = metrics.slot_spans(
      ["O", "B-a", "I-a", "O", "I-b", "B-c", "B-c", "I-c"])
  assert spans == [(1, 3, "a"), (4, 5, "b"), (5, 6, "c"), (6, 8, "c")]


def test_augment_real_snips():
  examples = intent_slot_files.read_intent_slot(assets.snips_dir("valid"))
  augmented = intent_slot_augment.augment(examples, copies=2, p=0.5, seed=3)
  n = len(examples.intents)
  assert len(augmented.intents) == 3 * n
  assert augmented.words[:n] == examples.words
  assert augmented.tags[:n] == examples.tags
  assert augmented.intents == examples.intents * 3
  changed = 0
  for words, tags, original in zip(augmented.words[n:], augmented.tags[n:],
                                   examples.tags * 2):
    assert len(words) == len(tags)
    # Every I-x continues a chunk of type x.
    assert all(not t.startswith("I-") or p[2:] == t[2:]
               for p, t in zip(["O"] + tags, tags))
    # The same slot types in the same order.
    assert [k for _, _, k in metrics.slot_spans(tags)] == [
        k for _, _, k in metrics.slot_spans(original)]
  changed = sum(w != o for w, o in zip(augmented.words[n:],
                                       examples.words * 2))
  assert changed > n  # Most copies differ.
  again = intent_slot_augment.augment(examples, copies=2, p=0.5, seed=3)
  assert again.words == augmented.words


def test_copies_draw_from_given_slot_values_too():
  examples = examples_lib.IntentSlotExamples(
      path="train", words=[["play", "jazz", "by", "nina", "simone"]] * 50,
      tags=[["O", "B-genre", "O", "B-artist", "I-artist"]] * 50,
      intents=["PlayMusic"] * 50)
  more = {"artist": [("john", "coltrane"), ("madonna",)],
          # genre is one word in train: its two-word value would tag
          # I-genre, which train has no label for.
          "genre": [("blues",), ("big", "band")],
          "city": [("paris",)]}  # Not train's: no span to put it in.
  augmented = intent_slot_augment.augment(examples, copies=4, p=1.0, seed=0,
                                          slot_values=more)
  assert augmented.words[:50] == examples.words
  artists, genres = set(), set()
  for words, tags in zip(augmented.words[50:], augmented.tags[50:]):
    for start, end, kind in metrics.slot_spans(tags):
      (artists if kind == "artist" else genres).add(" ".join(words[start:end]))
    assert "I-genre" not in tags and "paris" not in words
  assert artists == {"nina simone", "john coltrane", "madonna"}
  assert genres == {"jazz", "blues"}
  again = intent_slot_augment.augment(examples, copies=4, p=1.0, seed=0,
                                      slot_values=more)
  assert again.words == augmented.words and again.tags == augmented.tags


def test_balance_gives_rare_intents_more_copies():
  intents = ["RateBook"] * 400 + ["GetWeather"] * 100 + ["PlayMusic"] * 25
  # mean 175: (175 / n) ** 0.5 * 12; at least 1, at most 4 * 12.
  assert intent_slot_augment.copies_per_intent(intents, 12, 0.5) == {
      "RateBook": 8, "GetWeather": 16, "PlayMusic": 32}
  assert intent_slot_augment.copies_per_intent(intents, 12, 1.0) == {
      "RateBook": 5, "GetWeather": 21, "PlayMusic": 48}
  assert intent_slot_augment.copies_per_intent(intents, 12) == {
      "RateBook": 12, "GetWeather": 12, "PlayMusic": 12}
  # Intents of equal size: `copies` each, whatever the balance.
  assert set(intent_slot_augment.copies_per_intent(
      ["a", "b"] * 30, 3, 1.0).values()) == {3}
  examples = examples_lib.IntentSlotExamples(
      path="train",
      words=[["play", "jazz"]] * 4 + [["rate", "it", "5"]],
      tags=[["O", "B-genre"]] * 4 + [["O", "O", "B-rating"]],
      intents=["PlayMusic"] * 4 + ["RateBook"])
  augmented = intent_slot_augment.augment(examples, copies=2, p=1.0, seed=0,
                                          balance=1.0)
  # mean 2.5: PlayMusic round(2 * 0.625) = 1 copy, RateBook 5 copies;
  # originals first, then copy 1 of each, copy 2 of RateBook's, ...
  assert augmented.words[:5] == examples.words
  assert augmented.intents == (examples.intents + examples.intents +
                               ["RateBook"] * 4)
  assert all(len(w) == len(t) for w, t in zip(augmented.words,
                                              augmented.tags))
