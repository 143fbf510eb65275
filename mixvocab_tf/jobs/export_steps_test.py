"""Tests of the shared export step's word-table check (its scores:
`serving/scoring_test.py`; the export itself: tests/) and of the records it
writes as the texts to label next."""

import json
import os
from unittest import mock

import tensorflow as tf

from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import text_classification_files
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


class ToTrainRecordTest(tf.test.TestCase):
  """The texts to label next are lines of a train split, answers as labels."""

  def _read_back(self, records, name, read):
    path = os.path.join(self.get_temp_dir(), name)
    with open(path, "w", encoding="utf-8") as f:
      f.write("".join(json.dumps(r, ensure_ascii=False) + "\n"
                      for r in records))
    return read(path)

  def test_intent_slot_answers_become_spans(self):
    record = {"text": "play Москва by abba", "intent": "PlayMusic",
              "score": 0.41, "top_k": [{"label": "PlayMusic", "score": 0.41}],
              "words": ["play", "Москва", "by", "abba"],
              "tags": ["O", "B-album", "O", "B-artist"],
              "slots": [{"type": "album", "text": "Москва", "start": 5,
                         "end": 11, "start_word": 1, "end_word": 2},
                        {"type": "artist", "text": "abba", "start": 15,
                         "end": 19, "start_word": 3, "end_word": 4}]}
    line = export_steps.to_train_record(record)
    self.assertEqual(line["spans"], [[5, 11, "album"], [15, 19, "artist"]])
    self.assertNotIn("tags", line)
    split = self._read_back([line], "next.jsonl",
                            intent_slot_files.read_intent_slot)
    self.assertEqual((split.words, split.tags, split.intents),
                     ([record["words"]], [record["tags"]], ["PlayMusic"]))

  def test_text_classification_answers_in_the_datasets_columns(self):
    record = {"text": "a fine film", "label": "pos", "score": 0.52,
              "top_k": [{"label": "pos", "score": 0.52}]}
    line = export_steps.to_train_record(record, "sentence", "sentiment")
    self.assertEqual(line["sentence"], "a fine film")
    self.assertEqual(line["sentiment"], "pos")
    split = self._read_back(
        [line], "next.jsonl",
        lambda path: text_classification_files.read_text_classification(
            path, text_column="sentence", label_column="sentiment"))
    self.assertEqual((split.texts_a, split.labels), (["a fine film"], ["pos"]))


if __name__ == "__main__":
  tf.test.main()
