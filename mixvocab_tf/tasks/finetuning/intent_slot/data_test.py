"""Tests for intent_slot.data: labels, first-piece features, decoding."""

import pytest
import os

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import text
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece
from mixvocab_testing.datasets_testing import write_goo

# The package's own copy of SNIPS (the Goo et al. split).
_SNIPS = os.path.dirname(assets.snips_dir("train"))


def _first_batch(dataset, featurize, size):
  return next(dataset.map(featurize).batch(size).as_numpy_iterator())


def _teacher_vocab():
  return vocab_lib.load_vocab(assets.default_teacher_vocab())


class SnipsLabelsTest(tf.test.TestCase):

  def test_build_save_load(self):
    train = intent_slot_files.read_intent_slot(os.path.join(_SNIPS, "train"))
    labels = intent_slot_data.IntentSlotLabels.from_examples(train)
    self.assertEqual(labels.num_intents, 7)
    self.assertEqual(labels.num_slots, 72)
    self.assertEqual(labels.slots[0], "O")
    self.assertEqual(list(labels.slots[1:]), sorted(labels.slots[1:]))
    self.assertEqual(list(labels.intents), sorted(labels.intents))
    path = os.path.join(self.get_temp_dir(), "model", "snips_labels.json")
    labels.save(path)
    self.assertEqual(intent_slot_data.IntentSlotLabels.load(path), labels)

  def test_labels_train_lacks_are_ignored_ids_not_crashes(self):
    labels = intent_slot_data.IntentSlotLabels(["A", "B"], ["O", "B-x", "I-x"])
    path = write_goo(os.path.join(self.get_temp_dir(), "valid"),
                     ["a b c", "d"], ["B-x B-new I-new", "O"], ["A", "C"])
    with self.assertLogs(level="WARNING") as logs:
      slot_ids, intent_ids, num_unseen = labels.encode(
          intent_slot_files.read_intent_slot(path))
    self.assertEqual(slot_ids, [[1, -1, -1], [0]])
    self.assertEqual(intent_ids, [0, -1])
    self.assertEqual(num_unseen, 2)
    self.assertIn("1 intents {'C': 1}", logs.output[0])
    # The featurized words with an unseen tag carry no slot loss.
    featurize = intent_slot_data.intent_slot_featurizer(assets.default_student_vocab(), 8)
    example = next(iter(intent_slot_data.make_intent_slot_dataset(
        intent_slot_files.read_intent_slot(path), labels)))
    features = featurize(example)
    self.assertEqual(features["slot_weights"].numpy().tolist(),
                     [0, 1, 0, 0, 0, 0, 0, 0])
    self.assertEqual(int(features["intent_id"]), 0)

  def test_bad_label_files(self):
    with self.assertRaisesRegex(ValueError, "must start with 'O'"):
      intent_slot_data.IntentSlotLabels(["A"], ["B-x", "O"])
    path = os.path.join(self.get_temp_dir(), "bad.json")
    with open(path, "w") as f:
      f.write('{"intents": ["A"]}')
    with self.assertRaisesRegex(ValueError, "is not a SNIPS label file"):
      intent_slot_data.IntentSlotLabels.load(path)


class FeaturizerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.vocab = _teacher_vocab()
    train = intent_slot_files.read_intent_slot(os.path.join(_SNIPS, "train"))
    cls.labels = intent_slot_data.IntentSlotLabels.from_examples(train)
    cls.valid = intent_slot_files.read_intent_slot(os.path.join(_SNIPS, "valid"))
    cls.features = _first_batch(
        intent_slot_data.make_intent_slot_dataset(cls.valid, cls.labels),
        intent_slot_data.intent_slot_featurizer(cls.vocab), 1000)

  def test_shapes_and_dtypes(self):
    f = self.features
    self.assertEqual(f["input_word_ids"].shape, (700, 64))
    self.assertEqual(f["word_start_positions"].shape, (700, 62))
    for key in ("input_word_ids", "input_mask", "input_type_ids", "slot_ids",
                "intent_id", "word_start_positions", "num_words"):
      self.assertEqual(f[key].dtype, np.int32, key)
    self.assertEqual(f["slot_weights"].dtype, np.float32)
    self.assertTrue(
        np.all(f["input_word_ids"][:, 0] == self.vocab.index("[CLS]")))
    lengths = f["input_mask"].sum(axis=1)
    last = f["input_word_ids"][np.arange(700), lengths - 1]
    self.assertTrue(np.all(last == self.vocab.index("[SEP]")))
    pad = f["input_mask"] == 0
    self.assertTrue(
        np.all(f["input_word_ids"][pad] == self.vocab.index("[PAD]")))

  def test_label_on_first_piece_only(self):
    tokenizer, _ = wordpiece.fast_bert_tokenizer(self.vocab)
    num_continuations = 0
    for i in range(700):
      words = self.valid.words[i]
      pieces = tokenizer.tokenize(tf.constant(words)).to_list()
      position = 1
      for word_index, word_pieces in enumerate(pieces):
        gold = self.labels.slots.index(self.valid.tags[i][word_index])
        self.assertEqual(self.features["slot_ids"][i, position], gold)
        self.assertEqual(self.features["slot_weights"][i, position], 1.0)
        for later in range(position + 1, position + len(word_pieces)):
          num_continuations += 1
          self.assertEqual(self.features["slot_ids"][i, later], -1)
          self.assertEqual(self.features["slot_weights"][i, later], 0.0)
        position += len(word_pieces)
      self.assertEqual(self.features["input_mask"][i].sum(), position + 1)
      self.assertEqual(self.features["slot_weights"][i].sum(), len(words))
    # SNIPS has many multi-piece words; the loop above must have checked some.
    self.assertGreater(num_continuations, 200)

  def test_decode_gold_round_trip(self):
    f = self.features
    decoded = intent_slot_data.decode_slot_tags(f["slot_ids"],
                                          f["word_start_positions"],
                                          f["num_words"], self.labels.slots)
    self.assertEqual(decoded, self.valid.tags)
    # Logits decode the same way as ids.
    logits = np.eye(self.labels.num_slots)[np.maximum(f["slot_ids"][:5], 0)]
    self.assertEqual(
        intent_slot_data.decode_slot_tags(logits, f["word_start_positions"][:5],
                                    f["num_words"][:5], self.labels.slots),
        self.valid.tags[:5])

  def test_truncation_and_wordless_pieces(self):
    labels = intent_slot_data.IntentSlotLabels(["A"], ["O", "B-x", "I-x"])
    examples = examples_lib.IntentSlotExamples(
        path="memory", words=[["don't", "\u0300", "unaffable", "x", "y"]],
        tags=[["B-x", "I-x", "O", "B-x", "O"]], intents=["A"])
    featurize = intent_slot_data.intent_slot_featurizer(
        self.vocab, seq_length=9, max_words=4)
    f = _first_batch(intent_slot_data.make_intent_slot_dataset(examples, labels),
                     featurize, 1)
    # Pieces: [CLS] don ' t [UNK] una ##ffa ##ble [SEP]; "x" and "y" are cut.
    unk = self.vocab.index("[UNK]")
    self.assertEqual(f["input_word_ids"][0, 4], unk)
    self.assertEqual(f["input_mask"][0].tolist(), [1] * 9)
    self.assertEqual(f["word_start_positions"][0].tolist(), [1, 4, 5, -1])
    self.assertEqual(f["slot_ids"][0].tolist(),
                     [-1, 1, -1, -1, 2, 0, -1, -1, -1])
    self.assertEqual(f["num_words"][0], 5)
    decoded = intent_slot_data.decode_slot_tags(f["slot_ids"],
                                          f["word_start_positions"],
                                          f["num_words"], labels.slots)
    self.assertEqual(decoded, [["B-x", "I-x", "O", "O", "O"]])

  def test_batch_featurizer_gives_the_same_features(self):
    # SNIPS valid, then queries that cut pieces and words, wordless pieces,
    # a tag the labels lack, a query of one word, in batches that split them.
    labels = intent_slot_data.IntentSlotLabels(["A", "B"], ["O", "B-x", "I-x"])
    odd = examples_lib.IntentSlotExamples(
        path="memory",
        words=[["don't", "\u0300", "unaffable", "x", "y"], ["x"],
               ["a", "b", "c", "d", "e", "f", "g"], ["\u200b", "\x00", "z"]],
        tags=[["B-x", "I-x", "O", "B-x", "O"], ["B-new"],
              ["O"] * 7, ["B-x", "O", "I-x"]],
        intents=["A", "B", "A", "C"])
    for examples, labels_, kwargs, batch_size in [
        (self.valid, self.labels, {}, 256),
        (odd, labels, dict(seq_length=9, max_words=4), 3),
        (odd, labels, dict(seq_length=6), 1),
        (odd, labels, dict(seq_length=30, max_words=2), 4)]:
      one_by_one = _first_batch(
          intent_slot_data.make_intent_slot_dataset(examples, labels_),
          intent_slot_data.intent_slot_featurizer(self.vocab, **kwargs), 1000)
      batched = intent_slot_data.featurize_examples(
          examples, labels_,
          intent_slot_data.intent_slot_batch_featurizer(self.vocab, **kwargs),
          batch_size)
      self.assertEqual(sorted(batched), sorted(one_by_one))
      for key, value in one_by_one.items():
        self.assertEqual(batched[key].dtype, value.dtype, key)
        self.assertAllEqual(batched[key], value, msg=f"{key} {kwargs}")

  @pytest.mark.large
  def test_student_vocab_and_mixed_vocab_tokenizer(self):
    try:
      vocab = assets.default_student_vocab()
    except FileNotFoundError:
      self.skipTest("mixvocab_tf/assets/student_vocab.txt is not built yet.")
    examples = examples_lib.IntentSlotExamples(
        path="v", words=self.valid.words[:50], tags=self.valid.tags[:50],
        intents=self.valid.intents[:50])
    dataset = intent_slot_data.make_intent_slot_dataset(examples, self.labels)
    f = _first_batch(dataset, intent_slot_data.intent_slot_featurizer(vocab), 50)
    self.assertEqual(
        intent_slot_data.decode_slot_tags(f["slot_ids"], f["word_start_positions"],
                                    f["num_words"], self.labels.slots),
        examples.tags)
    self.assertLess(f["input_word_ids"].max(), len(vocab_lib.load_vocab(vocab)))
    # The pretraining tokenizer, all-student, gives the same pieces per word.
    # (Its teacher table is unused at p_student=1; the small vocab builds fast.)
    tokenizer = text.MixedVocabTokenizer(vocab, vocab, p_student=1.0)
    def word_pieces(words):  # [words, (sub-words), (pieces)] -> [words, (p)]
      return tokenizer.tokenize_words(words)[0].merge_dims(1, 2)

    mixed = intent_slot_data.intent_slot_featurizer(vocab, word_tokenizer=word_pieces)
    g = _first_batch(dataset, mixed, 50)
    for key in f:
      self.assertAllEqual(f[key], g[key], msg=key)

  @pytest.mark.large
  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "received 2, expected at least 3"):
      intent_slot_data.intent_slot_featurizer(self.vocab, seq_length=2)
    with self.assertRaisesRegex(ValueError,
                                r"lacks the required tokens \['\[PAD\]'"):
      wordpiece.fast_bert_tokenizer(["[UNK]", "[CLS]", "[SEP]", "a"])
    with self.assertRaisesRegex(ValueError, "disagree on the batch size"):
      intent_slot_data.decode_slot_tags(np.zeros([2, 4]), np.zeros([3, 2]),
                                  np.ones([2]), ["O"])


if __name__ == "__main__":
  tf.test.main()
