"""Dynamic masked-LM selection with a cap per vocabulary, batched in the graph.

Stage I of mixed-vocabulary training (Zhao et al., EACL 2021, Section 3) masks up
to 20 tokens per sequence, of which at most 10 may be teacher-vocabulary tokens
(the rest student-vocabulary tokens), so that both softmax layers see enough
targets. Stage II and NoKD mask up to 20 student tokens. Selection follows
BERT's `create_masked_lm_predictions` (15% of the tokens, 80% [MASK], 10% a
random token, 10% unchanged; optionally whole words), except that a random
replacement is drawn from the masked token's own vocabulary.

Why by hand: tensorflow_text's `MaskValuesChooser`/`mask_language_model` has a
single vocabulary and no per-vocabulary cap, so the selection is written here as
batched tensor ops (sort by a random score, running counts per vocabulary).
"""

import dataclasses

import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class MaskingConfig:
  """What and how much to mask.

  Attributes:
    max_predictions: masked tokens per sequence at most (paper: 20).
    max_teacher_predictions: of those, teacher-vocabulary tokens at most (paper:
      10); None for no cap.
    masked_lm_prob: share of a sequence's tokens to mask, before the caps.
    whole_word_masking: mask all pieces of a word together.
    mask_token_ids: id of [MASK] in the teacher (index 0) and student (index 1)
      vocabulary.
    vocab_sizes: sizes of the teacher and student vocabularies (random
      replacements are drawn from the masked token's own vocabulary).
    mask_rate, random_rate: the 80/10/10 split (the rest stays unchanged).
  """
  mask_token_ids: tuple
  vocab_sizes: tuple
  max_predictions: int = 20
  max_teacher_predictions: int | None = 10
  masked_lm_prob: float = 0.15
  whole_word_masking: bool = False
  mask_rate: float = 0.8
  random_rate: float = 0.1

  def __post_init__(self):
    if self.max_predictions < 1:
      raise ValueError("max_predictions must be at least 1; received "
                       f"{self.max_predictions}.")
    if (self.max_teacher_predictions is not None and
        not 0 <= self.max_teacher_predictions <= self.max_predictions):
      raise ValueError(
          "max_teacher_predictions must be in [0, max_predictions]; received "
          f"{self.max_teacher_predictions} and {self.max_predictions}.")
    if not 0.0 < self.masked_lm_prob <= 1.0:
      raise ValueError(
          f"masked_lm_prob must be in (0, 1]; received {self.masked_lm_prob}.")
    if self.mask_rate < 0 or self.random_rate < 0 or (
        self.mask_rate + self.random_rate > 1.0):
      raise ValueError(
          "mask_rate and random_rate must be non-negative with sum <= 1; "
          f"received {self.mask_rate} and {self.random_rate}.")
    if len(self.mask_token_ids) != 2 or len(self.vocab_sizes) != 2:
      raise ValueError("mask_token_ids and vocab_sizes need one entry per "
                       "vocabulary (teacher, student).")


def _unit_end_values(values, unit_ids, num_units):
  """For each position, `values` at the last position of its unit (max).

  None `unit_ids` means every position is its own unit.
  """
  if unit_ids is None:
    return values
  return tf.gather(
      tf.math.unsorted_segment_max(values, unit_ids, num_units), unit_ids)


def mask_batch(features, word_ids, config, seed):
  """Chooses masked positions and corrupts the inputs.

  Args:
    features: dict with int32 [batch, seq] `input_word_ids`, `input_vocab_ids`
      (0 teacher, 1 student) and `input_mask`.
    word_ids: int32 [batch, seq], index of each position's word within its
      sequence, -1 where a position may not be masked ([CLS], [SEP], padding).
    config: a `MaskingConfig`.
    seed: int [2] seed of the stateless random ops.

  Returns:
    `features` with `input_word_ids` corrupted and `masked_lm_positions`,
    `masked_lm_ids`, `masked_lm_vocab_ids` (int32) and `masked_lm_weights`
    (float32), each [batch, max_predictions], positions in increasing order.
  """
  word_input_ids = features["input_word_ids"]
  vocab_ids = features["input_vocab_ids"]
  batch = tf.shape(word_input_ids)[0]
  seq_length = tf.shape(word_input_ids)[1]
  num_predictions = config.max_predictions
  seeds = tf.random.experimental.stateless_split(tf.cast(seed, tf.int64), 3)

  candidate = word_ids >= 0
  positions = tf.broadcast_to(tf.range(seq_length), tf.shape(word_ids))
  # One random score per unit (word or token): sorting by it shuffles units and
  # keeps the pieces of a word next to each other.
  score = tf.random.stateless_uniform(tf.shape(word_ids), seed=seeds[0])
  if config.whole_word_masking:
    units = tf.where(candidate, word_ids, 0)
    score = tf.gather(score, units, batch_dims=1)
  score = tf.where(candidate, score, 2.0)
  order = tf.argsort(score, axis=1, stable=True)

  sorted_candidate = tf.gather(candidate, order, batch_dims=1)
  sorted_teacher = tf.logical_and(
      sorted_candidate, tf.gather(vocab_ids, order, batch_dims=1) == 0)
  # Unit ids unique across the batch, for segment reductions in sorted order.
  sorted_units = None
  if config.whole_word_masking:
    sorted_units = tf.gather(units, order, batch_dims=1) + (
        tf.range(batch)[:, tf.newaxis] * seq_length)
  num_units = batch * seq_length

  eligible = sorted_candidate
  if config.max_teacher_predictions is not None:
    teacher_count = _unit_end_values(
        tf.cumsum(tf.cast(sorted_teacher, tf.int32), axis=1), sorted_units,
        num_units)
    eligible = tf.logical_and(
        eligible,
        tf.logical_or(~sorted_teacher,
                      teacher_count <= config.max_teacher_predictions))
  num_tokens = tf.reduce_sum(tf.cast(features["input_mask"], tf.float32), 1)
  num_to_predict = tf.minimum(
      num_predictions,
      tf.maximum(1, tf.cast(tf.round(num_tokens * config.masked_lm_prob),
                            tf.int32)))
  total_count = _unit_end_values(
      tf.cumsum(tf.cast(eligible, tf.int32), axis=1), sorted_units, num_units)
  sorted_selected = tf.logical_and(
      eligible, total_count <= num_to_predict[:, tf.newaxis])

  # Back to position order; selected positions first, in increasing order.
  # (A segment max over flat indices is a quarter of the time of a ScatterNd
  # with stacked indices; a top-k of num_predictions a third of a full sort.)
  flat_order = order + tf.range(batch)[:, tf.newaxis] * seq_length
  selected = tf.reshape(
      tf.math.unsorted_segment_max(
          tf.reshape(tf.cast(sorted_selected, tf.int32), [-1]),
          tf.reshape(flat_order, [-1]), batch * seq_length),
      tf.shape(order)) > 0
  key = tf.where(selected, positions, positions + seq_length)
  key = -tf.math.top_k(-key, k=tf.minimum(num_predictions, seq_length),
                       sorted=True).values
  key = tf.pad(key, [[0, 0], [0, num_predictions - tf.shape(key)[1]]],
               constant_values=2 * seq_length)
  valid = key < seq_length
  masked_positions = tf.where(valid, key, 0)
  masked_ids = tf.where(
      valid, tf.gather(word_input_ids, masked_positions, batch_dims=1), 0)
  masked_vocab_ids = tf.where(
      valid, tf.gather(vocab_ids, masked_positions, batch_dims=1), 0)

  # 80% [MASK], 10% a random token of the same vocabulary, 10% unchanged.
  action = tf.random.stateless_uniform(tf.shape(word_ids), seed=seeds[1])
  random_ids = tf.random.stateless_uniform(
      tf.shape(word_ids), seed=seeds[2], minval=None, maxval=None,
      dtype=tf.int32)
  is_student = vocab_ids == 1
  vocab_size = tf.where(is_student, config.vocab_sizes[1],
                        config.vocab_sizes[0])
  random_ids = tf.math.floormod(random_ids, vocab_size)
  mask_ids = tf.where(is_student, config.mask_token_ids[1],
                      config.mask_token_ids[0])
  corrupted = tf.where(
      action < config.mask_rate, mask_ids,
      tf.where(action < config.mask_rate + config.random_rate, random_ids,
               word_input_ids))
  outputs = dict(features)
  outputs["input_word_ids"] = tf.where(selected, corrupted, word_input_ids)
  outputs["masked_lm_positions"] = masked_positions
  outputs["masked_lm_ids"] = masked_ids
  outputs["masked_lm_vocab_ids"] = masked_vocab_ids
  outputs["masked_lm_weights"] = tf.cast(valid, tf.float32)
  return outputs
