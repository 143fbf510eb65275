"""Tests of glue: SST-2, MRPC and MNLI from TSV, MNLI sample JSON and TFDS."""

import os

import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import glue
from mixvocab_tf.datasets import text_classification_files
from mixvocab_testing import testing_utils

_GLUE = testing_utils.shared_data("glue")
# The development machines' GLUE files; a user's clone has none.
needs_glue = pytest.mark.skipif(not os.path.isdir(_GLUE),
                                reason=f"no GLUE data at {_GLUE}")

# The real GLUE MNLI headers (dev has five annotator labels, train one).
_MNLI_TRAIN_HEADER = [
    "index", "promptID", "pairID", "genre", "sentence1_binary_parse",
    "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1",
    "sentence2", "label1", "gold_label"
]
_MNLI_DEV_HEADER = _MNLI_TRAIN_HEADER[:-1] + [
    "label2", "label3", "label4", "label5", "gold_label"
]


def _mnli_row(header, index, sentence1, sentence2, label):
  values = {
      "index": str(index),
      "sentence1": sentence1,
      "sentence2": sentence2,
      "gold_label": label
  }
  return "\t".join(values.get(column, "x") for column in header)


def _write(path, lines):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")


def _as_lists(task, split, data_dir=None, source="auto"):
  """(sentences_a, sentences_b ('' for single ones), label ids) of a split."""
  dataset = glue.Glue(task, data_dir, source)
  examples = dataset.examples(split)
  texts_b = examples.texts_b or [""] * len(examples)
  return (examples.texts_a, texts_b,
          [dataset.label_names.index(label) for label in examples.labels])


class GlueTest(tf.test.TestCase):

  @needs_glue
  def test_real_dev_files(self):
    expected = {"sst2": 872, "mrpc": 408, "mnli": 1000}
    for task, count in expected.items():
      sentences_a, sentences_b, labels = _as_lists(task, "dev", _GLUE)
      names = glue.Glue(task, _GLUE).label_names
      self.assertLen(labels, count, task)
      self.assertEqual(set(labels), set(range(len(names))), task)
      self.assertEqual(all(sentences_b), glue.is_pair_task(task), task)
      self.assertLen(sentences_a, count)
    self.assertEqual(names, ("entailment", "neutral", "contradiction"))

  @needs_glue
  def test_real_first_rows(self):
    sst2 = glue.Glue("SST-2", _GLUE).examples("validation")
    self.assertEqual(sst2.texts_a[0],
                     "it 's a charming and often affecting journey . ")
    self.assertIsNone(sst2.texts_b)
    self.assertEqual(sst2.labels[0], "positive")
    mrpc = glue.Glue("mrpc", _GLUE, source="tsv").examples("dev")
    # A leading quote is text, not CSV quoting.
    self.assertEqual(mrpc.texts_b[0][:20], "\" The foodservice pi")
    self.assertEqual(mrpc.labels[0], "equivalent")
    mnli = glue.Glue("mnli", _GLUE, source="mnli_json").examples(
        "validation_matched")
    self.assertEqual(
        (mnli.texts_a[0], mnli.texts_b[0], mnli.labels[0]),
        ("Salt kept the town fed.", "Salt kept the town thriving.",
         "entailment"))

  def test_mnli_tsv_layout(self):
    root = os.path.join(self.get_temp_dir(), "glue")
    _write(os.path.join(root, "MNLI", "train.tsv"), [
        "\t".join(_MNLI_TRAIN_HEADER),
        _mnli_row(_MNLI_TRAIN_HEADER, 0, "A man \"walks\".", "He moves.",
                  "entailment"),
        _mnli_row(_MNLI_TRAIN_HEADER, 1, "It rains.", "It is dry.",
                  "contradiction"),
    ])
    _write(os.path.join(root, "MNLI", "dev_mismatched.tsv"), [
        "\t".join(_MNLI_DEV_HEADER),
        _mnli_row(_MNLI_DEV_HEADER, 0, "P", "H", "neutral"),
    ])
    self.assertEqual(_as_lists("mnli", "train", root),
                     (["A man \"walks\".", "It rains."],
                      ["He moves.", "It is dry."], [0, 2]))
    # A task directory works as data_dir too.
    self.assertEqual(
        _as_lists("mnli", "dev_mismatched", os.path.join(root, "MNLI"),
                  source="tsv"), (["P"], ["H"], [1]))

  def test_bad_files(self):
    # The reader of a user's files checks GLUE files: its messages, its
    # DataError (a ValueError).
    root = os.path.join(self.get_temp_dir(), "bad")
    path = os.path.join(root, "SST-2", "train.tsv")
    _write(path, ["sentence\tlabel", "good\t1", "bad\t1\textra"])
    with self.assertRaisesRegex(
        errors.DataError, r"train.tsv, line 3: the row has 3 fields: "
        r"\['bad', '1', 'extra'\]. Expected 2 fields"):
      glue.Glue("sst2", root).examples("train")
    _write(path, ["sentence\tlabel", "good\t2"])
    with self.assertRaisesRegex(
        errors.DataError, r"train.tsv, line 2: the label '2' is not a "
        r"GLUE sst2 label. Expected one of \['0', '1'\]"):
      glue.Glue("sst2", root).examples("train")
    _write(path, ["text\tlabel", "good\t1"])
    with self.assertRaisesRegex(
        errors.DataError, r"train.tsv, line 1: there is no column "
        r"'sentence'; the columns are \['text', 'label'\]"):
      glue.Glue("sst2", root).examples("train")
    with self.assertRaisesRegex(FileNotFoundError, r"looked for \['dev.tsv'\]"):
      glue.Glue("sst2", root).examples("dev")
    with self.assertRaisesRegex(FileNotFoundError,
                                r"\['dev_matched.tsv', 'dev_sample.json'\]"):
      glue.Glue("mnli", root).examples("dev")

  def test_byte_order_mark_and_empty_sentence_accepted(self):
    # An empty sentence is refused in a user's file, read in a GLUE file (as
    # GLUE tools do); the byte-order mark is dropped in both.
    root = os.path.join(self.get_temp_dir(), "lenient")
    path = os.path.join(root, "MRPC", "dev.tsv")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
      f.write(b"\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
              b"1\t1\t2\t\"A\" b.\t\r\n0\t3\t4\tc\td\r\n")
    self.assertEqual(_as_lists("mrpc", "dev", root),
                     (["\"A\" b.", "c"], ["", "d"], [1, 0]))
    with self.assertRaisesRegex(errors.DataError,
                                "line 2: the text '#2 String' is empty"):
      text_classification_files.read_text_classification(
          path, text_column="#1 String", text_b_column="#2 String",
          label_column="Quality")

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "Unknown GLUE task 'cola'"):
      glue.Glue("cola", _GLUE)
    with self.assertRaisesRegex(ValueError,
                                "Unknown split 'test' for GLUE sst2"):
      glue.Glue("sst2", _GLUE).examples("test")
    with self.assertRaisesRegex(ValueError, "source must be one of"):
      glue.Glue("sst2", _GLUE, source="csv")
    with self.assertRaisesRegex(ValueError, "needs data_dir"):
      glue.Glue("sst2", source="tsv")
    root = os.path.join(self.get_temp_dir(), "mnli_json")
    with self.assertRaisesRegex(ValueError, "has only MNLI"):
      glue.Glue("mnli", root, source="mnli_json").examples(
          "validation_mismatched")
    self.assertEqual(glue.canonical_split("mnli", "dev"),
                     "validation_matched")

  def test_sizes_and_what_describes_it(self):
    dataset = glue.Glue("sst2")
    self.assertFalse(dataset.in_memory)
    self.assertEqual(dataset.num_train_examples(), 67349)  # TFDS size.
    self.assertEqual((dataset.name, dataset.fingerprint_name),
                     ("glue/sst2", "sst2"))
    self.assertIn("tensorflow-datasets", dataset.describe("validation"))

  @pytest.mark.large
  def test_tfds_with_mock_data(self):
    # mock_data generates examples from the builders' feature specs, offline.
    with tfds.testing.mock_data(num_examples=4):
      for task, pair in (("sst2", False), ("mrpc", True), ("mnli", True)):
        dataset = glue.Glue(task, source="tfds")
        stream = dataset.tfds_examples("validation")
        self.assertEqual(
            stream.element_spec, {
                "sentence_a": tf.TensorSpec([], tf.string),
                "sentence_b": tf.TensorSpec([], tf.string),
                "label": tf.TensorSpec([], tf.int32),
            })
        sentences_a, sentences_b, labels = _as_lists(task, "validation",
                                                     source="tfds")
        self.assertLen(labels, 4)
        self.assertTrue(all(0 <= label < len(dataset.label_names)
                            for label in labels))
        self.assertTrue(any(sentences_a), task)
        self.assertEqual(any(sentences_b), pair, task)
      # No data_dir: 'auto' means tensorflow-datasets.
      self.assertLen(glue.Glue("mnli").examples("train"), 4)


if __name__ == "__main__":
  tf.test.main()
