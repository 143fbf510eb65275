"""ServingTokenizer gives the training featurizers' ids with TFLite-able ops."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.export import serving_tokenizer
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data

# Punctuation inside words, accents, a NUL and a zero-width space (words
# without pieces), a word over 100 bytes, CJK, emoji, several spaces.
TRICKY = [
    "don't stop me now", "Play Beyoncé's “Halo”, ok?", "a \x00 b \u200b c",
    "x" * 150 + " tail", "東京 の 天気 😀", "  many   spaces  ", "",
    "one",
]


@pytest.fixture(scope="module")
def tokenizer():
  return serving_tokenizer.ServingTokenizer(assets.default_student_vocab())


def test_row_ids_match_value_rowids_with_empty_rows():
  ragged = tf.ragged.constant([[], [1, 2], [], [], [3], []])
  splits = tf.cast(ragged.row_splits, tf.int32)
  got = serving_tokenizer.row_ids(splits, tf.size(ragged.flat_values))
  np.testing.assert_array_equal(got, ragged.value_rowids())


def _snips_features(queries, seq_length):
  words = tf.ragged.constant([q.split() for q in queries])
  featurize = intent_slot_data.intent_slot_featurizer(assets.default_student_vocab(),
                                          seq_length)
  dataset = tf.data.Dataset.from_tensor_slices({
      "words": words,
      "slot_labels": tf.zeros_like(words, tf.int32),
      "intent_id": tf.zeros([len(queries)], tf.int32)})
  return next(iter(dataset.map(featurize).batch(len(queries))))


@pytest.mark.large
@pytest.mark.parametrize("seq_length", [64, 8])
def test_pack_words_equals_snips_featurizer(tokenizer, seq_length):
  examples = intent_slot_files.read_intent_slot(assets.snips_dir("valid"))
  queries = [" ".join(w) for w in examples.words[:40]] + TRICKY
  features, words = tokenizer.pack_words(tf.constant(queries), seq_length)
  expected = _snips_features(queries, seq_length)
  length = features["input_word_ids"].shape[1]
  assert length <= seq_length
  positions = np.full([len(queries), seq_length - 2], -1)
  positions[words["row"].numpy(), words["index"].numpy()] = (
      words["positions"].numpy())
  for key in intent_slot_data.MODEL_INPUT_KEYS:
    np.testing.assert_array_equal(features[key], expected[key][:, :length])
  assert not np.any(expected["input_mask"][:, length:])
  np.testing.assert_array_equal(positions, expected["word_start_positions"])
  np.testing.assert_array_equal(
      words["num_words"], np.minimum(expected["num_words"], seq_length - 2))


def test_split_words_keeps_offsets_and_at_most_max_words(tokenizer):
  text = ["a bb  ccc", "", "x " * 1000]
  words = tokenizer.split_words(tf.constant(text), max_words=3)
  np.testing.assert_array_equal(words["num_words"], [3, 0, 3])
  np.testing.assert_array_equal(words["row"], [0, 0, 0, 2, 2, 2])
  np.testing.assert_array_equal(words["starts"], [0, 2, 6, 0, 2, 4])
  np.testing.assert_array_equal(words["ends"], [1, 4, 9, 1, 3, 5])
  padded = serving_tokenizer.padded_words(words, 3).numpy()
  assert padded.tolist() == [[b"a", b"bb", b"ccc"], [b"", b"", b""],
                             [b"x", b"x", b"x"]]


@pytest.mark.parametrize("pair,seq_length", [(False, 128), (True, 128),
                                             (True, 9), (False, 5)])
def test_pack_sentences_equals_glue_featurizer(tokenizer, pair, seq_length):
  examples = intent_slot_files.read_intent_slot(assets.snips_dir("valid"))
  sentences = [" ".join(w) for w in examples.words[:12]] + TRICKY
  # Pairs of every length relation: A longer, B longer, equal, empty.
  sentences_b = sentences[3:] + sentences[:3]
  featurize = text_classification_data.text_classification_featurizer(assets.default_student_vocab(),
                                        seq_length, pair=pair)
  want = featurize({"sentence_a": tf.constant(sentences),
                    "sentence_b": tf.constant(sentences_b)})
  got = tokenizer.pack_sentences(tf.constant(sentences),
                                 tf.constant(sentences_b) if pair else None,
                                 seq_length)
  length = got["input_word_ids"].shape[1]
  for key in text_classification_data.MODEL_INPUT_KEYS:
    np.testing.assert_array_equal(got[key], want[key][:, :length])
  assert not np.any(want["input_mask"][:, length:])


def test_vocab_file_is_an_asset():
  tokenizer = serving_tokenizer.ServingTokenizer(
      assets.default_student_vocab())
  assert isinstance(tokenizer.vocab_file, tf.saved_model.Asset)
  from_list = serving_tokenizer.ServingTokenizer(tokenizer.tokens)
  assert from_list.vocab_file is None
  assert from_list.vocab_size == tokenizer.vocab_size
