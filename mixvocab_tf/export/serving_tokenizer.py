"""Student tokenization and packing for serving, in ops that TFLite can run.

The export modules (Zhao et al., EACL 2021, §4.2: the students are fine-tuned
and then served on phones) take raw strings, so tokenization is part of the
exported graph. Training features come from `intent_slot_data.intent_slot_featurizer` and
`text_classification_data.text_classification_featurizer`, which use tensorflow_text's `FastBertTokenizer`
but also ragged slicing, `tf.strings` and concatenation ops that TFLite has
no kernel for (RaggedRange, StringSplit, ...). This module computes the same
features with only:

- tensorflow_text's TFLite ops: `WhitespaceTokenizeWithOffsetsV2`,
  `FastBertNormalize` and `FastWordpieceTokenizeWithOffsets`: the ids of
  `FastBertTokenizer` with its punctuation split moved into the normalizer's
  model (`spaced_normalizer.SpacedBertTokenizer`, 0.35 MB smaller), and
- TFLite builtins on int32/float tensors (GATHER, SCATTER_ND, CUMSUM, WHERE,
  SELECT_V2, ...). Ragged values are handled as flat tensors plus row ids that
  are computed with a scatter and a cumulative sum rather than with
  `RaggedTensor.value_rowids()` (RaggedRange).

String tensors in TFLite support GATHER but not CONCATENATION, PACK, PAD or
SELECT; so label strings are gathered from constant tables that hold an
extra "" entry for padding, and the padded matrix of input words (which would
need the input's words and a "" in one tensor) exists only in TensorFlow
(`padded_words`); TFLite gets the words' byte offsets instead.

Bad input is defined, not an error: an empty or whitespace-only string has no
words (the model still sees `[CLS] [SEP]`); a word that tokenizes to nothing
(only control or format characters) becomes one `[UNK]` in the word-level
(SNIPS) packing, as in training, and disappears in the sentence packing (GLUE,
encoder), as in training; words longer than `max_bytes_per_word` are `[UNK]`;
only the first whitespace words of a string are tokenized (`seq_length - 2`
for SNIPS, 4 per token of budget for sentences), which bounds the work on a
very long string. Invalid UTF-8 is passed to the
tokenizers as is (their kernels treat a bad byte as one character).
"""

import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.export import spaced_normalizer
from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece

#: Padding of per-word int outputs (positions, ids, offsets).
PAD_INDEX = -1
#: Sentence packing tokenizes at most this many words per token of budget.
SENTENCE_WORDS_PER_TOKEN = 4


def row_ids(row_splits, num_values):
  """Row of each flat value: int32 [num_values] from int32 `row_splits`.

  Equal to `RaggedTensor.value_rowids()`, without its RaggedRange: a 1 is
  scattered at every row end and summed cumulatively (empty rows add
  several 1s at one place).
  """
  ends = tf.expand_dims(row_splits[1:], 1)
  marks = tf.scatter_nd(ends, tf.ones_like(row_splits[1:]),
                        tf.reshape(num_values + 1, [1]))
  return tf.cumsum(marks[:num_values])


def _splits_from_lengths(lengths):
  return tf.concat([tf.zeros([1], tf.int32), tf.cumsum(lengths)], axis=0)


class ServingTokenizer(tf.Module):
  """The student's WordPiece tokenizer and input packing, TFLite-convertible.

  Tokenizes like the training featurizers (`wordpiece.fast_bert_tokenizer`;
  `SpacedBertTokenizer` gives its ids for every code point), so exported
  models see the features they were fine-tuned on. The vocabulary file is tracked as a
  `tf.saved_model.Asset` (`vocab_file`), so a SavedModel carries it.

  Example:
  ```python
  tokenizer = ServingTokenizer(assets.default_student_vocab())
  features, words = tokenizer.pack_words(tf.constant(["play some jazz"]), 64)
  features["input_word_ids"]  # [[CLS] play some jazz [SEP]], int32 [1, 5]
  ```

  Args:
    vocab: path of the student vocab.txt (it becomes the asset) or a token
      list (then no asset is tracked).
    lower_case: uncased normalization, as in training.
    name: module name.
  """

  def __init__(self, vocab, lower_case=True, name="serving_tokenizer"):
    super().__init__(name=name)
    self.tokens = vocab_lib.load_vocab(vocab)
    self.vocab_file = (tf.saved_model.Asset(vocab)
                       if isinstance(vocab, (str, bytes)) or hasattr(
                           vocab, "__fspath__") else None)
    self.lower_case = bool(lower_case)
    special_ids = wordpiece.special_token_ids(self.tokens)
    self._wordpiece = spaced_normalizer.SpacedBertTokenizer(
        self.tokens, self.lower_case)
    self.cls_id = special_ids["[CLS]"]
    self.sep_id = special_ids["[SEP]"]
    self.pad_id = special_ids["[PAD]"]
    self.unk_id = special_ids["[UNK]"]
    self._whitespace = tf_text.WhitespaceTokenizer()

  @property
  def vocab_size(self):
    return len(self.tokens)

  def split_words(self, text, max_words):
    """Whitespace words of each string, at most `max_words` per string.

    Args:
      text: string [batch].
      max_words: words kept per string (the others are never tokenized).

    Returns:
      A dict of flat, row-major tensors over the kept words: `words` (string
      [K]), `row` (int32 [K], the string each word is from), `index` (int32
      [K], its index in that string), `starts`, `ends` (int32 [K], byte
      offsets in the string) and `num_words` (int32 [batch], kept words per
      string).
    """
    words, starts, ends = self._whitespace.tokenize_with_offsets(text)
    splits = tf.cast(words.row_splits, tf.int32)
    flat = words.flat_values
    total = tf.size(flat, out_type=tf.int32)
    row = row_ids(splits, total)
    index = tf.range(total) - tf.gather(splits, row)
    keep = tf.cast(tf.where(index < max_words)[:, 0], tf.int32)
    return {
        "words": tf.gather(flat, keep),
        "row": tf.gather(row, keep),
        "index": tf.gather(index, keep),
        "starts": tf.cast(tf.gather(starts.flat_values, keep), tf.int32),
        "ends": tf.cast(tf.gather(ends.flat_values, keep), tf.int32),
        "num_words": tf.minimum(splits[1:] - splits[:-1], max_words),
    }

  def _word_pieces(self, words, at_least_one):
    """WordPieces of each word: flat ids, their word, index in the word.

    With `at_least_one`, a word without pieces gets one [UNK] (the word-level
    SNIPS featurizer does that so every word keeps a tagged position).

    Returns:
      (ids int32 [P], word int32 [P], index int32 [P], lengths int32 [K]).
    """
    pieces = self._wordpiece.tokenize(words)
    piece_splits = tf.cast(pieces.row_splits, tf.int32)
    flat = tf.cast(pieces.flat_values, tf.int32)
    lengths = piece_splits[1:] - piece_splits[:-1]
    if not at_least_one:
      total = tf.size(flat, out_type=tf.int32)
      word = row_ids(piece_splits, total)
      return flat, word, tf.range(total) - tf.gather(piece_splits,
                                                     word), lengths
    lengths = tf.maximum(lengths, 1)
    splits = _splits_from_lengths(lengths)
    total = splits[-1]
    word = row_ids(splits, total)
    index = tf.range(total) - tf.gather(splits, word)
    # The [UNK] appended at the end is what an empty word reads.
    source = tf.concat([flat, [self.unk_id]], axis=0)
    has_pieces = tf.gather(piece_splits[1:] - piece_splits[:-1], word) > 0
    position = tf.where(has_pieces, tf.gather(piece_splits, word) + index,
                        tf.size(flat, out_type=tf.int32))
    return tf.gather(source, position), word, index, lengths

  def _scatter_sequences(self, batch_size, length, rows, positions, ids,
                         type_ids):
    """Dense int32 [batch, length] features from (row, position, id) triples.

    Triples with a position outside [0, length) are dropped (they go to an
    extra column that is cut off). Unfilled positions are padding.
    """
    inside = (positions >= 0) & (positions < length)
    positions = tf.where(inside, positions, length)
    indices = tf.stack([rows, positions], axis=1)
    shape = tf.stack([batch_size, length + 1])
    # Shifted by one so that scatter_nd's zero fill marks padding.
    filled = tf.scatter_nd(indices, ids + 1, shape)[:, :length]
    input_mask = tf.cast(filled > 0, tf.int32)
    input_word_ids = tf.where(filled > 0, filled - 1, self.pad_id)
    input_type_ids = tf.scatter_nd(indices, type_ids, shape)[:, :length]
    return {
        "input_word_ids": input_word_ids,
        "input_mask": input_mask,
        "input_type_ids": input_type_ids,
    }

  def pack_words(self, text, seq_length, max_words=None):
    """SNIPS features: each whitespace word tokenized on its own.

    The same ids as `intent_slot_data.intent_slot_featurizer` on the query's
    `str.split()` words, cut to the longest query of the batch instead of
    padded to `seq_length`.

    Args:
      text: string [batch].
      seq_length: the most tokens of a packed query, [CLS] and [SEP] included.
      max_words: words kept per query (default `seq_length - 2`, the most that
        can keep a first piece).

    Returns:
      (features, words): `features` holds int32 `input_word_ids`,
      `input_mask`, `input_type_ids` [batch, length] with length =
      min(seq_length, longest query + 2); `words` is `split_words`'s dict
      plus `positions` (int32 [K], each kept word's first-piece position, -1
      if the cut removed it).
    """
    budget = seq_length - 2
    max_words = budget if max_words is None else max_words
    batch_size = tf.shape(text, out_type=tf.int32)[0]
    words = self.split_words(text, max_words)
    ids, word, index, lengths = self._word_pieces(words["words"],
                                                  at_least_one=True)
    # Offset of each word's first piece within its query.
    starts = tf.cumsum(lengths, exclusive=True)
    first_word = tf.range(tf.size(lengths, out_type=tf.int32)) - words["index"]
    offsets = starts - tf.gather(starts, first_word)
    word_splits = _splits_from_lengths(words["num_words"])
    piece_splits = _splits_from_lengths(lengths)
    num_pieces = tf.minimum(
        tf.gather(piece_splits, word_splits[1:]) -
        tf.gather(piece_splits, word_splits[:-1]), budget)
    length = tf.reduce_max(tf.concat([num_pieces, [0]], axis=0)) + 2
    rows = tf.range(batch_size)
    piece_positions = tf.gather(offsets, word) + index + 1
    # Pieces past the budget get position `length` or beyond and are dropped.
    piece_positions = tf.where(piece_positions <= budget, piece_positions,
                               length)
    all_rows = tf.concat([tf.gather(words["row"], word), rows, rows], axis=0)
    all_positions = tf.concat(
        [piece_positions, tf.zeros_like(rows), num_pieces + 1], axis=0)
    all_ids = tf.concat([
        ids, tf.fill([batch_size], self.cls_id),
        tf.fill([batch_size], self.sep_id)
    ], axis=0)
    features = self._scatter_sequences(batch_size, length, all_rows,
                                       all_positions, all_ids,
                                       tf.zeros_like(all_ids))
    words["positions"] = tf.where(offsets < budget, offsets + 1, PAD_INDEX)
    return features, words

  def _sentence_pieces(self, text, max_words):
    """Pieces of whole sentences: (ids, row, index in row, lengths [batch])."""
    words = self.split_words(text, max_words)
    ids, word, _, word_lengths = self._word_pieces(words["words"],
                                                   at_least_one=False)
    piece_splits = _splits_from_lengths(word_lengths)
    word_splits = _splits_from_lengths(words["num_words"])
    row_splits = tf.gather(piece_splits, word_splits)
    row = tf.gather(words["row"], word)
    index = tf.range(tf.size(ids, out_type=tf.int32)) - tf.gather(
        row_splits, row)
    return ids, row, index, row_splits[1:] - row_splits[:-1]

  def pack_sentences(self, text_a, text_b=None, seq_length=128):
    """GLUE / encoder features: `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`.

    The same ids and type ids as `text_classification_data.text_classification_featurizer`: when the pieces
    do not fit, the longer sentence is cut first (round robin; a tie leaves A
    one piece longer), as tensorflow_text's `RoundRobinTrimmer` does. Cut to
    the longest packed example of the batch instead of padded.

    Args:
      text_a: string [batch].
      text_b: string [batch] or None (single sentences).
      seq_length: the most tokens of an example, special tokens included.

    Returns:
      int32 `input_word_ids`, `input_mask`, `input_type_ids` [batch, length].
    """
    num_special = 2 if text_b is None else 3
    budget = seq_length - num_special
    batch_size = tf.shape(text_a, out_type=tf.int32)[0]
    rows = tf.range(batch_size)
    # A word gives at least one piece unless it is only characters the
    # normalizer deletes (NUL, zero-width space); 4x the budget in words
    # leaves room for such words and still bounds the work on a huge string.
    max_words = SENTENCE_WORDS_PER_TOKEN * budget
    ids_a, row_a, index_a, len_a = self._sentence_pieces(text_a, max_words)
    if text_b is None:
      keep_a = tf.minimum(len_a, budget)
      positions = tf.where(index_a < tf.gather(keep_a, row_a), index_a + 1,
                           -1)
      all_rows = tf.concat([row_a, rows, rows], 0)
      all_positions = tf.concat([positions, tf.zeros_like(rows), keep_a + 1],
                                0)
      all_ids = tf.concat([
          ids_a, tf.fill([batch_size], self.cls_id),
          tf.fill([batch_size], self.sep_id)
      ], 0)
      all_types = tf.zeros_like(all_ids)
      length = tf.reduce_max(tf.concat([keep_a, [0]], 0)) + num_special
    else:
      ids_b, row_b, index_b, len_b = self._sentence_pieces(text_b,
                                                            max_words)
      # Round robin: A gets half the budget (the odd piece on a tie) or
      # what B leaves over, whichever is more.
      keep_a = tf.minimum(len_a, tf.maximum(budget - len_b,
                                            (budget + 1) // 2))
      keep_b = tf.minimum(len_b, budget - keep_a)
      pos_a = tf.where(index_a < tf.gather(keep_a, row_a), index_a + 1, -1)
      pos_b = tf.where(index_b < tf.gather(keep_b, row_b),
                       index_b + 2 + tf.gather(keep_a, row_b), -1)
      all_rows = tf.concat([row_a, row_b, rows, rows, rows], 0)
      all_positions = tf.concat([
          pos_a, pos_b, tf.zeros_like(rows), keep_a + 1, keep_a + keep_b + 2
      ], 0)
      all_ids = tf.concat([
          ids_a, ids_b, tf.fill([batch_size], self.cls_id),
          tf.fill([batch_size], self.sep_id),
          tf.fill([batch_size], self.sep_id)
      ], 0)
      all_types = tf.concat([
          tf.zeros_like(ids_a), tf.ones_like(ids_b), tf.zeros_like(rows),
          tf.zeros_like(rows), tf.ones_like(rows)
      ], 0)
      length = tf.reduce_max(tf.concat([keep_a + keep_b, [0]], 0)) + (
          num_special)
    return self._scatter_sequences(batch_size, length, all_rows,
                                   all_positions, all_ids, all_types)


def scatter_per_word(values, words, num_columns, pad_value):
  """Dense [batch, num_columns, ...] of per-word `values` [K, ...].

  Word k goes to (words['row'][k], words['index'][k]); the rest is
  `pad_value`. Numeric values only (TFLite has no string scatter).
  """
  batch_size = tf.shape(words["num_words"], out_type=tf.int32)[0]
  indices = tf.stack([words["row"], words["index"]], axis=1)
  shape = tf.concat([tf.stack([batch_size, num_columns]),
                     tf.shape(values, out_type=tf.int32)[1:]], 0)
  if pad_value == 0:
    return tf.scatter_nd(indices, values, shape)
  filled = tf.scatter_nd(indices, values - pad_value, shape)
  return filled + pad_value


def padded_words(words, num_columns):
  """String [batch, num_columns] of the kept words, '' after the last.

  TensorFlow only: concatenating the words with a '' has no TFLite kernel.
  """
  flat_index = scatter_per_word(
      tf.range(tf.size(words["row"], out_type=tf.int32)), words,
      num_columns, PAD_INDEX)
  source = tf.concat([words["words"], [""]], axis=0)
  return tf.gather(
      source, tf.where(flat_index >= 0, flat_index,
                       tf.size(words["words"], out_type=tf.int32)))
