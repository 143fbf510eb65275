"""Tests for metrics; slot F1 agrees with seqeval (conlleval) on real SNIPS."""

import os
import random

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.tasks.finetuning import metrics

# The package's own copy of SNIPS valid.
_SNIPS_VALID = os.path.join(assets.snips_dir("valid"), "seq.out")


def _read_gold_tags():
  if not os.path.isfile(_SNIPS_VALID):
    raise FileNotFoundError(f"SNIPS valid data missing at {_SNIPS_VALID}.")
  with open(_SNIPS_VALID, encoding="utf-8") as f:
    return [line.split() for line in f.read().split("\n") if line.strip()]


def _corrupt(gold_tags, seed, types):
  """Deterministic prediction errors of the kinds a tagger makes."""
  rng = random.Random(seed)
  predicted = []
  for tags in gold_tags:
    tags = list(tags)
    for i, tag in enumerate(tags):
      roll = rng.random()
      if roll < 0.05 and tag.startswith("B-"):
        tags[i] = "O"  # Drop the B-: a following I- now starts its own chunk.
      elif roll < 0.10 and tag != "O":
        tags[i] = tag[:2] + rng.choice(types)  # Wrong type.
      elif roll < 0.13 and tag.startswith("B-"):
        tags[i] = "I-" + tag[2:]  # I- without B-.
      elif roll < 0.16 and tag == "O":
        # A spurious chunk, sometimes opened by an I-.
        tags[i] = rng.choice(["B-", "I-"]) + rng.choice(types)
    if rng.random() < 0.1 and len(tags) > 1:
      # Shift every span one word right.
      tags = ["O"] + tags[:-1]
    predicted.append(tags)
  return predicted


class MetricsTest(tf.test.TestCase):

  def test_accuracy_and_binary_f1(self):
    labels = [1, 0, 1, 1, 0]
    predictions = [1, 1, 0, 1, 0]
    self.assertAlmostEqual(metrics.accuracy(labels, predictions), 0.6)
    # tp=2, fp=1, fn=1: P=R=2/3.
    self.assertAlmostEqual(metrics.binary_f1(labels, predictions), 2 / 3)
    self.assertEqual(metrics.binary_f1([0, 0], [0, 0]), 0.0)
    self.assertEqual(metrics.glue_metrics("MRPC", labels, predictions), {
        "f1": metrics.binary_f1(labels, predictions),
        "accuracy": 0.6
    })
    self.assertEqual(list(metrics.glue_metrics("sst-2", labels, labels)),
                     ["accuracy"])

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "same length; received 2 and 3"):
      metrics.accuracy([1, 0], [1, 0, 1])
    with self.assertRaisesRegex(ValueError, "Unknown GLUE task 'cola'"):
      metrics.glue_metrics("cola", [1], [1])
    with self.assertRaisesRegex(ValueError, "Sentence 1 has 2 gold tags but 1"):
      metrics.slot_f1([["O"], ["O", "O"]], [["O"], ["O"]])

  def test_iob_chunks_conlleval_rules(self):
    self.assertEqual(
        metrics.iob_chunks(
            ["B-city", "I-city", "O", "I-state", "I-city", "B-x"]),
        {(0, 1, "city"), (3, 3, "state"), (4, 4, "city"), (5, 5, "x")})
    self.assertEqual(metrics.iob_chunks(["B-a", "B-a", "I-a"]),
                     {(0, 0, "a"), (1, 2, "a")})
    self.assertEqual(metrics.iob_chunks(["O", "O"]), set())

  def test_slot_f1_matches_seqeval_on_corrupted_snips(self):
    # Imported here: seqeval is a test-only reference, not a dependency.
    try:
      from seqeval import metrics as seqeval  # pylint: disable=g-import-not-at-top
    except ImportError:
      self.skipTest("seqeval is not installed (pip install seqeval).")
    gold = _read_gold_tags()
    self.assertLen(gold, 700)
    types = sorted({t[2:] for tags in gold for t in tags if t != "O"})
    self.assertEqual(metrics.slot_f1(gold, gold), 1.0)
    seen = set()
    for seed in range(5):
      predicted = _corrupt(gold, seed, types)
      precision, recall, f1 = metrics.slot_precision_recall_f1(gold, predicted)
      self.assertAlmostEqual(
          f1, seqeval.f1_score(gold, predicted), delta=1e-9)
      self.assertAlmostEqual(
          precision, seqeval.precision_score(gold, predicted), delta=1e-9)
      self.assertAlmostEqual(
          recall, seqeval.recall_score(gold, predicted), delta=1e-9)
      seen.add(round(f1, 6))
    # The corruptions are real: every seed scores differently and below 1.
    self.assertLen(seen, 5)
    self.assertLess(max(seen), 0.95)

  def test_per_slot_type_scores(self):
    gold = [["B-a", "I-a", "O", "B-b"], ["B-b", "O", "B-c"]]
    pred = [["B-a", "I-a", "O", "B-a"], ["B-b", "O", "O"]]
    rows = {r["label"]: r for r in metrics.per_slot_type_scores(gold, pred)}
    # a: 1 right of 2 predicted, 1 gold; b: 1 right of 1 predicted, 2 gold;
    # c: never predicted.
    self.assertEqual((rows["a"]["support"], rows["a"]["precision"],
                      rows["a"]["recall"]), (1, 0.5, 1.0))
    self.assertEqual((rows["b"]["support"], rows["b"]["precision"],
                      rows["b"]["recall"]), (2, 1.0, 0.5))
    self.assertEqual(rows["c"]["f1"], 0.0)
    self.assertEqual([r["label"] for r in metrics.per_slot_type_scores(
        gold, pred)], ["c", "b", "a"])
    self.assertEqual(metrics.per_slot_type_scores([["O"]], [["O"]]), [])

  def test_per_slot_type_scores_match_seqeval_on_corrupted_snips(self):
    try:
      from seqeval import metrics as seqeval  # pylint: disable=g-import-not-at-top
    except ImportError:
      self.skipTest("seqeval is not installed (pip install seqeval).")
    gold = _read_gold_tags()
    types = sorted({t[2:] for tags in gold for t in tags if t != "O"})
    predicted = _corrupt(gold, 0, types)
    want = seqeval.classification_report(gold, predicted, output_dict=True,
                                         zero_division=0)
    rows = metrics.per_slot_type_scores(gold, predicted)
    self.assertCountEqual([r["label"] for r in rows if r["support"]],
                          types)
    for row in rows:
      if not row["support"]:  # seqeval lists gold types only.
        continue
      reference = want[row["label"]]
      self.assertEqual(row["support"], reference["support"])
      for key in ("precision", "recall"):
        self.assertAlmostEqual(row[key], reference[key], delta=1e-9)
      self.assertAlmostEqual(row["f1"], reference["f1-score"], delta=1e-9)
    # Some types are hurt more than others by the same corruption.
    self.assertGreater(rows[-1]["f1"] - rows[0]["f1"], 0.2)

  def test_snips_metrics(self):
    gold_tags = [["B-a", "I-a", "O"], ["O", "B-b"]]
    pred_tags = [["B-a", "I-a", "O"], ["O", "B-c"]]
    result = metrics.snips_metrics([0, 1], [0, 1], gold_tags, pred_tags)
    self.assertEqual(result["intent_accuracy"], 1.0)
    self.assertAlmostEqual(result["slot_f1"], 0.5)
    self.assertEqual(result["sentence_accuracy"], 0.5)
    result = metrics.snips_metrics(["x", "y"], ["y", "y"], gold_tags, gold_tags)
    self.assertEqual(result["slot_f1"], 1.0)
    self.assertEqual(result["intent_accuracy"], 0.5)
    self.assertEqual(result["sentence_accuracy"], 0.5)

  def test_text_classification_metrics_with_an_unknown_label(self):
    # Classes 0, 1, 2 (train); -1: a label train lacks, always wrong.
    labels = [0, 0, 1, 2, -1, -1]
    predictions = [0, 1, 1, 1, 0, 2]
    result = metrics.text_classification_metrics(labels, predictions, 3,
                                                 majority_label=0)
    self.assertEqual(list(result), list(metrics.TEXT_CLASSIFICATION_METRICS))
    self.assertAlmostEqual(result["accuracy"], 2 / 6)
    self.assertAlmostEqual(result["majority_accuracy"], 2 / 6)
    # Class 0: tp 1, fp 1 (the unknown label predicted 0), fn 1 -> 1/2.
    # Class 1: tp 1, fp 2, fn 0 -> 1/2. Class 2: tp 0 (fp 1 from the other
    # unknown label, fn 1) -> 0.
    self.assertAlmostEqual(result["macro_f1"], (1 / 2 + 1 / 2 + 0) / 3)
    # A class neither in the split nor predicted has no F1: left out.
    self.assertAlmostEqual(metrics.macro_f1([0, 1], [0, 1], 5), 1.0)
    # An abstaining class (out_of_scope) counts only as a gold label: one
    # answer of it on a split without it is a miss, not a class of F1 0.
    self.assertAlmostEqual(metrics.macro_f1([0, 0, 1], [0, 2, 1], 3),
                           (2 / 3 + 1 + 0) / 3)
    self.assertAlmostEqual(
        metrics.macro_f1([0, 0, 1], [0, 2, 1], 3, abstain=2), (2 / 3 + 1) / 2)
    self.assertAlmostEqual(
        metrics.macro_f1([0, 2, 1], [0, 2, 1], 3, abstain=2), 1.0)
    self.assertEqual(metrics.macro_f1([-1, -1], [0, 1], 2), 0.0)
    self.assertEqual(metrics.majority_accuracy([1, 1, -1], 1), 2 / 3)
    with self.assertRaisesRegex(ValueError, "same length"):
      metrics.macro_f1([0], [0, 1], 2)

  def test_macro_f1_matches_scikit_learn(self):
    try:
      from sklearn import metrics as sklearn_metrics  # pylint: disable=g-import-not-at-top
    except ImportError:
      self.skipTest("scikit-learn is not installed.")
    rng = np.random.default_rng(0)
    for num_classes in (2, 3, 7):
      labels = rng.integers(-1, num_classes, size=200)
      predictions = rng.integers(0, num_classes, size=200)
      predictions[:80] = np.maximum(labels[:80], 0)
      present = sorted({k for k in set(labels) | set(predictions) if k >= 0})
      self.assertAlmostEqual(
          metrics.macro_f1(labels, predictions, num_classes),
          sklearn_metrics.f1_score(labels, predictions, labels=present,
                                   average="macro", zero_division=0),
          delta=1e-12)


if __name__ == "__main__":
  tf.test.main()
