"""Every WordPiece tokenizer of the package, built in one place.

Zhao et al. (EACL 2021) tokenize with BERT's uncased WordPiece everywhere:
stage I cuts each word with the teacher's or the student's vocabulary
(Section 3, Figure 1), fine-tuning and serving cut with the student's
(Section 4.2), and the student vocabulary is judged by how it segments
held-out text (Section 3). All of these are tensorflow_text tokenizers; this
module builds them, so that the settings that make their ids agree (uncased,
NFD, accents stripped, `##` suffixes, `[UNK]`) are written once:

- `fast_bert_tokenizer`: `FastBertTokenizer` over raw words, for the
  fine-tuning featurizers (`intent_slot.data`, `text_classification.data`) and for serving
  (`export.ServingTokenizer`); it has a TFLite kernel, which is why training
  uses it too: a phone then sees the ids the model was fine-tuned on.
- `word_piece_tokenizer`: `FastWordpieceTokenizer` over words already split
  and normalised (`MixedVocabTokenizer`, which splits and lower-cases as
  BERT's reference tokenizer does).
- `reference_bert_tokenizer`: `BertTokenizer` with a lookup table, the
  slower reference that vocabulary statistics use
  (`vocab_learning.segmentation_stats`).
"""

from typing import Dict, Sequence, Tuple

import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.text import vocab as vocab_lib

#: The special tokens every packing needs (padding, unknown, [CLS] A [SEP]).
PACKING_TOKENS = (vocab_lib.PAD, vocab_lib.UNK, vocab_lib.CLS, vocab_lib.SEP)
#: BERT's rule: longer words become [UNK] (tensorflow_text counts bytes).
DEFAULT_MAX_BYTES_PER_WORD = 100


def special_token_ids(vocab: vocab_lib.PathOrTokens) -> Dict[str, int]:
  """{token: id} of `PACKING_TOKENS`; ValueError if one is missing."""
  tokens = vocab_lib.load_vocab(vocab, required_tokens=PACKING_TOKENS)
  return {t: tokens.index(t) for t in PACKING_TOKENS}


def fast_bert_tokenizer(vocab: vocab_lib.PathOrTokens, lower_case=True
                       ) -> Tuple[tf_text.FastBertTokenizer, Dict[str, int]]:
  """In-graph `FastBertTokenizer` and the ids of [PAD], [UNK], [CLS], [SEP].

  Example:
  ```python
  tokenizer, special_ids = fast_bert_tokenizer(assets.default_student_vocab())
  tokenizer.tokenize(tf.constant(["play some jazz"]))  # [1, (words), (ids)]
  ```

  Args:
    vocab: path of a WordPiece vocabulary or a list of tokens.
    lower_case: lower-case, NFD-normalize and strip accents (uncased BERT).

  Returns:
    (tokenizer with int64 ids, dict from special token to id).

  Raises:
    ValueError: the vocabulary lacks one of `PACKING_TOKENS`.
  """
  tokens = vocab_lib.load_vocab(vocab, required_tokens=PACKING_TOKENS)
  special_ids = special_token_ids(tokens)
  tokenizer = tf_text.FastBertTokenizer(
      vocab=tokens, token_out_type=tf.int64,
      lower_case_nfd_strip_accents=lower_case)
  return tokenizer, special_ids


def word_piece_tokenizer(tokens: Sequence[str],
                         max_bytes_per_word=DEFAULT_MAX_BYTES_PER_WORD
                        ) -> tf_text.FastWordpieceTokenizer:
  """`FastWordpieceTokenizer` that cuts words already split and normalised.

  Args:
    tokens: the vocabulary, in id order.
    max_bytes_per_word: longer words map to [UNK].

  Returns:
    A tokenizer from string [words] to int64 [words, (pieces)].
  """
  return tf_text.FastWordpieceTokenizer(
      vocab=list(tokens), suffix_indicator=vocab_lib.SUFFIX_INDICATOR,
      max_bytes_per_word=max_bytes_per_word, token_out_type=tf.int64,
      unknown_token=vocab_lib.UNK, no_pretokenization=True,
      support_detokenization=False)


def reference_bert_tokenizer(tokens: Sequence[str]) -> tf_text.BertTokenizer:
  """Uncased `BertTokenizer` over a lookup table of `tokens`.

  Returns:
    A tokenizer from string [batch] to int64 [batch, (words), (pieces)].
  """
  tokens = list(tokens)
  table = tf.lookup.StaticHashTable(
      tf.lookup.KeyValueTensorInitializer(
          tf.constant(tokens), tf.range(len(tokens), dtype=tf.int64)),
      default_value=-1)
  return tf_text.BertTokenizer(table, lower_case=True,
                               unknown_token=vocab_lib.UNK,
                               suffix_indicator=vocab_lib.SUFFIX_INDICATOR)
