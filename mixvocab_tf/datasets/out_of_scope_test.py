"""Tests of the out-of-scope texts and examples."""

import tensorflow as tf

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import out_of_scope


class OutOfScopeTest(tf.test.TestCase):

  def test_builtin_sentences_are_prose_of_the_pretraining_blocks(self):
    pools = out_of_scope.corpus_sentences()
    self.assertGreater(len(pools[False]), 10000)
    self.assertGreater(len(pools[True]), out_of_scope.HELD_OUT)
    texts = out_of_scope.builtin_texts(200)
    self.assertLen(set(texts), 200)
    self.assertEqual(texts, out_of_scope.builtin_texts(200))
    self.assertNotEqual(texts, out_of_scope.builtin_texts(200, seed=1))
    for text in texts:
      words = text.split()
      self.assertBetween(len(words), 3, 20)
      self.assertEqual(text, text.lower())
      self.assertNotRegex(text, r"[.,;:!?\"]")
    # The report's sentences come from blocks no run trains on.
    held_out = out_of_scope.held_out_texts()
    self.assertLen(held_out, out_of_scope.HELD_OUT)
    self.assertEmpty(set(held_out) & set(pools[False]) - set(pools[True]))
    with self.assertRaisesRegex(ValueError, "sentences of 3-20 words"):
      out_of_scope.builtin_texts(10 ** 6)

  def test_count_follows_trains_largest_label_within_bounds(self):
    self.assertEqual(out_of_scope.count_for(["a"] * 30 + ["b"]), 1000)
    self.assertEqual(out_of_scope.count_for(["a"] * 1900 + ["b"] * 5), 1900)
    self.assertEqual(out_of_scope.count_for(["a"] * 60000), 5000)
    self.assertEqual(out_of_scope.count_for([]), 1000)

  def test_texts_join_train_with_their_label_after_its_examples(self):
    train = examples_lib.IntentSlotExamples(
        path="train", words=[["play", "jazz"]], tags=[["O", "B-genre"]],
        intents=["PlayMusic"], line_numbers=[1])
    joined = out_of_scope.intent_slot_examples(train, ["we the people"])
    self.assertEqual(joined.words, [["play", "jazz"], ["we", "the", "people"]])
    self.assertEqual(joined.tags[1], ["O", "O", "O"])
    self.assertEqual(joined.intents, ["PlayMusic", "out_of_scope"])
    self.assertEqual(joined.line_numbers, [1, 1])
    text = examples_lib.TextClassificationExamples(
        path="train.csv", texts_a=["great film"], texts_b=None,
        labels=["positive"], line_numbers=[2])
    joined = out_of_scope.text_classification_examples(text, ["we the people"])
    self.assertEqual(joined.labels, ["positive", "out_of_scope"])
    pairs = examples_lib.TextClassificationExamples(
        path="train.csv", texts_a=["a"], texts_b=["b"], labels=["x"],
        line_numbers=[2])
    with self.assertRaisesRegex(ValueError, "pairs"):
      out_of_scope.text_classification_examples(pairs, ["c"])

  def test_off_topic_counts_the_label_and_confident_others(self):
    records = [{"intent": "out_of_scope", "score": 0.99},
               {"intent": "PlayMusic", "score": 0.95},
               {"intent": "PlayMusic", "score": 0.5}]
    self.assertEqual(out_of_scope.off_topic(records),
                     {"texts": 3, "out_of_scope": 1, "confident": 1})


if __name__ == "__main__":
  tf.test.main()
