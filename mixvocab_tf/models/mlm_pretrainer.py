"""A BERT encoder with one masked-LM head: the student, or the plain teacher.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3: in stage II the student is trained with a masked-LM loss over
the student vocabulary, and the baselines (no-KD, DistilBERT, TinyBERT) use a
student or the unmodified teacher with one MLM head. The head is
`official.nlp.modeling.layers.MaskedLM` (dense + LayerNorm, output weights tied
to the encoder's word table), evaluated only at `masked_lm_positions`. The model
returns logits; losses belong to the tasks.
"""

import tensorflow as tf
import tf_keras

from official.modeling import tf_utils
from official.nlp.modeling import layers as nlp_layers

from mixvocab_tf.networks import plain_bert_encoder
from mixvocab_tf.networks import student_encoder

FEATURE_NAMES = ("input_word_ids", "input_mask", "input_type_ids",
                 "input_vocab_ids")


def default_mlm_initializer():
  return tf_keras.initializers.TruncatedNormal(stddev=0.02)


def encoder_activation(encoder):
  """The encoder's feed-forward activation (BERT's MLM transform uses it too)."""
  config = encoder.get_config()
  return config.get("inner_activation", "gelu")


def build_heads_and_set_save_spec(model, heads, hidden_size):
  """Creates the heads' weights now, and a batch- and length-agnostic save spec.

  The heads are run once on a dummy batch outside any graph (so weights exist for
  loading and for SavedModel restores, see `plain_bert_encoder`); the model
  itself is not called, and its save spec is set by hand so that a SavedModel
  export accepts any batch size and sequence length.
  """
  with tf.init_scope():
    sequence = tf.zeros((1, 1, hidden_size))
    positions = tf.zeros((1, 1), tf.int32)
    for head in heads:
      head(sequence, masked_positions=positions)
  spec = {name: tf.TensorSpec([None, None], tf.int32, name=name)
          for name in FEATURE_NAMES + ("masked_lm_positions",)}
  model._set_save_spec(spec, [], {})  # pylint: disable=protected-access


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class MLMPretrainer(tf_keras.Model):
  """An encoder and one masked-LM head over the encoder's vocabulary.

  Example:
  ```python
  student = MLMPretrainer(build_student_encoder("L6-H96", vocab_size=4928))
  outputs = student(dict(input_word_ids=ids, input_mask=mask,
                         input_type_ids=types, masked_lm_positions=positions))
  outputs["mlm_logits"]  # [B, P, 4928]
  ```

  Args:
    encoder_network: A single-vocabulary encoder with `get_embedding_table()`
      and dict outputs (e.g. `PlainBertEncoder`).
    mlm_activation: Activation of the head's transform; None uses the encoder's
      `inner_activation`, as BERT does.
    mlm_initializer: Initializer of the head's transform.
    **kwargs: Keyword arguments of `tf_keras.Model` (e.g. `name`).

  Call arguments:
    inputs: A dict of int features [B, L] (`input_word_ids`, `input_mask`,
      `input_type_ids`; others are passed to the encoder) and optionally
      `masked_lm_positions` [B, P].
    training: Whether dropout is on.

  Returns:
    The encoder's output dict (`sequence_output`, `pooled_output`,
    `encoder_outputs`, ...) plus `mlm_logits` [B, P, V] when
    `masked_lm_positions` is given.
  """

  def __init__(self, encoder_network, mlm_activation=None,
               mlm_initializer=None, name="mlm_pretrainer", **kwargs):
    super().__init__(name=name, **kwargs)
    self._check_encoder(encoder_network)
    self._init_config(encoder_network, mlm_activation, mlm_initializer)
    self._create_heads()
    build_heads_and_set_save_spec(self, [head for _, _, head in self._heads()],
                                  self._encoder_hidden_size())
    # Every weight exists now (count_params, summary and loading work at once).
    self.built = True

  def _check_encoder(self, encoder_network):
    if not hasattr(encoder_network, "get_embedding_table"):
      raise ValueError(f"{type(self).__name__} needs an encoder with "
                       "get_embedding_table(); received a "
                       f"{type(encoder_network).__name__}.")

  def _make_head(self, embedding_table, name):
    return nlp_layers.MaskedLM(
        embedding_table=embedding_table,
        activation=self._mlm_activation,
        initializer=tf_utils.clone_initializer(self._mlm_initializer),
        name=name)

  def _create_heads(self):
    self.masked_lm = self._make_head(
        self.encoder_network.get_embedding_table(), "cls/predictions")

  def _init_config(self, encoder_network, mlm_activation, mlm_initializer):
    self.encoder_network = encoder_network
    if mlm_initializer is None:
      mlm_initializer = default_mlm_initializer()
    self._mlm_initializer = tf_keras.initializers.get(mlm_initializer)
    self._mlm_activation_config = (
        mlm_activation if mlm_activation is None or isinstance(
            mlm_activation, str) else tf_utils.serialize_activation(
                mlm_activation, use_legacy_format=True))
    self._mlm_activation = tf_keras.activations.get(
        encoder_activation(encoder_network) if mlm_activation is None
        else mlm_activation)
    if not encoder_network.built:
      # Networks of this package build at construction; others on first call.
      plain_bert_encoder.build_with_dummy_inputs(
          encoder_network,
          ("input_word_ids", "input_mask", "input_type_ids"))

  def _encoder_hidden_size(self):
    return int(self.encoder_network.get_config()["hidden_size"])

  def _heads(self):
    """(output key, checkpoint key, MaskedLM head) for every head."""
    return [("mlm_logits", "masked_lm", self.masked_lm)]

  def call(self, inputs, training=None):
    if not isinstance(inputs, dict):
      raise ValueError(f"{type(self).__name__} expects a dict of features; "
                       f"received {type(inputs)}.")
    encoder_inputs = {k: v for k, v in inputs.items()
                      if k != "masked_lm_positions"}
    outputs = dict(self.encoder_network(encoder_inputs, training=training))
    positions = inputs.get("masked_lm_positions")
    if positions is not None:
      for key, _, head in self._heads():
        outputs[key] = head(outputs["sequence_output"],
                            masked_positions=positions)
    return outputs

  def build_from_config(self, config):
    # Weights are created at construction; Keras' default would instead call
    # `build` on float placeholders, which an embedding lookup rejects.
    del config

  @property
  def checkpoint_items(self):
    """Sub-objects for `tf.train.Checkpoint`, as in `BertPretrainerV2`."""
    items = dict(encoder=self.encoder_network)
    items.update({key: head for _, key, head in self._heads()})
    return items

  def get_config(self):
    return {
        "encoder_network": tf_keras.layers.serialize(self.encoder_network),
        "mlm_activation": self._mlm_activation_config,
        "mlm_initializer": tf_utils.serialize_initializer(
            self._mlm_initializer, use_legacy_format=True),
        "name": self.name,
    }

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    config["encoder_network"] = tf_keras.layers.deserialize(
        config["encoder_network"], custom_objects=custom_objects)
    return cls(**config)


def build_student_pretrainer(preset=None, vocab_size=None, **overrides):
  """A student encoder (see `networks.build_student_encoder`) with its MLM head.

  Example:
  ```python
  student = build_student_pretrainer("L6-H96", vocab_size=4928)
  ```

  Args:
    preset: A student preset name, or None to give all sizes in `overrides`.
    vocab_size: Student vocabulary size (default: the paper's 4,928).
    **overrides: `BertEncoderV2` arguments applied over the preset.

  Returns:
    An `MLMPretrainer` whose `mlm_logits` cover the student vocabulary.
  """
  if vocab_size is None:
    vocab_size = student_encoder.PAPER_STUDENT_VOCAB_SIZE
  return MLMPretrainer(student_encoder.build_student_encoder(
      preset, vocab_size=vocab_size, **overrides))
