"""Shared projections between teacher and student weights ("dual training").

Implements the shared variable projections of the paper's earlier version (Zhao
et al., "Extreme Language Model Compression with Optimal Subwords and Shared
Projections", arXiv:1909.11687, 2019). One pair of trainable matrices
U, V in R^{d_t x d_s}, shared by all layers, maps teacher weights to the student's
shape (down: U^T W_t V) or student weights to the teacher's (up: U W_s V^T); the
mean squared difference to the other model's weight is added to the training
loss so that the student's layers are pulled towards the teacher's.

A transformer layer also has matrices whose sides are a multiple of the hidden
size (the d x 4d feed-forward kernels). Such a side is split into blocks of the
hidden size, and every block is projected with the same U (left side) or V (right
side), i.e. with I_k (x) U. This keeps a single pair of matrices, as in the
paper, and requires the teacher's and the student's ratio inner_dim / hidden to
be equal (4 for BERT and for the student presets). Vectors (biases, LayerNorm
parameters) are rows, projected on their only side with V.
"""

import tensorflow as tf
import tf_keras

from official.modeling import tf_utils


def _block_counts(shape, width, what):
  counts = []
  for size in shape:
    if size % width:
      raise ValueError(
          f"Every side of a {what} weight must be a multiple of its hidden size "
          f"{width}; received shape {list(shape)}.")
    counts.append(size // width)
  return counts


class _SharedProjection(tf_keras.layers.Layer):
  """U and V of shape [teacher_hidden_size, student_hidden_size]."""

  def __init__(self, teacher_hidden_size, student_hidden_size,
               initializer="glorot_uniform", **kwargs):
    super().__init__(**kwargs)
    for arg_name, value in (("teacher_hidden_size", teacher_hidden_size),
                            ("student_hidden_size", student_hidden_size)):
      if int(value) <= 0:
        raise ValueError(f"{arg_name} must be a positive integer; received "
                         f"{value!r}.")
    self.teacher_hidden_size = int(teacher_hidden_size)
    self.student_hidden_size = int(student_hidden_size)
    self.initializer = tf_keras.initializers.get(initializer)

  def build(self, input_shape=None):
    shape = (self.teacher_hidden_size, self.student_hidden_size)
    # Cloned so that an unseeded initializer does not give U == V.
    self.u = self.add_weight(
        "u", shape=shape, trainable=True,
        initializer=tf_utils.clone_initializer(self.initializer))
    self.v = self.add_weight(
        "v", shape=shape, trainable=True,
        initializer=tf_utils.clone_initializer(self.initializer))
    super().build(input_shape)

  def _project(self, weight, in_width, out_width, left, right):
    """Applies `left` [in, out] to the rows' blocks and `right` to the columns'."""
    weight = tf.convert_to_tensor(weight, dtype=self.compute_dtype)
    shape = weight.shape.as_list()
    what = "teacher" if in_width == self.teacher_hidden_size else "student"
    if len(shape) == 1:
      (k,) = _block_counts(shape, in_width, what)
      blocks = tf.reshape(weight, [k, in_width])
      return tf.reshape(tf.matmul(blocks, right), [k * out_width])
    if len(shape) == 2:
      k1, k2 = _block_counts(shape, in_width, what)
      blocks = tf.reshape(weight, [k1, in_width, k2, in_width])
      out = tf.einsum("io,aibj,jp->aobp", left, blocks, right)
      return tf.reshape(out, [k1 * out_width, k2 * out_width])
    raise ValueError(f"Shared projections take a vector or a matrix; received "
                     f"shape {shape}. Reshape attention kernels to [in, out].")

  def loss(self, teacher_weight, student_weight):
    """Mean squared difference after projecting to the target's shape."""
    raise NotImplementedError

  def get_config(self):
    config = super().get_config()
    config.update({
        "teacher_hidden_size": self.teacher_hidden_size,
        "student_hidden_size": self.student_hidden_size,
        "initializer": tf_keras.initializers.serialize(self.initializer),
    })
    return config


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class SharedProjDown(_SharedProjection):
  """Projects teacher weights to the student's shape: U^T W_t V.

  Example:
  ```python
  down = SharedProjDown(teacher_hidden_size=384, student_hidden_size=96)
  w = down(teacher_ffn_kernel)                       # [384, 1536] -> [96, 384]
  loss = down.loss(teacher_ffn_kernel, student_ffn_kernel)
  ```

  Args:
    teacher_hidden_size: d_t.
    student_hidden_size: d_s.
    initializer: Initializer of U and V.
    **kwargs: Keyword arguments of `tf_keras.layers.Layer`.

  Call arguments:
    inputs: A teacher weight, a vector [k * d_t] or a matrix
      [k1 * d_t, k2 * d_t].

  Returns:
    The projected weight, [k * d_s] or [k1 * d_s, k2 * d_s].
  """

  def call(self, inputs):
    return self._project(inputs, self.teacher_hidden_size,
                         self.student_hidden_size, self.u, self.v)

  def loss(self, teacher_weight, student_weight):
    return tf.reduce_mean(tf.math.squared_difference(
        self(teacher_weight), tf.cast(student_weight, self.compute_dtype)))


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class SharedProjUp(_SharedProjection):
  """Projects student weights to the teacher's shape: U W_s V^T.

  Example:
  ```python
  up = SharedProjUp(teacher_hidden_size=384, student_hidden_size=96)
  w = up(student_ffn_kernel)                         # [96, 384] -> [384, 1536]
  loss = up.loss(teacher_ffn_kernel, student_ffn_kernel)
  ```

  Args:
    teacher_hidden_size: d_t.
    student_hidden_size: d_s.
    initializer: Initializer of U and V.
    **kwargs: Keyword arguments of `tf_keras.layers.Layer`.

  Call arguments:
    inputs: A student weight, a vector [k * d_s] or a matrix
      [k1 * d_s, k2 * d_s].

  Returns:
    The projected weight, [k * d_t] or [k1 * d_t, k2 * d_t].
  """

  def call(self, inputs):
    return self._project(inputs, self.student_hidden_size,
                         self.teacher_hidden_size, tf.transpose(self.u),
                         tf.transpose(self.v))

  def loss(self, teacher_weight, student_weight):
    return tf.reduce_mean(tf.math.squared_difference(
        self(student_weight), tf.cast(teacher_weight, self.compute_dtype)))
