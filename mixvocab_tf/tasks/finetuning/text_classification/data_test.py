"""Tests for text_classification.data: packing texts and pairs."""

import os

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.datasets import glue
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_testing import testing_utils

_GLUE = testing_utils.shared_data("glue")
# The development machines' GLUE files; a user's clone has none.
needs_glue = pytest.mark.skipif(not os.path.isdir(_GLUE),
                                reason=f"no GLUE data at {_GLUE}")

def _glue_examples(task, split):
  """A GLUE split as the task feeds it to the featurizer."""
  examples = glue.Glue(task, _GLUE).examples(split)
  return tf.data.Dataset.from_tensor_slices({
      "sentence_a": examples.texts_a,
      "sentence_b": examples.texts_b or [""] * len(examples)})


def _truncate_seq_pair(len_a, len_b, budget):
  """Lengths after BERT's `_truncate_seq_pair` (cuts the longer one first)."""
  while len_a + len_b > budget:
    if len_a > len_b:
      len_a -= 1
    else:
      len_b -= 1
  return len_a, len_b


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
    dataset = _glue_examples("mrpc", "dev").take(8)
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
    dataset = _glue_examples("sst2", "dev")
    featurize = text_classification_data.text_classification_featurizer(vocab, seq_length=32, pair=False)
    f = next(dataset.batch(64).map(featurize).as_numpy_iterator())
    self.assertLess(f["input_word_ids"].max(), size)
    self.assertTrue(np.all(f["input_mask"].sum(axis=1) > 2))

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "room for 3 special tokens"):
      text_classification_data.text_classification_featurizer(self.vocab, seq_length=3)


if __name__ == "__main__":
  tf.test.main()
