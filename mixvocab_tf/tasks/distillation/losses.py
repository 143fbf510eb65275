"""Knowledge-distillation losses of the baselines and of cross-vocabulary stage II.

Pure functions on tensors, shared by the distillation tasks:

* soft targets: `kl_divergence` and `soft_cross_entropy` at a temperature T
  (Hinton et al., 2015; DistilBERT, Sanh et al., 2019, Section 2, scales the
  KL by T^2; PKD, Sun et al., 2019, Eq. 3; TinyBERT's prediction layer, Jiao et
  al., 2020, Eq. 10);
* hidden states: `cosine_distance` (DistilBERT's cosine loss),
  `mean_squared_error` (TinyBERT's embedding and hidden-state losses, Eqs. 8-9,
  on the student's states after a learned W_e / W_h) and
  `normalized_squared_error` (PKD's "patient" loss on [CLS], Eq. 5);
* attention: `attention_score_error`, TinyBERT's Eq. 7 on unnormalised
  attention scores, and `group_heads` for a teacher with more heads than the
  student;
* the layer map g(m) of TinyBERT (Section 3.1) and PKD-skip: `uniform_layer_map`.

Per-row functions reduce only the last axis and leave the weighting over
tokens or examples to the caller: tasks sum `loss * weight` over their replica
and divide by the global weight (`base_task.global_sum`), so an objective is a
mean over the global batch: `masked_sum` does the first half of that,
`mean_term` the second.
"""

from typing import List, Optional, Sequence, Tuple

import tensorflow as tf

from mixvocab_tf.core import base_task


def _check_temperature(temperature):
  if isinstance(temperature, (int, float)) and temperature <= 0:
    raise ValueError(f"temperature must be positive; received {temperature}.")


def kl_divergence(teacher_logits, student_logits, temperature=1.0):
  """KL(softmax(t / T) || softmax(s / T)) per row (last axis: classes).

  DistilBERT's distillation loss is T^2 times this (the T^2 keeps gradient
  magnitudes comparable across temperatures, Hinton et al., 2015); the
  teacher's distribution is a constant (no gradient flows to the teacher).

  Args:
    teacher_logits: [..., classes].
    student_logits: [..., classes], same shape.
    temperature: T > 0.

  Returns:
    float32 [...] KL divergences in nats, >= 0.
  """
  _check_temperature(temperature)
  teacher_log_probs = tf.nn.log_softmax(
      tf.stop_gradient(tf.cast(teacher_logits, tf.float32)) / temperature)
  student_log_probs = tf.nn.log_softmax(
      tf.cast(student_logits, tf.float32) / temperature)
  teacher_probs = tf.exp(teacher_log_probs)
  return tf.reduce_sum(teacher_probs * (teacher_log_probs - student_log_probs),
                       axis=-1)


def soft_cross_entropy(teacher_logits, student_logits, temperature=1.0):
  """-sum_k softmax(t / T)_k log softmax(s / T)_k per row.

  The soft-target loss of PKD (L_DS) and of TinyBERT's prediction layer. It
  differs from `kl_divergence` by the teacher's entropy, a constant for the
  student, so both give the same gradients.

  Args:
    teacher_logits: [..., classes].
    student_logits: [..., classes], same shape.
    temperature: T > 0.

  Returns:
    float32 [...] cross-entropies in nats.
  """
  _check_temperature(temperature)
  teacher_probs = tf.nn.softmax(
      tf.stop_gradient(tf.cast(teacher_logits, tf.float32)) / temperature)
  student_log_probs = tf.nn.log_softmax(
      tf.cast(student_logits, tf.float32) / temperature)
  return -tf.reduce_sum(teacher_probs * student_log_probs, axis=-1)


def cosine_distance(student, teacher):
  """1 - cos(student, teacher) per row (DistilBERT's L_cos).

  Args:
    student: [..., d].
    teacher: [..., d] (no gradient flows into it).

  Returns:
    float32 [...] in [0, 2]; rows of zeros count as orthogonal to anything.
  """
  student = tf.math.l2_normalize(tf.cast(student, tf.float32), axis=-1)
  teacher = tf.math.l2_normalize(
      tf.stop_gradient(tf.cast(teacher, tf.float32)), axis=-1)
  return 1.0 - tf.reduce_sum(student * teacher, axis=-1)


def mean_squared_error(student, teacher):
  """Mean over the last axis of (student - teacher)^2 (TinyBERT, Eqs. 8-9).

  Args:
    student: [..., d], already mapped to the teacher's width (W_e, W_h).
    teacher: [..., d].

  Returns:
    float32 [...].
  """
  difference = tf.cast(student, tf.float32) - tf.stop_gradient(
      tf.cast(teacher, tf.float32))
  return tf.reduce_mean(tf.square(difference), axis=-1)


def normalized_squared_error(student, teacher):
  """||s / ||s|| - t / ||t||||^2 per row (PKD's L_PT, Eq. 5).

  Args:
    student: [..., d] (e.g. the [CLS] state of one student layer).
    teacher: [..., d] (the [CLS] state of the mapped teacher layer).

  Returns:
    float32 [...] in [0, 4].
  """
  student = tf.math.l2_normalize(tf.cast(student, tf.float32), axis=-1)
  teacher = tf.math.l2_normalize(
      tf.stop_gradient(tf.cast(teacher, tf.float32)), axis=-1)
  return tf.reduce_sum(tf.square(student - teacher), axis=-1)


def group_heads(scores, num_heads):
  """Averages [B, H, L, L] attention scores over groups of H / num_heads heads.

  TinyBERT needs as many student heads as teacher heads. When the teacher has
  a multiple of the student's (12 and 4 here), consecutive teacher heads are
  averaged into one target per student head; this grouping is this package's
  choice, not TinyBERT's.

  Args:
    scores: [batch, heads, query, key] unnormalised attention scores.
    num_heads: the number of heads to reduce to; must divide `heads`.

  Returns:
    [batch, num_heads, query, key].
  """
  heads = scores.shape[1]
  if heads is None:
    raise ValueError("group_heads needs a static number of heads.")
  if heads == num_heads:
    return scores
  if num_heads <= 0 or heads % num_heads:
    raise ValueError(
        "The teacher's attention heads must be a multiple of the student's; "
        f"received {heads} and {num_heads}.")
  shape = tf.shape(scores)
  grouped = tf.reshape(scores, tf.stack(
      [shape[0], num_heads, heads // num_heads, shape[2], shape[3]]))
  return tf.reduce_mean(grouped, axis=2)


def attention_score_error(student_scores, teacher_scores, input_mask):
  """Squared error of unnormalised attention scores (TinyBERT, Eq. 7).

  Only (query, key) pairs of two real tokens count: TinyBERT's code zeroes
  the scores of padded keys; here padded queries and keys are left out, so
  the value does not depend on the amount of padding.

  Args:
    student_scores: [batch, heads, length, length] pre-softmax scores.
    teacher_scores: the same shape (after `group_heads`).
    input_mask: [batch, length], 1 for real tokens.

  Returns:
    (sum, count): float32 scalars; the sum over heads and valid pairs of the
    squared error, and the number of valid pairs times the number of heads.
    sum / count is the mean squared error per head and pair.
  """
  mask = tf.cast(input_mask, tf.float32)
  pairs = mask[:, None, :, None] * mask[:, None, None, :]
  difference = tf.cast(student_scores, tf.float32) - tf.stop_gradient(
      tf.cast(teacher_scores, tf.float32))
  heads = tf.cast(tf.shape(difference)[1], tf.float32)
  return (tf.reduce_sum(tf.square(difference) * pairs),
          tf.reduce_sum(pairs) * heads)


def masked_sum(values, weights) -> Tuple[tf.Tensor, tf.Tensor]:
  """(sum of values * weights, sum of weights), float32 scalars."""
  weights = tf.cast(weights, tf.float32)
  return (tf.reduce_sum(tf.cast(values, tf.float32) * weights),
          tf.reduce_sum(weights))


def positive_temperature(temperature) -> float:
  """`temperature` as a float; a clear error unless it is positive."""
  if temperature <= 0:
    raise ValueError(f"temperature must be positive; received {temperature}.")
  return float(temperature)


def checked_weights(owner: str, weights, suffix: str = "_weight",
                    require_positive: bool = True):
  """Loss weights {name: weight} as floats, each >= 0 (and one > 0).

  Args:
    owner: who takes them (for the error), e.g. "TinyBertTask".
    weights: {name: weight}; the error names `name + suffix`, the argument
      the user set.
    suffix: appended to a name in errors.
    require_positive: refuse all-zero weights (an objective of nothing).
  """
  out = {name: float(value) for name, value in weights.items()}
  for name, value in out.items():
    if value < 0:
      raise ValueError(f"{name}{suffix} must be >= 0; received {value}.")
  if require_positive and not any(out.values()):
    raise ValueError(f"{owner} needs a positive weight; received {out}.")
  return out


def mean_term(total, count):
  """This replica's share of a mean over the global batch: total / sum of
  `count` over the replicas (0 when nothing counts)."""
  return tf.math.divide_no_nan(total, base_task.global_sum(count))


def uniform_layer_map(num_student_layers: int, num_teacher_layers: int,
                      layer_map: Optional[Sequence[int]] = None) -> List[int]:
  """The layer map g: student layer m -> teacher layer g(m), both 1-based.

  TinyBERT's uniform strategy, g(m) = m * N / M (rounded down), e.g. [3, 6, 9,
  12] for a 4-layer student of a 12-layer teacher; with M = N it is the
  identity. Layer 0 is the embedding layer on both sides (g(0) = 0).

  Args:
    num_student_layers: M.
    num_teacher_layers: N >= M.
    layer_map: an explicit map to validate and return instead (M teacher
      layers in 1..N, increasing), e.g. the last M layers for PKD-last.

  Returns:
    [g(1), ..., g(M)].
  """
  if num_student_layers <= 0 or num_teacher_layers < num_student_layers:
    raise ValueError(
        "A layer map needs 0 < student layers <= teacher layers; received "
        f"{num_student_layers} and {num_teacher_layers}.")
  if layer_map is None:
    return [m * num_teacher_layers // num_student_layers
            for m in range(1, num_student_layers + 1)]
  layer_map = [int(g) for g in layer_map]
  if (len(layer_map) != num_student_layers or
      any(not 1 <= g <= num_teacher_layers for g in layer_map) or
      any(a >= b for a, b in zip(layer_map, layer_map[1:]))):
    raise ValueError(
        f"layer_map must list {num_student_layers} increasing teacher layers "
        f"in 1..{num_teacher_layers} (one per student layer); received "
        f"{layer_map}.")
  return layer_map
