"""Packs tokenized lines into `[CLS] A [SEP] B [SEP]` pretraining sequences.

Input is BERT's create_pretraining_data layout (one sentence or paragraph per
line, a blank line between documents), tokenized a batch of lines at a time.
The tokens of a document are cut into chunks of at most `seq_length - 3`
tokens made of whole words: a word goes to chunk `floor(start / capacity)` of
its document, and a word that would overflow its chunk is dropped (on average
half a word per chunk). Each chunk is split into segments A and B at a random
line boundary (a random word boundary when it holds a single line). As in the
mixed-vocabulary paper there is no next-sentence prediction, so B always
follows A in the document.

Why by hand: neither tensorflow_text nor official.nlp.data packs tokenized
streams inside tf.data. The packer is a `tf.data.Dataset.scan` over *batches*
of lines (vectorized within a batch; per-line scans cost a millisecond a line)
whose state is the document's unfinished last chunk, so packing stays in the
graph and its position is saved with the input iterator (exact resume).
"""

import tensorflow as tf

_FIELDS = ("token_ids", "vocab_ids", "word_ids", "line_ids")


def row_ids(row_splits, num_values):
  """Row of each flat value: int32 [num_values] from int32 `row_splits`.

  Equal to `RaggedTensor.value_rowids()` in O(values): every row end is
  counted at its position and the counts summed cumulatively (empty rows
  end several times at one place). `value_rowids` goes through `tf.repeat`,
  which builds a [rows, longest row] mask (with the ops around it, about
  a tenth of the pretraining input pipeline's op time in TensorFlow's
  profiler). The export's `serving_tokenizer.row_ids` does the same with a
  scatter, which TFLite runs; here the segment sum is cheaper: the
  pipeline's pass took 0.229-0.236 s with it against 0.242-0.256 s with
  the scatter (`bench/tokenize_bench.py`, alternated, 3 processes each).
  """
  ends = row_splits[1:]
  marks = tf.math.unsorted_segment_sum(tf.ones_like(ends), ends,
                                       num_values + 1)
  return tf.cumsum(marks[:num_values])


def _segment_reduce(values, segment_ids, num_segments, reducer):
  return tf.gather(reducer(values, segment_ids, num_segments), segment_ids)


def flatten_line_batch(token_ids, vocab_ids, doc_end):
  """Turns one tokenized batch of lines into a flat token stream.

  Args:
    token_ids: int32 RaggedTensor [lines, (words), (pieces)].
    vocab_ids: int32 RaggedTensor of the same shape.
    doc_end: bool [lines], True for a blank line (end of a document).

  Returns:
    dict of flat int32 [tokens] `token_ids`, `vocab_ids`, `word_ids` (unique
    within the batch), `line_ids` (line within the batch), and `doc_end`.
  """
  piece_splits = tf.cast(token_ids.values.row_splits, tf.int32)
  word_splits = tf.cast(token_ids.row_splits, tf.int32)
  word_ids = row_ids(piece_splits, piece_splits[-1])
  line_of_word = row_ids(word_splits, word_splits[-1])
  return {
      "token_ids": token_ids.flat_values,
      "vocab_ids": vocab_ids.flat_values,
      "word_ids": word_ids,
      "line_ids": tf.gather(line_of_word, word_ids),
      "doc_end": doc_end,
  }


def pack_line_batches(batches, capacity):
  """Packs a dataset of flat token streams into chunks.

  Args:
    batches: dataset of `flatten_line_batch` outputs.
    capacity: tokens per chunk (sequence length minus three specials).

  Returns:
    Dataset of chunk batches: int32 [chunks, capacity] `token_ids`,
    `vocab_ids`, `word_ids`, `line_ids` and int32 [chunks] `length`.
  """
  if capacity < 2:
    raise ValueError(f"capacity must be at least 2; received {capacity}.")

  def step(carry, batch):
    # Ids of the batch continue those of the carried chunk, which opens the
    # stream and belongs to its first document.
    offsets = {
        name: tf.reduce_max(tf.concat([carry[name], [-1]], 0)) + 1
        for name in ("word_ids", "line_ids")
    }
    stream = {
        name: tf.concat([carry[name], batch[name] + offsets.get(name, 0)], 0)
        for name in _FIELDS
    }
    doc_end = batch["doc_end"]
    num_lines = tf.size(doc_end)
    doc_of_line = tf.concat([[0], tf.cumsum(tf.cast(doc_end, tf.int32))], 0)
    doc_of_line = tf.concat(
        [tf.zeros([offsets["line_ids"]], tf.int32), doc_of_line[:num_lines]],
        0)
    doc = tf.gather(doc_of_line, stream["line_ids"])
    num_tokens = tf.size(doc)
    position = tf.range(num_tokens)
    num_docs = num_lines + 1
    pos_in_doc = position - _segment_reduce(position, doc, num_docs,
                                            tf.math.unsorted_segment_min)
    words = stream["word_ids"]
    num_words = offsets["word_ids"] + tf.reduce_max(
        tf.concat([batch["word_ids"], [-1]], 0)) + 1
    word_start = _segment_reduce(pos_in_doc, words, num_words,
                                 tf.math.unsorted_segment_min)
    word_end = _segment_reduce(pos_in_doc, words, num_words,
                               tf.math.unsorted_segment_max)
    chunk_in_doc = word_start // capacity
    # Chunks are numbered in stream order: documents and chunks only grow.
    _, chunk = tf.unique(doc * (num_tokens + 1) + chunk_in_doc)
    num_chunks = tf.reduce_max(tf.concat([chunk, [-1]], 0)) + 1
    chunk_start = _segment_reduce(pos_in_doc, chunk, num_chunks,
                                  tf.math.unsorted_segment_min)
    fits = word_end - chunk_start < capacity
    # The last document goes on in the next batch unless the batch closed it:
    # its last chunk is carried over, whole, to be completed there.
    is_open = tf.logical_not(
        tf.reduce_any(tf.concat([doc_end[-1:], [num_lines == 0]], 0)))
    carried = tf.logical_and(is_open, tf.equal(chunk, num_chunks - 1))
    emitted = tf.logical_and(fits, tf.logical_not(carried))
    new_carry = {
        name: tf.boolean_mask(stream[name], carried) for name in _FIELDS
    }
    # Renumbered from 0 so that ids stay small however long the stream runs.
    for name in ("word_ids", "line_ids"):
      new_carry[name] = tf.unique(new_carry[name])[1]
    # Chunks holding emitted tokens, renumbered 0..k-1 as rows.
    emitted_chunk = tf.boolean_mask(chunk, emitted)
    _, row = tf.unique(emitted_chunk)
    num_rows = tf.reduce_max(tf.concat([row, [-1]], 0)) + 1
    column = tf.boolean_mask(pos_in_doc - chunk_start, emitted)
    # Every (row, column) holds at most one token, so a segment sum over flat
    # indices places each field (half the time of ScatterNd with stacked
    # indices).
    index = row * capacity + column
    chunks = {
        name: tf.reshape(
            tf.math.unsorted_segment_sum(
                tf.boolean_mask(stream[name], emitted), index,
                num_rows * capacity), [num_rows, capacity])
        for name in _FIELDS
    }
    chunks["length"] = tf.math.unsorted_segment_sum(
        tf.ones_like(row), row, num_rows)
    return new_carry, chunks

  initial = {name: tf.zeros([0], tf.int32) for name in _FIELDS}
  return batches.scan(initial, step)


def _dense_word_ids(word_ids, length):
  """Renumbers each row's word ids 0, 1, ... in order; -1 past `length`."""
  changes = tf.cast(word_ids[:, 1:] != word_ids[:, :-1], tf.int32)
  dense = tf.cumsum(tf.pad(changes, [[0, 0], [1, 0]]), axis=1)
  valid = tf.range(tf.shape(word_ids)[1])[tf.newaxis] < length[:, tf.newaxis]
  return tf.where(valid, dense, -1)


def make_sequence_pairs(chunks, seq_length, special_ids, special_vocab_id,
                        seed):
  """Turns a batch of chunks into `[CLS] A [SEP] B [SEP]` model inputs.

  Args:
    chunks: one element of `pack_line_batches`.
    seq_length: output length (chunk capacity plus 3).
    special_ids: dict with the ids of "[CLS]", "[SEP]", "[PAD]" in the
      vocabulary the special tokens are taken from.
    special_vocab_id: vocabulary tag of the special tokens (0 teacher, 1
      student).
    seed: int [2] seed for the A/B split points.

  Returns:
    dict of int32 [chunks, seq_length]: `input_word_ids`, `input_mask`,
    `input_type_ids`, `input_vocab_ids`, and `word_ids` (-1 on specials and
    padding; a word's index in the sequence otherwise).
  """
  length = chunks["length"]
  capacity = seq_length - 3
  cols = tf.range(capacity)[tf.newaxis]
  inside = tf.logical_and(cols >= 1, cols < length[:, tf.newaxis])

  def starts(ids):
    change = ids[:, 1:] != ids[:, :-1]
    return tf.logical_and(inside, tf.pad(change, [[0, 0], [1, 0]]))

  line_starts = starts(chunks["line_ids"])
  word_starts = starts(chunks["word_ids"])
  has_line_start = tf.reduce_any(line_starts, axis=1, keepdims=True)
  candidates = tf.where(has_line_start, line_starts, word_starts)
  # A uniform candidate per row: the one with the largest random score.
  scores = tf.random.stateless_uniform(tf.shape(candidates), seed=seed)
  scores = tf.where(candidates, scores, -1.0)
  split = tf.where(tf.reduce_any(candidates, axis=1),
                   tf.argmax(scores, axis=1, output_type=tf.int32), length)
  has_b = split < length

  # Output position j takes chunk token source[j]: 1..split <- 0..split-1 (A),
  # split+2..length+1 <- split..length-1 (B); specials elsewhere.
  j = tf.range(seq_length)[tf.newaxis]
  split_ = split[:, tf.newaxis]
  length_ = length[:, tf.newaxis]
  in_a = tf.logical_and(j >= 1, j <= split_)
  in_b = tf.logical_and(j >= split_ + 2, j <= length_ + 1)
  source = tf.where(in_a, j - 1, tf.where(in_b, j - 2, 0))
  is_token = tf.logical_or(in_a, in_b)
  num_tokens = length_ + 2 + tf.cast(has_b, tf.int32)[:, tf.newaxis]
  real = j < num_tokens

  def take(values, special_value, pad_value):
    values = tf.gather(values, tf.minimum(source, capacity - 1), batch_dims=1)
    return tf.where(is_token, values,
                    tf.where(real, special_value, pad_value))

  cls_id, sep_id, pad_id = (special_ids["[CLS]"], special_ids["[SEP]"],
                            special_ids["[PAD]"])
  specials = tf.where(j == 0, cls_id, sep_id)
  word_ids = _dense_word_ids(chunks["word_ids"], length)
  batch_shape = tf.shape(source)
  return {
      "input_word_ids": take(chunks["token_ids"], specials, pad_id),
      "input_mask": tf.cast(tf.broadcast_to(real, batch_shape), tf.int32),
      "input_type_ids": tf.cast(
          tf.logical_and(real, j >= split_ + 2), tf.int32),
      "input_vocab_ids": take(chunks["vocab_ids"], special_vocab_id,
                              special_vocab_id),
      "word_ids": take(word_ids, -1, -1),
  }
