"""Word embeddings over two vocabularies, for the mixed-vocabulary teacher.

Implements the input side of stage I of Zhao et al., "Extremely Small BERT Models
from Mixed-Vocabulary Training" (EACL 2021), Section 3 and Figure 1: the teacher
reads a sequence in which every word was segmented either with the teacher's
WordPiece vocabulary or with the student's. Each token therefore arrives as a pair
(id in its own vocabulary, vocabulary tag). A teacher-vocabulary token (tag 0)
looks up the teacher table (width d_t); a student-vocabulary token (tag 1) looks
up the student table (width d_s, the student's hidden size) and goes through a
trainable affine up-projection d_s -> d_t, so that the student table learns
embeddings that the teacher's layers can read. Stage II later initialises the
student's input table from this student table.
"""

import tensorflow as tf
import tf_keras

from official.modeling import tf_utils
from official.nlp.modeling import layers as nlp_layers

# Tag values of `input_vocab_ids`.
TEACHER_VOCAB_ID = 0
STUDENT_VOCAB_ID = 1


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class DualVocabEmbedding(tf_keras.layers.Layer):
  """Looks each token up in the table of the vocabulary that produced it.

  Example:
  ```python
  layer = DualVocabEmbedding(teacher_vocab_size=30522, student_vocab_size=4928,
                             teacher_embedding_width=384,
                             student_embedding_width=96)
  embeddings = layer(dict(input_word_ids=ids, input_vocab_ids=tags))  # [B, L, 384]
  ```

  Ids are in their own vocabulary's id space, so a student id may be out of the
  teacher table's range and vice versa. Before each lookup the ids of the other
  vocabulary are replaced by 0; `tf.where` then picks the row of the right table,
  which also keeps gradients out of the unused table. Tags other than 1 are
  read as the teacher vocabulary (padding is id 0, tag 0).

  Args:
    teacher_vocab_size: Rows of the teacher table.
    student_vocab_size: Rows of the student table.
    teacher_embedding_width: d_t, the width of the output.
    student_embedding_width: d_s, the width of the student table.
    initializer: Initializer of both tables and of the up-projection kernel.
    use_one_hot: Look the tables up with a one-hot matmul (faster on TPUs) instead
      of `tf.gather`.
    **kwargs: Keyword arguments of `tf_keras.layers.Layer`.

  Call arguments:
    inputs: A dict with int `input_word_ids` [B, L] and `input_vocab_ids` [B, L].
      A missing `input_vocab_ids` means every token is a teacher token.

  Returns:
    Float embeddings [B, L, teacher_embedding_width].
  """

  def __init__(self,
               teacher_vocab_size,
               student_vocab_size,
               teacher_embedding_width,
               student_embedding_width,
               initializer="glorot_uniform",
               use_one_hot=False,
               **kwargs):
    super().__init__(**kwargs)
    for arg_name, value in (("teacher_vocab_size", teacher_vocab_size),
                            ("student_vocab_size", student_vocab_size),
                            ("teacher_embedding_width", teacher_embedding_width),
                            ("student_embedding_width", student_embedding_width)):
      if int(value) <= 0:
        raise ValueError(f"{arg_name} must be a positive integer; received "
                         f"{value!r}.")
    self.teacher_vocab_size = int(teacher_vocab_size)
    self.student_vocab_size = int(student_vocab_size)
    self.teacher_embedding_width = int(teacher_embedding_width)
    self.student_embedding_width = int(student_embedding_width)
    self.initializer = tf_keras.initializers.get(initializer)
    self.use_one_hot = use_one_hot

    self._teacher_embedding_layer = nlp_layers.OnDeviceEmbedding(
        vocab_size=self.teacher_vocab_size,
        embedding_width=self.teacher_embedding_width,
        initializer=tf_utils.clone_initializer(self.initializer),
        use_one_hot=use_one_hot,
        name="teacher_word_embeddings")
    self._student_embedding_layer = nlp_layers.OnDeviceEmbedding(
        vocab_size=self.student_vocab_size,
        embedding_width=self.student_embedding_width,
        initializer=tf_utils.clone_initializer(self.initializer),
        use_one_hot=use_one_hot,
        name="student_word_embeddings")
    # Affine, as in the paper's stage I: the bias lets the student table stay
    # centred while the teacher's embedding space is not.
    self._up_projection = tf_keras.layers.EinsumDense(
        "...s,st->...t",
        output_shape=self.teacher_embedding_width,
        bias_axes="t",
        kernel_initializer=tf_utils.clone_initializer(self.initializer),
        name="up_projection")

  def build(self, input_shape):
    # Built eagerly (not lazily on first call) so that weights can be loaded into
    # the tables before any forward pass.
    self._teacher_embedding_layer.build([None])
    self._student_embedding_layer.build([None])
    self._up_projection.build([None, self.student_embedding_width])
    super().build(input_shape)

  def call(self, inputs):
    if not isinstance(inputs, dict):
      raise ValueError("DualVocabEmbedding expects a dict with input_word_ids "
                       f"and input_vocab_ids; received {type(inputs)}.")
    word_ids = inputs["input_word_ids"]
    vocab_ids = inputs.get("input_vocab_ids")
    if vocab_ids is None:
      return self._teacher_embedding_layer(word_ids)
    is_student = tf.equal(tf.cast(vocab_ids, word_ids.dtype),
                          tf.cast(STUDENT_VOCAB_ID, word_ids.dtype))
    zeros = tf.zeros_like(word_ids)
    teacher_embeddings = self._teacher_embedding_layer(
        tf.where(is_student, zeros, word_ids))
    student_embeddings = self._project_up(
        self._student_embedding_layer(tf.where(is_student, word_ids, zeros)))
    student_embeddings = tf.cast(student_embeddings, teacher_embeddings.dtype)
    return tf.where(is_student[..., tf.newaxis], student_embeddings,
                    teacher_embeddings)

  def _project_up(self, embeddings):
    """The affine d_s -> d_t map as one 2-D matmul.

    The same weights as calling `self._up_projection`, but a rank-2 matmul: the
    gradient of the layer's `...s,st->...t` einsum over [B, L, d_s] inputs
    costs about as much as the teacher's first layer on CPU.
    """
    kernel = tf.cast(self._up_projection.kernel, embeddings.dtype)
    bias = tf.cast(self._up_projection.bias, embeddings.dtype)
    flat = tf.reshape(embeddings, [-1, self.student_embedding_width])
    projected = tf.nn.bias_add(tf.matmul(flat, kernel), bias)
    return tf.reshape(projected, tf.concat(
        [tf.shape(embeddings)[:-1], [self.teacher_embedding_width]], axis=0))

  @property
  def teacher_embeddings(self):
    """The teacher table, [teacher_vocab_size, teacher_embedding_width]."""
    return self._teacher_embedding_layer.embeddings

  @property
  def student_embeddings(self):
    """The student table, [student_vocab_size, student_embedding_width]."""
    return self._student_embedding_layer.embeddings

  @property
  def student_embedding_layer(self):
    """The student table's lookup layer (`OnDeviceEmbedding`), shareable with
    a student encoder that reads the same table (dual training)."""
    return self._student_embedding_layer

  @property
  def up_projection(self):
    """The d_s -> d_t EinsumDense layer (`kernel` [d_s, d_t], `bias` [d_t])."""
    return self._up_projection

  def get_config(self):
    config = super().get_config()
    config.update({
        "teacher_vocab_size": self.teacher_vocab_size,
        "student_vocab_size": self.student_vocab_size,
        "teacher_embedding_width": self.teacher_embedding_width,
        "student_embedding_width": self.student_embedding_width,
        "initializer": tf_keras.initializers.serialize(self.initializer),
        "use_one_hot": self.use_one_hot,
    })
    return config
