"""Slot-tag decoding that only emits valid IOB sequences (constrained Viterbi).

A SNIPS tagger (Zhao et al., EACL 2021, Section 4.2) scores one IOB tag per
word at its first WordPiece. Taking each word's arg-max independently lets an
undertrained tagger emit `I-X` after `O` or after a chunk of another type
(`add the album to my flow espanol playlist` -> `B-playlist_owner I-playlist
I-playlist`). The standard remedy, as in CRF taggers' decoding, is to pick the
sequence with the highest total log-probability among those whose every `I-X`
follows `B-X` or `I-X`: a Viterbi pass over the per-word log-softmax scores
with forbidden transitions at -1e4 (not -inf, so no NaN can appear).

`viterbi_decode` runs in the graph (serving: the SavedModel and the .tflite
use it), `viterbi_decode_numpy` in NumPy (evaluation during training); both
give the same tags, and both leave a word's arg-max tag wherever the arg-max
sequence is already valid. Under the IOB constraint alone (no other
transition scores) a valid arg-max sequence is the best valid one, so both
return it without the Viterbi pass: a trained tagger's arg-max is valid on
most queries (89-95% of SNIPS valid), and in TFLite the pass is a WHILE loop
of some twenty operators per word.
"""

from typing import Sequence, Tuple

import numpy as np
import tensorflow as tf

#: Score of a forbidden transition: far below any sum of log-probabilities
#: of a query (at most a few hundred words of log-probabilities above -30).
FORBIDDEN = -1e4
#: Name scope of the in-graph decoder's ops.
NAME_SCOPE = "iob_viterbi"


def _split(tag):
  if tag[:2] in ("B-", "I-"):
    return tag[0], tag[2:]
  return "O", ""


def allowed_transitions(slot_names: Sequence[str]) -> Tuple[np.ndarray,
                                                            np.ndarray]:
  """(start scores [S], transition scores [S, S]) of the IOB constraint.

  0 where allowed, `FORBIDDEN` where not: a query may not start with `I-X`,
  and `I-X` may only follow `B-X` or `I-X`. Tags that are not IOB (`O`, or
  names without a `B-`/`I-` prefix, e.g. padding entries) are unconstrained.

  Args:
    slot_names: the tag names, indexed by slot id.
  """
  parts = [_split(str(name)) for name in slot_names]
  size = len(parts)
  start = np.zeros([size], np.float32)
  transitions = np.zeros([size, size], np.float32)
  for j, (prefix, kind) in enumerate(parts):
    if prefix != "I":
      continue
    start[j] = FORBIDDEN
    for i, (prev_prefix, prev_kind) in enumerate(parts):
      if prev_prefix == "O" or prev_kind != kind:
        transitions[i, j] = FORBIDDEN
  return start, transitions


def viterbi_decode(word_logits: tf.Tensor, num_words: tf.Tensor,
                   start: np.ndarray, transitions: np.ndarray) -> tf.Tensor:
  """Best valid tag sequence per query, in the graph.

  Args:
    word_logits: [batch, words, slots] logits at each word's first piece
      (any values after a query's `num_words`).
    num_words: [batch] words of each query (at most `words`).
    start, transitions: from `allowed_transitions`.

  Returns:
    [batch, words] int32 tag ids; -1 after each query's `num_words`.
  """
  # One name scope, so that int8 conversion can keep these ops in float
  # (`tflite_conversion.INT8_FLOAT_NODES`): scores near FORBIDDEN and
  # log-probabilities near 0 share no useful int8 scale.
  with tf.name_scope(NAME_SCOPE):
    scores = tf.nn.log_softmax(tf.cast(word_logits, tf.float32), axis=-1)
    num_words = tf.cast(num_words, tf.int32)
    batch = tf.shape(scores)[0]
    length = tf.shape(scores)[1]
    start_scores = np.asarray(start)
    start = tf.constant(start, tf.float32)
    valid = tf.expand_dims(tf.range(length), 0) < tf.expand_dims(num_words, 1)
    step = _sparse_step(transitions)

    if step is None or not _constraint_only(start_scores, transitions):
      tags = _viterbi_pass(scores, num_words, batch, length, start,
                           step or _dense_step(transitions))
    else:
      # An IF around the loop: in TFLite a WHILE costs about as much to
      # prepare at each query (its body and condition subgraphs) as its
      # steps, even when it runs none.
      arg_max = tf.argmax(scores, axis=-1, output_type=tf.int32)
      tags = tf.cond(
          _all_allowed(arg_max, valid, start_scores == 0, transitions == 0),
          lambda: arg_max,
          lambda: _viterbi_pass(scores, num_words, batch, length, start,
                                step))
    return tf.where(valid, tags, -1)


def _constraint_only(start, transitions):
  """Whether the scores are the IOB constraint alone (0 or FORBIDDEN)."""
  return all(np.all((scores == 0) | (scores == FORBIDDEN))
             for scores in (np.asarray(start), np.asarray(transitions)))


def _all_allowed(tags, valid, start_allowed, allowed):
  """Whether every query's tags [B, W] (up to `valid`) pass the constraint."""
  num_tags = allowed.shape[0]
  first = tf.gather(tf.constant(start_allowed), tags[:, :1])
  pairs = tf.gather(tf.constant(allowed.reshape([-1])),
                    tags[:, :-1] * num_tags + tags[:, 1:])
  return tf.logical_and(
      tf.reduce_all(tf.logical_or(first, tf.logical_not(valid[:, :1]))),
      tf.reduce_all(tf.logical_or(pairs, tf.logical_not(valid[:, 1:]))))


def _viterbi_pass(scores, num_words, batch, length, start, step):
  """The Viterbi loop of `viterbi_decode`: tags [B, W] (any after the end)."""
  num_tags = start.shape[0]
  # One forward loop that carries, for each tag, the best path ending in
  # it (the same choices as back-pointers and a backward pass, in half the
  # loop iterations: on a phone-sized model the loop's per-op cost is a
  # large part of a query's time). Every carry keeps one shape (TFLite's
  # WHILE needs that): paths are [batch, tags, words], and each step
  # writes its column through a one-hot mask over words.
  scores_t = tf.transpose(scores, [1, 0, 2])  # [words, batch, tags]
  tag_ids = tf.reshape(tf.range(num_tags), [1, -1, 1])

  def forward(t, best, paths):
    step_best, step_pointer = step(best)
    step_best += tf.gather(scores_t, t)
    step_paths = tf.gather(paths, step_pointer, batch_dims=1) + tf.reshape(
        tf.one_hot(t, length, dtype=tf.int32), [1, 1, -1]) * tag_ids
    # Past a query's end its scores and paths stay.
    live = tf.expand_dims(t < num_words, 1)
    best = tf.where(live, step_best, best)
    paths = tf.where(tf.expand_dims(live, 2), step_paths, paths)
    return t + 1, best, paths

  # A batch of empty queries (or of none) still has one column to start from.
  first = tf.gather(tf.pad(scores_t, [[0, 1], [0, 0], [0, 0]]), 0)
  best0 = tf.expand_dims(start, 0) + first
  paths0 = tf.tile(tag_ids * tf.reshape(
      tf.one_hot(0, length, dtype=tf.int32), [1, 1, -1]), [batch, 1, 1])
  _, best, paths = tf.while_loop(
      lambda t, *_: t < length, forward, (tf.constant(1), best0, paths0))
  last = tf.argmax(best, axis=-1, output_type=tf.int32)
  return tf.gather(paths, last, batch_dims=1)  # [batch, words]


def _dense_step(transitions):
  """best [B, S] -> (best over previous tags [B, S], their ids [B, S])."""
  transitions = tf.constant(transitions, tf.float32)

  def step(best):
    # [B, S, S]: score of each previous tag (axis 1) then each tag (axis 2).
    candidates = tf.expand_dims(best, 2) + tf.expand_dims(transitions, 0)
    return (tf.reduce_max(candidates, axis=1),
            tf.argmax(candidates, axis=1, output_type=tf.int32))

  return step


def _sparse_step(transitions):
  """`_dense_step` without the [B, S, S] scores, for 0 / FORBIDDEN matrices.

  Under the IOB constraint a tag either follows any tag (`O`, `B-X`: its
  best predecessor is the overall best tag) or only a few (`I-X`: `B-X` or
  `I-X`), so a step needs one max over the tags plus a max over each
  constrained tag's few allowed predecessors, gathered by constant indices:
  [B, S] operations instead of an [B, S, S] sum, max and arg-max, which are
  most of a query's decoding time in TFLite. The same choices as
  `_dense_step`, ties included (the lowest tag id wins): a forbidden
  transition never wins there either, because every tag's best score is
  that of a valid path and FORBIDDEN is far below any score difference.

  Returns:
    The step function, or None when `transitions` holds other values than
    0 and `FORBIDDEN` (or a tag that follows no tag), which the dense step
    handles.
  """
  transitions = np.asarray(transitions)
  if not np.all((transitions == 0) | (transitions == FORBIDDEN)):
    return None
  allowed = transitions == 0
  free = allowed.all(axis=0)
  predecessors = [np.flatnonzero(column) for column in allowed.T]
  if any(len(p) == 0 for p in predecessors):
    return None
  width = max([len(p) for p, f in zip(predecessors, free) if not f],
              default=1)
  # [S, width] ids of each tag's allowed predecessors in increasing order,
  # the last one repeated (free tags read anything: their column is unused).
  index = np.array([np.pad(p, (0, width - len(p)), "edge")
                    if not f else np.zeros([width], np.int64)
                    for p, f in zip(predecessors, free)], np.int32)
  free = tf.constant(free[np.newaxis, :])

  def step(best):
    pair_best = tf.gather(best, index[:, 0], axis=1)
    pair_pointer = tf.constant(index[:, 0])  # [S], broadcast by tf.where.
    for k in range(1, width):
      other = tf.gather(best, index[:, k], axis=1)
      # Strictly greater: the lower id keeps a tie, as in an arg-max.
      better = other > pair_best
      pair_best = tf.maximum(pair_best, other)
      pair_pointer = tf.where(better, index[:, k], pair_pointer)
    overall = tf.reduce_max(best, axis=1, keepdims=True)
    overall_pointer = tf.argmax(best, axis=1, output_type=tf.int32)
    return (tf.where(free, overall, pair_best),
            tf.where(free, tf.expand_dims(overall_pointer, 1), pair_pointer))

  return step


def viterbi_decode_numpy(word_logits, num_words, start, transitions):
  """`viterbi_decode` in NumPy: a list of per-query tag-id lists."""
  start = np.asarray(start)
  transitions = np.asarray(transitions)
  constraint_only = _constraint_only(start, transitions)
  decoded = []
  for logits, count in zip(np.asarray(word_logits, np.float64),
                           np.asarray(num_words).reshape([-1])):
    count = int(count)
    if count == 0:
      decoded.append([])
      continue
    shifted = logits[:count] - logits[:count].max(-1, keepdims=True)
    scores = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    arg_max = scores.argmax(-1)
    if constraint_only and start[arg_max[0]] == 0 and np.all(
        transitions[arg_max[:-1], arg_max[1:]] == 0):
      decoded.append([int(tag) for tag in arg_max])
      continue
    best = start + scores[0]
    pointers = []
    for t in range(1, count):
      candidates = best[:, None] + transitions
      pointers.append(candidates.argmax(0))
      best = candidates.max(0) + scores[t]
    tags = [int(best.argmax())]
    for pointer in reversed(pointers):
      tags.append(int(pointer[tags[-1]]))
    decoded.append(tags[::-1])
  return decoded
