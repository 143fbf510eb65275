"""Packs tokenized lines into `[CLS] A [SEP] B [SEP]` pretraining sequences.

Input is BERT's create_pretraining_data layout (one sentence or paragraph per
line, a blank line between documents), already tokenized line by line. Lines of
one document are concatenated and cut into chunks of `seq_length - 3` tokens,
preferably at a word boundary; a chunk is split into segments A and B at a
random line boundary (a random word boundary when it holds a single line). As
in the mixed-vocabulary paper, there is no next-sentence prediction, so B always
follows A in the document.

Why by hand: neither tensorflow_text nor official.nlp.data packs tokenized
streams inside tf.data; the packer is a `tf.data.Dataset.scan` whose state is
the unfinished chunk, so packing stays in the graph and its position is saved
with the input iterator (exact resume).
"""

import tensorflow as tf

_FIELDS = ("token_ids", "vocab_ids", "word_ids", "line_ids")


def _empty_buffer():
  return {name: tf.zeros([0], tf.int32) for name in _FIELDS}


def _cut_point(word_ids, target):
  """Where to end a full chunk: the last word start in (target/2, target]."""
  starts = tf.concat([[True], word_ids[1:] != word_ids[:-1]], axis=0)
  in_window = tf.logical_and(starts, tf.range(tf.size(word_ids)) > target // 2)
  in_window = tf.logical_and(in_window, tf.range(tf.size(word_ids)) <= target)
  candidates = tf.where(in_window)[:, 0]
  return tf.cond(
      tf.size(candidates) > 0,
      lambda: tf.cast(candidates[-1], tf.int32),
      lambda: tf.constant(target, tf.int32))


def _pad_to(values, target):
  return tf.pad(values, [[0, target - tf.size(values)]])


def pack_lines(lines, target_length, max_line_tokens=None):
  """Packs a dataset of tokenized lines into fixed-capacity chunks.

  Args:
    lines: dataset of dicts with int32 [n] `token_ids`, `vocab_ids`, `word_ids`
      (word index within the line) and bool `doc_end` (a blank line).
    target_length: tokens per chunk (sequence length minus three specials).
    max_line_tokens: tokens of one line kept at most (bounds the packer's work
      on a pathological line); default 8 chunks' worth.

  Returns:
    Dataset of chunks: int32 [target_length] `token_ids`, `vocab_ids`,
    `word_ids` (unique within the document), `line_ids`, and int32 `length`.
  """
  if target_length < 2:
    raise ValueError(
        f"target_length must be at least 2; received {target_length}.")
  max_line_tokens = max_line_tokens or 8 * target_length

  def emit_full_chunks(buffer):
    chunks = {name: tf.zeros([0, target_length], tf.int32) for name in _FIELDS}
    lengths = tf.zeros([0], tf.int32)

    def cond(buffer, chunks, lengths):
      del chunks, lengths
      return tf.size(buffer["token_ids"]) >= target_length

    def body(buffer, chunks, lengths):
      cut = _cut_point(buffer["word_ids"], target_length)
      chunks = {
          name: tf.concat([chunks[name],
                           _pad_to(buffer[name][:cut], target_length)[None]], 0)
          for name in _FIELDS
      }
      buffer = {name: buffer[name][cut:] for name in _FIELDS}
      return buffer, chunks, tf.concat([lengths, [cut]], 0)

    invariants = ({name: tf.TensorShape([None]) for name in _FIELDS},
                  {name: tf.TensorShape([None, target_length])
                   for name in _FIELDS}, tf.TensorShape([None]))
    return tf.while_loop(cond, body, (buffer, chunks, lengths),
                         shape_invariants=invariants)

  def step(state, line):
    buffer, word_offset, line_count = state

    def on_document_end():
      length = tf.size(buffer["token_ids"])
      has_tokens = length > 0
      chunks = {
          name: tf.reshape(
              _pad_to(buffer[name], target_length),
              [-1, target_length])[:tf.cast(has_tokens, tf.int32)]
          for name in _FIELDS
      }
      lengths = tf.reshape(length, [1])[:tf.cast(has_tokens, tf.int32)]
      return (_empty_buffer(), tf.constant(0), tf.constant(0)), (chunks,
                                                                 lengths)

    def on_line():
      n = tf.minimum(tf.size(line["token_ids"]), max_line_tokens)
      words = line["word_ids"][:n]
      appended = {
          "token_ids": line["token_ids"][:n],
          "vocab_ids": line["vocab_ids"][:n],
          "word_ids": words + word_offset,
          "line_ids": tf.fill([n], line_count),
      }
      merged = {
          name: tf.concat([buffer[name], appended[name]], 0) for name in _FIELDS
      }
      rest, chunks, lengths = emit_full_chunks(merged)
      next_offset = word_offset + tf.reduce_max(tf.concat([words, [-1]], 0)) + 1
      return (rest, next_offset, line_count + 1), (chunks, lengths)

    return tf.cond(line["doc_end"], on_document_end, on_line)

  initial = (_empty_buffer(), tf.constant(0), tf.constant(0))
  packed = lines.scan(initial, step)

  def to_chunks(chunks, lengths):
    return tf.data.Dataset.from_tensor_slices(dict(chunks, length=lengths))

  return packed.flat_map(to_chunks)


def _dense_word_ids(word_ids):
  """Renumbers word ids to 0, 1, ... in order of appearance."""
  changes = tf.concat(
      [[0], tf.cast(word_ids[1:] != word_ids[:-1], tf.int32)], axis=0)
  return tf.cumsum(changes)


def make_sequence_pair(chunk, seq_length, special_ids, special_vocab_id, seed):
  """Turns one chunk into `[CLS] A [SEP] B [SEP]` model inputs.

  Args:
    chunk: one element of `pack_lines`.
    seq_length: output length (chunk capacity plus 3).
    special_ids: dict with the ids of "[CLS]", "[SEP]", "[PAD]" in the
      vocabulary the special tokens are taken from.
    special_vocab_id: vocabulary tag of the special tokens (0 teacher, 1
      student).
    seed: int [2] seed for the A/B split point.

  Returns:
    dict of int32 [seq_length]: `input_word_ids`, `input_mask`,
    `input_type_ids`, `input_vocab_ids`, and `word_ids` (-1 on specials and
    padding; a word's index in the sequence otherwise).
  """
  length = chunk["length"]
  tokens = {name: chunk[name][:length] for name in _FIELDS}
  line_ids, word_ids = tokens["line_ids"], tokens["word_ids"]
  positions = tf.range(1, length)
  line_starts = tf.boolean_mask(positions, line_ids[1:] != line_ids[:-1])
  word_starts = tf.boolean_mask(positions, word_ids[1:] != word_ids[:-1])
  candidates = tf.cond(
      tf.size(line_starts) > 0, lambda: line_starts, lambda: word_starts)
  split = tf.cond(
      tf.size(candidates) > 0,
      lambda: tf.gather(candidates, tf.random.stateless_uniform(
          [], seed=seed, maxval=tf.size(candidates), dtype=tf.int32)),
      lambda: length)
  has_b = split < length
  b_sep = tf.cast(has_b, tf.int32)
  dense_words = _dense_word_ids(word_ids)
  cls_id, sep_id, pad_id = (special_ids["[CLS]"], special_ids["[SEP]"],
                            special_ids["[PAD]"])

  def layout(first, a, middle, b, last):
    return tf.concat([[first], a[:split], [middle], b[split:],
                      tf.fill([b_sep], last)], axis=0)

  input_word_ids = layout(cls_id, tokens["token_ids"], sep_id,
                          tokens["token_ids"], sep_id)
  input_vocab_ids = layout(special_vocab_id, tokens["vocab_ids"],
                           special_vocab_id, tokens["vocab_ids"],
                           special_vocab_id)
  out_word_ids = layout(-1, dense_words, -1, dense_words, -1)
  num_tokens = tf.size(input_word_ids)
  input_type_ids = tf.concat(
      [tf.zeros([split + 2], tf.int32),
       tf.ones([num_tokens - split - 2], tf.int32)], axis=0)
  padding = seq_length - num_tokens

  def pad(values, value):
    return tf.ensure_shape(
        tf.pad(values, [[0, padding]], constant_values=value), [seq_length])

  return {
      "input_word_ids": pad(input_word_ids, pad_id),
      "input_mask": pad(tf.ones([num_tokens], tf.int32), 0),
      "input_type_ids": pad(input_type_ids, 0),
      "input_vocab_ids": pad(input_vocab_ids, special_vocab_id),
      "word_ids": pad(out_word_ids, -1),
  }
