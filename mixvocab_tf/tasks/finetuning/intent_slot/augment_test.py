"""Tests of slot-value substitution."""

from mixvocab_tf import assets
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
