"""Per-batch padding of SNIPS features: pad each batch to its longest query.

`intent_slot_data.intent_slot_featurizer` pads every query to a fixed `seq_length` (48 or
64), but SNIPS queries average about a dozen WordPieces: most of a fixed-length
batch is padding, and the encoder pays for it (every dense layer and the slot
head run on every position). `trim_to_longest` cuts a batch of featurized
examples to the longest query in it (the largest `input_mask` sum), so a
training step costs what its real tokens cost. Optionally, `bucketed_batches`
groups queries of similar length into the same batch first (length buckets),
so that the longest query of a batch is close to its others.

Both are plain tf.data transformations (`map`, `group_by_window`), whose
iterator state `tf.train.Checkpoint` saves: a trainer run that resumes reads
the same batches as an uninterrupted one.

Trimming changes no loss: the positions cut are padding, which the encoder's
attention mask ignores and which carry no slot loss (`slot_weights` 0).
"""

from typing import Iterable, List, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf

#: Features of `intent_slot_featurizer` laid out along the token axis.
TOKEN_AXIS_KEYS = ("input_word_ids", "input_mask", "input_type_ids",
                   "slot_ids", "slot_weights")


def trim_to_longest(features: Mapping[str, tf.Tensor],
                    extra_keys: Iterable[str] = ()) -> dict:
  """Cuts the token axis (axis 1) of a batch to its longest query.

  Args:
    features: a batch of `intent_slot_featurizer` features ([B, seq_length] for the
      keys in `TOKEN_AXIS_KEYS`).
    extra_keys: more keys whose axis 1 is the token axis (e.g. per-piece
      distillation targets [B, seq_length, S]).

  Returns:
    The same dict with those features cut to [B, max_b sum(input_mask[b])];
    other features (intent_id, word_start_positions, ...) are unchanged.
  """
  length = tf.reduce_max(tf.reduce_sum(
      tf.cast(features["input_mask"], tf.int32), axis=1))
  keys = set(TOKEN_AXIS_KEYS) | set(extra_keys)
  return {k: (v[:, :length] if k in keys else v) for k, v in features.items()}


def query_length(features: Mapping[str, tf.Tensor]) -> tf.Tensor:
  """Tokens of one unbatched featurized query ([CLS] and [SEP] included)."""
  return tf.reduce_sum(tf.cast(features["input_mask"], tf.int32))


def fine_boundaries(max_length: int) -> List[int]:
  """Length-bucket boundaries 2 tokens apart up to 32, 4 up to 64, then 8.

  Batches cut to their longest text then carry about 4% padding on real
  data, against 7-21% with the few buckets of the small configs (SST-2
  train sentences in the default teacher's vocabulary: 20.5% -> 3.9%).

  Args:
    max_length: the longest sequence (the task's `seq_length`); no boundary
      reaches it.

  Returns:
    Increasing boundaries for `bucketed_batches`, the first 6.
  """
  if max_length < 7:
    raise ValueError(f"max_length must be at least 7; received {max_length}.")
  grid = (list(range(6, 32, 2)) + list(range(32, 64, 4)) +
          list(range(64, max_length, 8)))
  return [b for b in grid if b < max_length]


def bucketed_batches(dataset: tf.data.Dataset, batch_size: int,
                     boundaries: Sequence[int]) -> tf.data.Dataset:
  """Batches of `batch_size` queries whose lengths share a bucket.

  Args:
    dataset: unbatched featurized examples (e.g. shuffled and repeated).
    batch_size: examples per batch (every batch is full; the input repeats).
    boundaries: increasing token lengths; bucket i holds queries of length in
      [boundaries[i-1], boundaries[i]).

  Returns:
    The batched dataset (still padded to seq_length; trim with
    `trim_to_longest`).
  """
  return _grouped(dataset, query_length, batch_size, boundaries)


def bucketed_index_batches(indices: tf.data.Dataset, lengths: tf.Tensor,
                           batch_size: int,
                           boundaries: Sequence[int]) -> tf.data.Dataset:
  """`bucketed_batches` of example indices: the same batches, as indices.

  Args:
    indices: int64 example indices (e.g. shuffled and repeated).
    lengths: int32 [N], each example's tokens ([CLS] and [SEP] included).
    batch_size, boundaries: as in `bucketed_batches`.

  Returns:
    int64 [batch_size] batches of indices: those whose examples
    `bucketed_batches` would batch together, in its order.
  """
  return _grouped(indices, lambda index: tf.gather(lengths, index),
                  batch_size, boundaries)


def _grouped(dataset, length_fn, batch_size, boundaries):
  """Batches elements of the same length bucket (`bucketed_batches`)."""
  boundaries = tf.constant(sorted(int(b) for b in boundaries), tf.int64)

  def key(element):
    return tf.reduce_sum(tf.cast(
        tf.cast(length_fn(element), tf.int64) >= boundaries, tf.int64))

  return dataset.group_by_window(
      key_func=key,
      reduce_func=lambda _, window: window.batch(batch_size,
                                                 drop_remainder=True),
      window_size=batch_size)


def evaluation_order(lengths, batch_size: int, seed: int = 0) -> np.ndarray:
  """An order of a validation split whose batches hold texts of near-equal length.

  Evaluation batches in file order, each cut to its longest text, carry the
  padding of texts of every length (SST-2 dev: 46,064 tokens run for 21,943
  real ones in the default teacher's vocabulary; in this order 25,304).
  The examples are sorted by length and cut into batches; the full batches
  come in a fixed shuffled order (so the first few are no shorter than the
  rest, e.g. with `Trainer.eval_max_batches`), the partial one last (so that
  batching the reordered examples by `batch_size` gives these batches).
  Metrics do not depend on the order: per-example results carry their
  `example_index`.

  Args:
    lengths: int [N], each example's tokens.
    batch_size: examples per evaluation batch.
    seed: seed of the batches' order.

  Returns:
    int64 [N], a permutation of range(N).
  """
  if batch_size < 1:
    raise ValueError(f"batch_size must be positive; received {batch_size}.")
  order = np.argsort(np.asarray(lengths), kind="stable").astype(np.int64)
  full = len(order) // batch_size * batch_size
  batches = order[:full].reshape(-1, batch_size)
  batches = batches[np.random.RandomState(seed).permutation(len(batches))]
  return np.concatenate([batches.reshape(-1), order[full:]])


def batch_for_training(dataset: tf.data.Dataset, batch_size: int,
                       pad_to_longest: bool = False,
                       bucket_boundaries: Optional[Sequence[int]] = None,
                       extra_keys: Iterable[str] = ()) -> tf.data.Dataset:
  """Batches featurized training examples, padded as configured.

  Args:
    dataset: unbatched featurized examples, repeating.
    batch_size: examples per batch.
    pad_to_longest: cut each batch to its longest query.
    bucket_boundaries: if given, batch queries of similar length together
      (`bucketed_batches`); implies `pad_to_longest`.
    extra_keys: as in `trim_to_longest`.
  """
  if bucket_boundaries:
    batched = bucketed_batches(dataset, batch_size, bucket_boundaries)
    pad_to_longest = True
  else:
    batched = dataset.batch(batch_size, drop_remainder=True)
  if pad_to_longest:
    extra_keys = tuple(extra_keys)
    batched = batched.map(lambda f: trim_to_longest(f, extra_keys),
                          num_parallel_calls=tf.data.AUTOTUNE,
                          deterministic=True)
  return batched
