"""The WordPiece tokenizers of the package agree with each other."""

import os

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece


@pytest.fixture(scope="module")
def tokens():
  return vocab_lib.load_vocab(assets.default_student_vocab())


def test_fast_bert_tokenizer_names_the_packing_tokens(tokens):
  tokenizer, special_ids = wordpiece.fast_bert_tokenizer(tokens)
  assert special_ids == {t: tokens.index(t) for t in wordpiece.PACKING_TOKENS}
  ids = tokenizer.tokenize(tf.constant(["Play Music"])).flat_values.numpy()
  assert [tokens[i] for i in ids] == ["play", "music"]


def test_fast_bert_tokenizer_needs_the_packing_tokens():
  with pytest.raises(ValueError,
                     match=r"lacks the required tokens \[.\[PAD\]."):
    wordpiece.fast_bert_tokenizer(["[UNK]", "[CLS]", "[SEP]", "a"])


def test_the_three_tokenizers_give_the_same_ids(tokens):
  """Fine-tuning, stage I and vocabulary statistics segment words alike.

  On lower-case ASCII words without punctuation, where stage I's own split
  (`MixedVocabTokenizer`) and BERT's agree.
  """
  with open(os.path.join(assets.snips_dir("valid"), "seq.in"),
            encoding="utf-8") as f:
    lines = [line.strip() for line in f
             if line.replace(" ", "").strip().isalnum() and line.islower()
             and line.isascii()]
  lines = lines[:200]
  assert len(lines) == 200
  fast, _ = wordpiece.fast_bert_tokenizer(tokens)
  want = fast.tokenize(tf.constant(lines)).to_list()
  reference = wordpiece.reference_bert_tokenizer(tokens).tokenize(
      tf.constant(lines)).merge_dims(1, 2).to_list()
  assert reference == want
  words = [line.split() for line in lines]
  per_word = wordpiece.word_piece_tokenizer(tokens).tokenize(
      tf.ragged.constant(words).flat_values)
  flat = per_word.flat_values.numpy().tolist()
  assert flat == [i for row in want for i in row]


def test_word_piece_tokenizer_maps_long_words_to_unk(tokens):
  tokenizer = wordpiece.word_piece_tokenizer(tokens, max_bytes_per_word=5)
  ids = tokenizer.tokenize(tf.constant(["abcdef", "ab"])).to_list()
  assert ids[0] == [tokens.index(vocab_lib.UNK)]
  assert tokens.index(vocab_lib.UNK) not in ids[1]
  np.testing.assert_array_equal(
      tokenizer.tokenize(tf.constant(["ab"])).to_list(), [ids[1]])
