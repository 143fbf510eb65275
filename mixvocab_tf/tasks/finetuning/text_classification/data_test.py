"""Tests for text_classification.data: TSV, MNLI JSON and TFDS sources, and pair packing."""

import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from mixvocab_tf import assets
from mixvocab_tf.tasks.finetuning import user_data
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.text import vocab as vocab_lib
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


def _as_lists(dataset):
  rows = list(dataset.as_numpy_iterator())
  return ([r["sentence_a"].decode() for r in rows
          ], [r["sentence_b"].decode() for r in rows],
          [int(r["label"]) for r in rows])


def _truncate_seq_pair(len_a, len_b, budget):
  """Lengths after BERT's `_truncate_seq_pair` (cuts the longer one first)."""
  while len_a + len_b > budget:
    if len_a > len_b:
      len_a -= 1
    else:
      len_b -= 1
  return len_a, len_b


class LoadGlueTest(tf.test.TestCase):

  @needs_glue
  def test_real_dev_files(self):
    expected = {"sst2": 872, "mrpc": 408, "mnli": 1000}
    for task, count in expected.items():
      dataset, names = text_classification_data.load_glue(task, "dev", _GLUE)
      self.assertEqual(dataset.element_spec["label"].dtype, tf.int32)
      sentences_a, sentences_b, labels = _as_lists(dataset)
      self.assertLen(labels, count, task)
      self.assertEqual(set(labels), set(range(len(names))), task)
      self.assertEqual(all(sentences_b), text_classification_data.is_pair_task(task), task)
    self.assertEqual(names, ("entailment", "neutral", "contradiction"))

  @needs_glue
  def test_real_first_rows(self):
    sst2, _ = text_classification_data.load_glue("SST-2", "validation", _GLUE)
    first = next(sst2.as_numpy_iterator())
    self.assertEqual(first["sentence_a"],
                     b"it 's a charming and often affecting journey . ")
    self.assertEqual((first["sentence_b"], first["label"]), (b"", 1))
    mrpc, names = text_classification_data.load_glue("mrpc", "dev", _GLUE, source="tsv")
    first = next(mrpc.as_numpy_iterator())
    # A leading quote is text, not CSV quoting.
    self.assertEqual(first["sentence_b"][:20], b"\" The foodservice pi")
    self.assertEqual(names[first["label"]], "equivalent")
    mnli, _ = text_classification_data.load_glue(
        "mnli", "validation_matched", _GLUE, source="mnli_json")
    first = next(mnli.as_numpy_iterator())
    self.assertEqual(
        (first["sentence_a"], first["sentence_b"], first["label"]),
        (b"Salt kept the town fed.", b"Salt kept the town thriving.", 0))

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
    dataset, _ = text_classification_data.load_glue("mnli", "train", root)
    self.assertEqual(_as_lists(dataset), (["A man \"walks\".", "It rains."],
                                          ["He moves.", "It is dry."], [0, 2]))
    # A task directory works as data_dir too.
    dataset, _ = text_classification_data.load_glue(
        "mnli", "dev_mismatched", os.path.join(root, "MNLI"), source="tsv")
    self.assertEqual(_as_lists(dataset), (["P"], ["H"], [1]))

  def test_bad_files(self):
    # The reader of a user's files checks GLUE files: its messages, its
    # DataError (a ValueError).
    root = os.path.join(self.get_temp_dir(), "bad")
    path = os.path.join(root, "SST-2", "train.tsv")
    _write(path, ["sentence\tlabel", "good\t1", "bad\t1\textra"])
    with self.assertRaisesRegex(
        user_data.DataError, r"train.tsv, line 3: the row has 3 fields: "
        r"\['bad', '1', 'extra'\]. Expected 2 fields"):
      text_classification_data.load_glue("sst2", "train", root)
    _write(path, ["sentence\tlabel", "good\t2"])
    with self.assertRaisesRegex(
        user_data.DataError, r"train.tsv, line 2: the label '2' is not a "
        r"GLUE sst2 label. Expected one of \['0', '1'\]"):
      text_classification_data.load_glue("sst2", "train", root)
    _write(path, ["text\tlabel", "good\t1"])
    with self.assertRaisesRegex(
        user_data.DataError, r"train.tsv, line 1: there is no column "
        r"'sentence'; the columns are \['text', 'label'\]"):
      text_classification_data.load_glue("sst2", "train", root)
    with self.assertRaisesRegex(FileNotFoundError, r"looked for \['dev.tsv'\]"):
      text_classification_data.load_glue("sst2", "dev", root)
    with self.assertRaisesRegex(FileNotFoundError,
                                r"\['dev_matched.tsv', 'dev_sample.json'\]"):
      text_classification_data.load_glue("mnli", "dev", root)

  def test_byte_order_mark_and_empty_sentence_accepted(self):
    # Refused in a user's file, read in a GLUE file (as GLUE tools do).
    root = os.path.join(self.get_temp_dir(), "lenient")
    path = os.path.join(root, "MRPC", "dev.tsv")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
      f.write(b"\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
              b"1\t1\t2\t\"A\" b.\t\r\n0\t3\t4\tc\td\r\n")
    dataset, _ = text_classification_data.load_glue("mrpc", "dev", root)
    self.assertEqual(_as_lists(dataset), (["\"A\" b.", "c"], ["", "d"], [1, 0]))
    with self.assertRaisesRegex(user_data.DataError, "byte-order mark"):
      user_data.read_text_classification(path, text_column="#1 String",
                                         text_b_column="#2 String",
                                         label_column="Quality")

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "Unknown GLUE task 'cola'"):
      text_classification_data.load_glue("cola", "train", _GLUE)
    with self.assertRaisesRegex(ValueError,
                                "Unknown split 'test' for GLUE sst2"):
      text_classification_data.load_glue("sst2", "test", _GLUE)
    with self.assertRaisesRegex(ValueError, "source must be one of"):
      text_classification_data.load_glue("sst2", "train", _GLUE, source="csv")
    with self.assertRaisesRegex(ValueError, "has only MNLI"):
      text_classification_data.load_glue(
          "mnli", "validation_mismatched", _GLUE, source="mnli_json")
    self.assertEqual(text_classification_data.canonical_split("mnli", "dev"),
                     "validation_matched")

  def test_tfds_with_mock_data(self):
    # mock_data generates examples from the builders' feature specs, offline.
    with tfds.testing.mock_data(num_examples=4):
      for task, pair in (("sst2", False), ("mrpc", True), ("mnli", True)):
        dataset, names = text_classification_data.load_glue(task, "validation", source="tfds")
        self.assertEqual(names, text_classification_data.LABEL_NAMES[task])
        self.assertEqual(
            dataset.element_spec, {
                "sentence_a": tf.TensorSpec([], tf.string),
                "sentence_b": tf.TensorSpec([], tf.string),
                "label": tf.TensorSpec([], tf.int32),
            })
        sentences_a, sentences_b, labels = _as_lists(dataset)
        self.assertLen(labels, 4)
        self.assertTrue(all(0 <= label < len(names) for label in labels))
        self.assertTrue(any(sentences_a), task)
        self.assertEqual(any(sentences_b), pair, task)
      # No data_dir: 'auto' means tensorflow-datasets.
      dataset, _ = text_classification_data.load_glue("mnli", "train")
      self.assertLen(list(dataset), 4)


class GlueFeaturizerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.vocab = vocab_lib.load_vocab(assets.default_teacher_vocab())
    cls.ids = {t: cls.vocab.index(t) for t in ("[CLS]", "[SEP]", "[PAD]")}

  def test_pair_packing(self):
    featurize = text_classification_data.text_classification_featurizer(self.vocab, seq_length=12)
    f = featurize({
        "sentence_a": tf.constant("Hello world"),
        "sentence_b": tf.constant("unaffable"),
        "label": tf.constant(2, tf.int64)
    })
    cls, sep, pad = self.ids["[CLS]"], self.ids["[SEP]"], self.ids["[PAD]"]
    hello, world = self.vocab.index("hello"), self.vocab.index("world")
    una = [self.vocab.index(t) for t in ("una", "##ffa", "##ble")]
    self.assertAllEqual(f["input_word_ids"],
                        [cls, hello, world, sep] + una + [sep] + [pad] * 4)
    self.assertAllEqual(f["input_type_ids"], [0] * 4 + [1] * 4 + [0] * 4)
    self.assertAllEqual(f["input_mask"], [1] * 8 + [0] * 4)
    self.assertEqual(f["label"].dtype, tf.int32)
    self.assertEqual(int(f["label"]), 2)

  def test_single_sentence_ignores_b(self):
    featurize = text_classification_data.text_classification_featurizer(self.vocab, seq_length=6, pair=False)
    f = featurize({
        "sentence_a": tf.constant(["a b c d e", "a"]),
        "sentence_b": tf.constant(["x", "y"])
    })
    cls, sep, pad = self.ids["[CLS]"], self.ids["[SEP]"], self.ids["[PAD]"]
    a, b, c, d = (self.vocab.index(t) for t in "abcd")
    self.assertAllEqual(f["input_word_ids"],
                        [[cls, a, b, c, d, sep], [cls, a, sep, pad, pad, pad]])
    self.assertAllEqual(f["input_type_ids"], np.zeros([2, 6]))
    self.assertNotIn("label", f)

  def test_truncates_longer_first_like_bert(self):
    seq_length = 11
    featurize = text_classification_data.text_classification_featurizer(self.vocab, seq_length=seq_length)
    pairs = [(la, lb) for la in range(0, 13) for lb in range(0, 13)]
    # "a" and "b" are one piece each, so word counts are piece counts.
    f = featurize({
        "sentence_a": tf.constant([" ".join(["a"] * la) for la, _ in pairs]),
        "sentence_b": tf.constant([" ".join(["b"] * lb) for _, lb in pairs]),
    })
    a, b = self.vocab.index("a"), self.vocab.index("b")
    kept_a = np.sum(f["input_word_ids"].numpy() == a, axis=1)
    kept_b = np.sum(f["input_word_ids"].numpy() == b, axis=1)
    for i, (la, lb) in enumerate(pairs):
      self.assertEqual((kept_a[i], kept_b[i]),
                       _truncate_seq_pair(la, lb, seq_length - 3), (la, lb))

  @needs_glue
  def test_batched_equals_unbatched(self):
    dataset, _ = text_classification_data.load_glue("mrpc", "dev", _GLUE)
    dataset = dataset.take(8)
    featurize = text_classification_data.text_classification_featurizer(self.vocab, seq_length=24)
    # One example at a time inside tf.data; the whole batch in one eager call.
    one_by_one = next(dataset.map(featurize).batch(8).as_numpy_iterator())
    batched = featurize(next(iter(dataset.batch(8))))
    for key in one_by_one:
      self.assertAllEqual(one_by_one[key], batched[key], msg=key)
    self.assertEqual(one_by_one["input_word_ids"].shape, (8, 24))

  @needs_glue
  def test_student_vocab(self):
    try:
      vocab = assets.default_student_vocab()
    except FileNotFoundError:
      self.skipTest("mixvocab_tf/assets/student_vocab.txt is not built yet.")
    size = len(vocab_lib.load_vocab(vocab))
    dataset, _ = text_classification_data.load_glue("sst2", "dev", _GLUE)
    featurize = text_classification_data.text_classification_featurizer(vocab, seq_length=32, pair=False)
    f = next(dataset.batch(64).map(featurize).as_numpy_iterator())
    self.assertLess(f["input_word_ids"].max(), size)
    self.assertTrue(np.all(f["input_mask"].sum(axis=1) > 2))

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "room for 3 special tokens"):
      text_classification_data.text_classification_featurizer(self.vocab, seq_length=3)


if __name__ == "__main__":
  tf.test.main()
