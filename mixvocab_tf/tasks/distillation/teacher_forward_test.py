"""Tests for the teachers' forward passes that fill the teacher-output cache."""

from unittest import mock

import numpy as np
import tensorflow as tf
import tf_keras

from mixvocab_tf import models
from mixvocab_tf.core import op_threads
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.networks import plain_bert_encoder
from mixvocab_tf.tasks.distillation import teacher_cache
from mixvocab_tf.tasks.distillation import teacher_forward
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data

_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "play", "some",
          "jazz", "music", "in", "the", "kitchen", "book", "a", "table", "for",
          "two", "what", "weather", "like", "##s", "great", "film", "bad"]
_SEQ_LENGTH = 8


def _normal(shape, seed=0):
  return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _encoder():
  encoder = plain_bert_encoder.PlainBertEncoder(
      vocab_size=len(_VOCAB), hidden_size=16, num_layers=1,
      num_attention_heads=2, inner_dim=32, max_sequence_length=_SEQ_LENGTH)
  # Fresh weights (stddev 0.02) give outputs too alike for a mix-up of
  # examples to show.
  table = encoder.get_embedding_table()
  table.assign(_normal(table.shape))
  return encoder


def _randomize_heads(*layers):
  for seed, layer in enumerate(layers):
    layer.kernel.assign(_normal(layer.kernel.shape, seed))


class TeacherForwardTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    # The package's layers draw from tf_keras's generator: seeding only
    # tf.keras left their weights to whatever tests ran before.
    tf_keras.utils.set_random_seed(0)

  def test_sentence_logits_match_each_example_run_alone(self):
    model = models.SentenceClassifier(_encoder(), num_classes=3)
    _randomize_heads(model.classifier)
    sentences = ["great film", "what a bad film", "film",
                 "the weather in the kitchen", "play some jazz music",
                 "a table for two"]
    featurize = text_classification_data.text_classification_featurizer(_VOCAB, _SEQ_LENGTH, pair=False)
    features = featurize({"sentence_a": tf.constant(sentences),
                          "sentence_b": tf.constant([""] * len(sentences))})
    direct = model(features, training=False)
    # Length-sorted batches of 2, cut to their longest example, written back
    # in data order.
    logits, pooled = teacher_forward.compute_teacher_logits(
        model, sentences, [""] * len(sentences), False, _VOCAB,
        seq_length=_SEQ_LENGTH, batch_size=2, with_pooled=True)
    self.assertAllClose(logits, direct["logits"], atol=1e-5)
    self.assertAllClose(pooled, direct["pooled_output"], atol=1e-5)
    self.assertGreater(np.ptp(logits[:, 0]), 1e-3)
    only_logits = teacher_forward.compute_teacher_logits(
        model, sentences, [""] * len(sentences), False, _VOCAB,
        seq_length=_SEQ_LENGTH, batch_size=4)
    self.assertAllClose(only_logits, logits, atol=1e-5)

  def test_snips_outputs_are_read_at_each_words_first_piece(self):
    words = [["play", "jazz"], ["book", "a", "table", "for", "two"],
             ["what", "weather", "like", "in", "the", "kitchen", "tables"],
             ["music"]]
    tags = [["O", "B-genre"], ["O", "O", "O", "O", "B-party"],
            ["O", "O", "O", "O", "O", "B-room", "I-room"], ["B-genre"]]
    examples = examples_lib.IntentSlotExamples(
        path=None, words=words, tags=tags,
        intents=["PlayMusic", "Book", "Weather", "PlayMusic"])
    labels = intent_slot_data.IntentSlotLabels.from_examples(examples)
    model = models.JointIntentSlotModel(
        _encoder(), num_intents=labels.num_intents,
        num_slots=labels.num_slots)
    _randomize_heads(model.intent_classifier, model.slot_classifier)
    featurize = intent_slot_data.intent_slot_featurizer(_VOCAB, _SEQ_LENGTH)
    features = next(iter(intent_slot_data.make_intent_slot_dataset(examples, labels).map(
        featurize).batch(len(words))))
    direct = model(features, training=False)
    sequence = model.encoder_network(features, training=False)[
        "sequence_output"].numpy()

    outputs = teacher_forward.compute_teacher_outputs(
        model, examples, labels, _VOCAB, seq_length=_SEQ_LENGTH,
        batch_size=3, fingerprint={"data": "x"}, with_hidden=True)

    self.assertIsInstance(outputs, teacher_cache.TeacherOutputs)
    self.assertEqual(outputs.fingerprint, {"data": "x"})
    self.assertAllClose(outputs.intent_logits, direct["intent_logits"],
                        atol=1e-5)
    self.assertGreater(np.ptp(outputs.intent_logits[:, 0]), 1e-3)
    self.assertAllEqual(outputs.row_splits,
                        np.cumsum([0] + [len(w) for w in words]))
    # "tables" (two pieces) no longer fits in 8 tokens: no first piece.
    self.assertEqual(outputs.word_valid.tolist(),
                     [True] * 2 + [True] * 5 + [True] * 6 + [False] + [True])
    slot_logits = direct["slot_logits"].numpy()
    for i, query in enumerate(words):
      rows = slice(outputs.row_splits[i], outputs.row_splits[i + 1])
      valid = outputs.word_valid[rows]
      positions = features["word_start_positions"][i].numpy()[:len(query)]
      positions = positions[:valid.sum()]
      self.assertAllClose(outputs.slot_logits[rows][valid],
                          slot_logits[i, positions], atol=1e-5)
      self.assertAllClose(outputs.word_hidden[rows][valid],
                          sequence[i, positions], atol=1e-2)

  def test_batches_side_by_side_give_the_same_outputs_in_data_order(self):
    # Trainer.concurrent_ops = 2: two batches at a time, in threads; every
    # example's outputs land at its own index, the same bits as one at a
    # time.
    words = [["play", "some", "jazz", "music"], ["book", "a", "table"],
             ["what", "weather"], ["music"], ["play", "jazz", "in", "the",
                                              "kitchen"], ["a", "table"]]
    examples = examples_lib.IntentSlotExamples(
        path=None, words=words, tags=[["O"] * len(w) for w in words],
        intents=["PlayMusic", "Book", "Weather", "PlayMusic", "PlayMusic",
                 "Book"])
    labels = intent_slot_data.IntentSlotLabels.from_examples(examples)
    model = models.JointIntentSlotModel(
        _encoder(), num_intents=labels.num_intents,
        num_slots=labels.num_slots)
    _randomize_heads(model.intent_classifier, model.slot_classifier)
    classifier = models.SentenceClassifier(_encoder(), num_classes=3)
    _randomize_heads(classifier.classifier)
    sentences = [" ".join(w) for w in words]

    def run():
      outputs = teacher_forward.compute_teacher_outputs(
          model, examples, labels, _VOCAB, seq_length=_SEQ_LENGTH,
          batch_size=1, with_hidden=True)
      logits, pooled = teacher_forward.compute_teacher_logits(
          classifier, sentences, [""] * len(sentences), False, _VOCAB,
          seq_length=_SEQ_LENGTH, batch_size=1, with_pooled=True)
      return (outputs.intent_logits, outputs.slot_logits, outputs.word_hidden,
              outputs.word_valid, logits, pooled)

    one_at_a_time = run()
    calls = []
    side_by_side = op_threads.map_side_by_side
    def counted(fn, items):
      calls.append(op_threads.concurrent_ops())
      return side_by_side(fn, items)
    with mock.patch.object(op_threads, "_concurrent_ops", 2), \
        mock.patch.object(op_threads, "map_side_by_side", counted):
      two_at_a_time = run()
    self.assertEqual(calls, [2, 2])
    for outputs in one_at_a_time[1], one_at_a_time[4]:
      self.assertGreater(np.ptp(outputs), 1e-3)  # Examples differ.
    for a, b in zip(one_at_a_time, two_at_a_time):
      self.assertAllEqual(a, b)


if __name__ == "__main__":
  tf.test.main()
