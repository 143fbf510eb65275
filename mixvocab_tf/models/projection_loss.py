"""The projection loss of "dual training" over all layers of two encoders.

The earlier version of the paper (Zhao et al., "Extreme Language Model
Compression with Optimal Subwords and Shared Projections", arXiv:1909.11687)
aligns the student's transformer layers with the teacher's: with one pair of
shared projection matrices (`SharedProjDown` or `SharedProjUp`) every teacher
layer weight matrix is projected to the student's shape (or the reverse), and
the mean squared difference to the corresponding student matrix is added to the
training loss. Layer i of the teacher corresponds to layer i of the student.
"""

import tensorflow as tf

from mixvocab_tf.layers import shared_projection
from mixvocab_tf.networks import bert_variables

_LAYER_PREFIX = "bert/encoder/layer_"


def transformer_weight_pairs(teacher_encoder, student_encoder,
                             include_vectors=False):
  """Corresponding transformer-layer weights of a teacher and a student.

  Args:
    teacher_encoder: A `DualVocabBertEncoder`, `PlainBertEncoder` or
      `BertEncoderV2`.
    student_encoder: An encoder of the same kinds with as many layers.
    include_vectors: Also pair biases and LayerNorm parameters (by default only
      the 6 weight matrices per layer: query, key, value, attention output,
      intermediate, output).

  Returns:
    A list of (google name, teacher weight, student weight), weights as 2-D
    [in, out] tensors (1-D for vectors) that are differentiable views of the
    variables.
  """
  teacher = bert_variables.encoder_variables(teacher_encoder,
                                             include_word_embeddings=False)
  student = bert_variables.encoder_variables(student_encoder,
                                             include_word_embeddings=False)
  teacher_layers = len(teacher_encoder.transformer_layers)
  student_layers = len(student_encoder.transformer_layers)
  if teacher_layers != student_layers:
    raise ValueError("Shared projections pair layer i with layer i and need as "
                     "many layers in both encoders; received "
                     f"{teacher_layers} (teacher) and {student_layers} "
                     "(student).")
  pairs = []
  for name, teacher_variable in teacher.items():
    if not name.startswith(_LAYER_PREFIX):
      continue
    if not include_vectors and not name.endswith("/kernel"):
      continue
    student_variable = student[name]
    pairs.append((
        name,
        tf.reshape(teacher_variable, bert_variables.canonical_shape(
            name, teacher_variable.shape)),
        tf.reshape(student_variable, bert_variables.canonical_shape(
            name, student_variable.shape))))
  return pairs


def shared_projection_loss(teacher_encoder, student_encoder, projection,
                           include_vectors=False):
  """Mean over layer weights of the projection's mean squared difference.

  Example:
  ```python
  projection = SharedProjDown(teacher_hidden_size=384, student_hidden_size=96)
  loss = task_loss + weight * shared_projection_loss(teacher, student,
                                                     projection)
  ```

  Args:
    teacher_encoder: The teacher encoder.
    student_encoder: The student encoder, with as many layers.
    projection: A `SharedProjDown` (teacher weights projected down, compared
      with the student's) or `SharedProjUp` (student weights projected up).
    include_vectors: See `transformer_weight_pairs`.

  Returns:
    A float scalar; gradients reach U, V and both encoders' weights (stop them
    on a frozen side with its `trainable` flag or `tf.stop_gradient` in the
    task).
  """
  if not isinstance(projection, (shared_projection.SharedProjDown,
                                 shared_projection.SharedProjUp)):
    raise ValueError("projection must be a SharedProjDown or SharedProjUp; "
                     f"received a {type(projection).__name__}.")
  losses = []
  for name, teacher_weight, student_weight in transformer_weight_pairs(
      teacher_encoder, student_encoder, include_vectors):
    if isinstance(projection, shared_projection.SharedProjDown):
      projected, target = projection(teacher_weight), student_weight
    else:
      projected, target = projection(student_weight), teacher_weight
    if projected.shape != target.shape:
      raise ValueError(
          f"{name}: the projected weight has shape {projected.shape.as_list()} "
          f"but its counterpart has {target.shape.as_list()}; teacher and "
          "student need the same inner_dim / hidden_size ratio.")
    losses.append(tf.reduce_mean(tf.math.squared_difference(
        projected, tf.cast(target, projected.dtype))))
  return tf.add_n(losses) / len(losses)
