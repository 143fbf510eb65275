"""Tests of the shared export step's scoring (the export itself: tests/)."""

import numpy as np
import tensorflow as tf

from mixvocab_tf.jobs import export_steps
from mixvocab_tf.tasks.finetuning import metrics


class ScoresTest(tf.test.TestCase):

  def test_text_classification_scores_are_the_trainers(self):
    # 'c' is a gold label train lacked: an error, not a class of its own.
    known = ["a", "b"]
    gold = ["a", "a", "b", "c", "c"]
    predicted = ["a", "b", "b", "a", "b"]
    result, per_label, confused = export_steps.scores(
        "text_classification", [{"label": p} for p in predicted], gold,
        known, majority="a")
    ids = {"a": 0, "b": 1, "c": metrics.UNKNOWN_LABEL}
    expected = metrics.macro_f1(np.array([ids[g] for g in gold]),
                                np.array([ids[p] for p in predicted]), 2)
    self.assertAlmostEqual(result["macro_f1"], expected)
    self.assertAlmostEqual(result["accuracy"], 2 / 5)
    self.assertAlmostEqual(result["majority_accuracy"], 2 / 5)
    # The report still lists the unseen label, with recall 0.
    self.assertIn({"label": "c", "support": 2, "precision": 0.0,
                   "recall": 0.0, "f1": 0.0}, per_label)
    self.assertCountEqual([(c["gold"], c["predicted"], c["count"])
                           for c in confused],
                          [("a", "b", 1), ("c", "a", 1), ("c", "b", 1)])

  def test_intent_slot_scores_pad_a_query_the_model_cut_short(self):
    # A query longer than the model's sequence comes back with fewer tags:
    # the words it dropped are scored as 'O', not an error.
    gold = [("play", ["O", "B-x", "I-x"]), ("stop", ["O", "O", "B-y"])]
    predictions = [{"intent": "play", "tags": ["O", "B-x", "I-x"]},
                   {"intent": "play", "tags": ["O", "O"]}]
    result, per_label, _ = export_steps.scores(
        "intent_slot", predictions, gold, ["play", "stop"], majority="play")
    self.assertAlmostEqual(result["intent_accuracy"], 0.5)
    self.assertAlmostEqual(result["slot_f1"], metrics.slot_f1(
        [g[1] for g in gold], [["O", "B-x", "I-x"], ["O", "O", "O"]]))
    self.assertAlmostEqual(result["majority_accuracy"], 0.5)
    self.assertNotIn("accuracy", result)
    self.assertEqual([r["label"] for r in per_label], ["stop", "play"])


if __name__ == "__main__":
  tf.test.main()
