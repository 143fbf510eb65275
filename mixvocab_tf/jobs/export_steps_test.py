"""Tests of the shared export step's word-table check (its scores:
`serving/scoring_test.py`; the export itself: tests/)."""

import os
from unittest import mock

import tensorflow as tf

from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.jobs import export_steps
from mixvocab_tf.serving import predictor as predict_lib


class WordTableCheckTest(tf.test.TestCase):
  """`word_table_check` on predictors that answer as told (the real
  signatures are checked end to end in tests/test_own_data.py)."""

  def _check(self, validation, packed_wrong, tolerance=0.3, bits=4):
    data_dir = os.path.join(self.get_temp_dir(), f"d{validation}_{bits}")
    os.makedirs(data_dir, exist_ok=True)
    for split, count in (("train", 4), ("validation", validation)):
      with open(os.path.join(data_dir, f"{split}.csv"), "w") as f:
        f.write("text,label\n" + "".join(
            f"text {i},{'ab'[i % 2]}\n" for i in range(count)))
    dataset = user_dataset.load_dataset(data_dir)
    gold = dataset.splits["validation"].labels

    def load_predictor(path, signature, **kwargs):
      del path, kwargs
      wrong = packed_wrong if signature == "serving_tflite" else 0
      predictor = mock.Mock()
      predictor.predict.side_effect = lambda rows, top_k: [
          {"label": ("b" if g == "a" else "a") if i < wrong else g}
          for i, g in enumerate(gold)]
      return predictor

    with mock.patch.object(predict_lib, "load_predictor", load_predictor), \
        mock.patch.object(export_steps, "saved_model_info",
                          lambda _: {"word_table_bits": bits}):
      return export_steps.word_table_check("/unused", dataset,
                                           tolerance=tolerance)

  def test_packs_unless_it_costs_more_than_the_tolerance(self):
    # 1,000 validation examples: 3 answers lost are 0.3 points, 4 are not.
    self.assertTrue(self._check(1000, 3)["pack"])
    check = self._check(1000, 4)
    self.assertFalse(check["pack"])
    self.assertAlmostEqual(check["cost_points"], 0.4)
    self.assertEqual(check["scores"]["float"], {"accuracy": 1.0})
    self.assertEqual(check["scores"]["packed"], {"accuracy": 0.996})

  def test_one_example_is_no_evidence(self):
    # 150 examples: one answer is 0.67 points, allowed; two are not.
    check = self._check(150, 1)
    self.assertTrue(check["pack"])
    self.assertAlmostEqual(check["allowed_points"], 100 / 150)
    self.assertFalse(self._check(150, 2)["pack"])
    # A negative tolerance never packs, even where nothing is lost.
    self.assertFalse(self._check(150, 0, tolerance=-1.0)["pack"])

  def test_nothing_to_check_without_a_packed_table(self):
    check = self._check(150, 150, bits=32)
    self.assertTrue(check["pack"])
    self.assertNotIn("scores", check)


if __name__ == "__main__":
  tf.test.main()
