"""The mixed-vocabulary teacher encoder: BERT over two input vocabularies.

Stage I of Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary
Training" (EACL 2021), Section 3 and Figure 1, fine-tunes the teacher on
mixed-vocabulary input: each word is segmented with the teacher's or the student's
WordPiece vocabulary, teacher tokens are embedded with the teacher table and
student tokens with the student table followed by a d_s -> d_t up-projection.
Everything after the word embeddings (position and type embeddings, LayerNorm, the
transformer layers, the pooler) is the stock BERT encoder, so this network is a
`DualVocabEmbedding` in front of `official.nlp.modeling.networks.BertEncoderV2`,
which accepts precomputed `input_word_embeddings`.
"""

import tensorflow as tf
import tf_keras

from official.modeling import tf_utils
from official.nlp.modeling import networks as nlp_networks

from mixvocab_tf.layers import dual_vocab_embedding
from mixvocab_tf.networks import batched_attention
from mixvocab_tf.networks import plain_bert_encoder


def _serialize_activation(activation):
  if isinstance(activation, str):
    return activation
  return tf_utils.serialize_activation(activation, use_legacy_format=True)


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class DualVocabBertEncoder(tf_keras.layers.Layer):
  """BERT encoder whose word embeddings come from a teacher and a student table.

  Example:
  ```python
  encoder = DualVocabBertEncoder(
      teacher_vocab_size=30522, student_vocab_size=4928,
      student_embedding_width=96, hidden_size=384, num_layers=6,
      num_attention_heads=12, inner_dim=1536)
  outputs = encoder(dict(input_word_ids=ids, input_mask=mask,
                         input_type_ids=types, input_vocab_ids=tags))
  outputs["sequence_output"]  # [B, L, 384]
  ```

  With every `input_vocab_ids` 0 (or none given) this is exactly a
  `BertEncoderV2` with the teacher table as its word embeddings. Weights are
  created at construction.

  Args:
    teacher_vocab_size: Size of the teacher's vocabulary.
    student_vocab_size: Size of the student's vocabulary.
    student_embedding_width: d_s, the width of the student table (the student's
      hidden size, so that stage II can start from this table).
    hidden_size: d_t, the teacher's hidden size (and teacher table width).
    num_layers: Number of transformer layers.
    num_attention_heads: Number of attention heads.
    max_sequence_length: Number of position embeddings.
    type_vocab_size: Number of token types.
    inner_dim: Width of the feed-forward layer.
    inner_activation: Feed-forward activation. "gelu" is the exact (erf) GELU,
      which is Hugging Face's "gelu"; "Text>gelu" is the tanh approximation used
      by google-research/bert.
    output_dropout: Dropout after embeddings, attention and feed-forward layers.
    attention_dropout: Dropout on attention probabilities.
    initializer: Initializer of all weights.
    return_attention_scores: Also output `attention_scores`, a list (one per
      layer) of [B, heads, L, L] attention probabilities (for distillation).
    return_word_embeddings: Also output `word_embeddings`, the normalized sum of
      word, position and type embeddings [B, L, d_t].
    **kwargs: Keyword arguments of `tf_keras.layers.Layer`.

  Call arguments:
    inputs: A dict of int tensors [B, L]: `input_word_ids`, `input_mask`,
      `input_type_ids` and `input_vocab_ids` (0 teacher, 1 student; optional).
    training: Whether dropout is on.

  Returns:
    A dict with `sequence_output` [B, L, d_t], `pooled_output` [B, d_t],
    `encoder_outputs` (list of [B, L, d_t], one per layer), and on request
    `attention_scores` and `word_embeddings`.
  """

  def __init__(self,
               teacher_vocab_size,
               student_vocab_size,
               student_embedding_width,
               hidden_size=768,
               num_layers=12,
               num_attention_heads=12,
               max_sequence_length=512,
               type_vocab_size=2,
               inner_dim=3072,
               inner_activation="gelu",
               output_dropout=0.1,
               attention_dropout=0.1,
               initializer=None,
               return_attention_scores=False,
               return_word_embeddings=False,
               **kwargs):
    super().__init__(**kwargs)
    if hidden_size % num_attention_heads:
      raise ValueError(
          "hidden_size must be divisible by num_attention_heads; received "
          f"{hidden_size} and {num_attention_heads}.")
    if initializer is None:
      initializer = tf_keras.initializers.TruncatedNormal(stddev=0.02)
    initializer = tf_keras.initializers.get(initializer)
    self._config = {
        "teacher_vocab_size": int(teacher_vocab_size),
        "student_vocab_size": int(student_vocab_size),
        "student_embedding_width": int(student_embedding_width),
        "hidden_size": int(hidden_size),
        "num_layers": int(num_layers),
        "num_attention_heads": int(num_attention_heads),
        "max_sequence_length": int(max_sequence_length),
        "type_vocab_size": int(type_vocab_size),
        "inner_dim": int(inner_dim),
        "inner_activation": _serialize_activation(inner_activation),
        "output_dropout": output_dropout,
        "attention_dropout": attention_dropout,
        "initializer": tf_utils.serialize_initializer(
            initializer, use_legacy_format=True),
        "return_attention_scores": return_attention_scores,
        "return_word_embeddings": return_word_embeddings,
    }
    self._embedding_layer = dual_vocab_embedding.DualVocabEmbedding(
        teacher_vocab_size=teacher_vocab_size,
        student_vocab_size=student_vocab_size,
        teacher_embedding_width=hidden_size,
        student_embedding_width=student_embedding_width,
        initializer=tf_utils.clone_initializer(initializer),
        name="dual_vocab_embedding")
    # The encoder's own word-embedding layer is never called (we always pass
    # `input_word_embeddings`), so it is never built and holds no weights.
    self._bert_encoder = nlp_networks.BertEncoderV2(
        vocab_size=teacher_vocab_size,
        hidden_size=hidden_size,
        num_layers=num_layers,
        num_attention_heads=num_attention_heads,
        max_sequence_length=max_sequence_length,
        type_vocab_size=type_vocab_size,
        inner_dim=inner_dim,
        inner_activation=inner_activation,
        output_dropout=output_dropout,
        attention_dropout=attention_dropout,
        initializer=tf_utils.clone_initializer(initializer),
        return_attention_scores=return_attention_scores,
        return_word_embeddings=return_word_embeddings,
        name="bert_encoder")
    self.inputs = dict(
        input_word_ids=tf_keras.Input(shape=(None,), dtype=tf.int32),
        input_mask=tf_keras.Input(shape=(None,), dtype=tf.int32),
        input_type_ids=tf_keras.Input(shape=(None,), dtype=tf.int32),
        input_vocab_ids=tf_keras.Input(shape=(None,), dtype=tf.int32))
    # Weights exist from construction on, for the reasons given in
    # plain_bert_encoder (loading, and tf_keras SavedModel reloads).
    plain_bert_encoder.build_with_dummy_inputs(self, tuple(self.inputs))
    # The attention products as batched matmuls (`batched_attention`): the
    # same forward outputs, faster training steps.
    batched_attention.use_batched_matmuls(self._bert_encoder)

  def call(self, inputs, training=None):
    if not isinstance(inputs, dict):
      raise ValueError("DualVocabBertEncoder expects a dict of features; "
                       f"received {type(inputs)}.")
    word_ids = inputs["input_word_ids"]
    word_embeddings = self._embedding_layer(
        {k: v for k, v in inputs.items()
         if k in ("input_word_ids", "input_vocab_ids")})
    mask = inputs.get("input_mask")
    if mask is None:
      mask = tf.ones_like(word_ids)
    type_ids = inputs.get("input_type_ids")
    if type_ids is None:
      type_ids = tf.zeros_like(word_ids)
    return self._bert_encoder(
        dict(input_word_ids=word_ids, input_mask=mask, input_type_ids=type_ids,
             input_word_embeddings=word_embeddings),
        training=training)

  def get_embedding_table(self):
    """The teacher word-embedding table (what the teacher-vocab MLM head ties to)."""
    return self._embedding_layer.teacher_embeddings

  def get_student_embedding_table(self):
    """The student word-embedding table [student_vocab_size, d_s]."""
    return self._embedding_layer.student_embeddings

  def get_embedding_layer(self):
    return self._embedding_layer

  @property
  def embedding_layer(self):
    return self._embedding_layer

  @property
  def up_projection(self):
    return self._embedding_layer.up_projection

  @property
  def bert_encoder(self):
    """The stock `BertEncoderV2` behind the word embeddings."""
    return self._bert_encoder

  @property
  def transformer_layers(self):
    return self._bert_encoder.transformer_layers

  @property
  def pooler_layer(self):
    return self._bert_encoder.pooler_layer

  def get_config(self):
    config = super().get_config()
    config.update(self._config)
    return config
