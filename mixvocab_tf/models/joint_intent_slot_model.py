"""Joint intent classification and slot tagging on a BERT encoder (SNIPS).

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4.2, fine-tune their students on SNIPS for the intent of a
query and one IOB slot tag per word, as Chen et al. (2019, "BERT for joint
intent classification and slot filling") do: the intent is predicted from the
pooled [CLS] output, and the tag of a word from the sequence output at the
word's first WordPiece. This model computes logits at every position; which
positions carry a loss (first pieces only) is the task's business
(`mixvocab_tf.tasks.finetuning.intent_slot.task`), and so is decoding the first pieces'
tags back to words (`intent_slot_data.decode_slot_tags`).

The model is a serializable tf_keras model (config round trip, `.keras` and
SavedModel reload), built at construction with a batch- and length-agnostic
save spec, so that `mixvocab_tf.export` can wrap it for serving.
"""

import tensorflow as tf
import tf_keras

from official.modeling import tf_utils

from mixvocab_tf.networks import plain_bert_encoder

#: The encoder features the model reads (other keys of a batch are ignored).
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def default_head_initializer():
  return tf_keras.initializers.TruncatedNormal(stddev=0.02)


def ensure_built(model, encoder_network, heads, hidden_size):
  """Creates the encoder's and the heads' weights now; sets the save spec.

  Networks of this package create their weights at construction; others
  (e.g. a stock `BertEncoderV2`) are run once on a dummy batch. The heads are
  run once on dummy inputs outside any graph, so every weight exists before a
  checkpoint restore or a SavedModel reload (see `plain_bert_encoder`); the
  model itself is not called, and its save spec is set by hand so that a
  SavedModel export accepts any batch size and sequence length.

  Args:
    model: the model owning `encoder_network` and `heads`.
    encoder_network: the encoder.
    heads: (layer, rank of its input) pairs: 2 for a [B, H] input, 3 for
      [B, L, H].
    hidden_size: the encoder's output width.
  """
  if not encoder_network.built:
    plain_bert_encoder.build_with_dummy_inputs(encoder_network, INPUT_NAMES)
  with tf.init_scope():
    for head, rank in heads:
      head(tf.zeros([1] * (rank - 1) + [hidden_size]))
  spec = {name: tf.TensorSpec([None, None], tf.int32, name=name)
          for name in INPUT_NAMES}
  model._set_save_spec(spec, [], {})  # pylint: disable=protected-access


def encoder_hidden_size(encoder_network):
  config = encoder_network.get_config()
  if "hidden_size" not in config:
    raise ValueError(
        "The encoder's config has no hidden_size; expected a BertEncoderV2-"
        f"like network, received a {type(encoder_network).__name__}.")
  return int(config["hidden_size"])


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class JointIntentSlotModel(tf_keras.Model):
  """An encoder with an intent head on [CLS] and a slot head on every token.

  Example:
  ```python
  encoder = build_student_encoder("L6-H96", vocab_size=4928)
  model = JointIntentSlotModel(encoder, num_intents=7, num_slots=72)
  outputs = model(dict(input_word_ids=ids, input_mask=mask,
                       input_type_ids=types))
  outputs["intent_logits"]  # [B, 7]
  outputs["slot_logits"]    # [B, L, 72]
  ```

  Args:
    encoder_network: a BERT encoder taking a dict of `input_word_ids`,
      `input_mask`, `input_type_ids` and returning a dict with
      `sequence_output` and `pooled_output` (e.g. `PlainBertEncoder`).
    num_intents: number of intent classes.
    num_slots: number of slot tags (IOB tags, 'O' included).
    dropout_rate: dropout on the encoder outputs before each head.
    initializer: initializer of the heads' kernels (default: truncated normal,
      stddev 0.02, as BERT).
    **kwargs: keyword arguments of `tf_keras.Model` (e.g. `name`).

  Call arguments:
    inputs: a dict of int [B, L] `input_word_ids`, `input_mask` (1 on real
      tokens; the encoder's attention ignores padding) and `input_type_ids`;
      other keys (labels, decoding aids) are ignored.
    training: whether dropout is on.

  Returns:
    A dict of float32 `intent_logits` [B, num_intents] and `slot_logits`
    [B, L, num_slots]. Slot logits exist at every position, padding and
    special tokens included; only a word's first WordPiece is tagged.

  Reference: Chen, Zhuo and Wang, "BERT for Joint Intent Classification and
  Slot Filling", arXiv:1902.10909.
  """

  def __init__(self, encoder_network, num_intents, num_slots,
               dropout_rate=0.1, initializer=None,
               name="joint_intent_slot_model", **kwargs):
    super().__init__(name=name, **kwargs)
    for arg, value in (("num_intents", num_intents), ("num_slots", num_slots)):
      if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{arg} must be a positive integer; received "
                         f"{value!r}.")
    if not 0.0 <= float(dropout_rate) < 1.0:
      raise ValueError(f"dropout_rate must be in [0, 1); received "
                       f"{dropout_rate!r}.")
    self.encoder_network = encoder_network
    self.num_intents = num_intents
    self.num_slots = num_slots
    self.dropout_rate = float(dropout_rate)
    self._initializer = tf_keras.initializers.get(
        initializer or default_head_initializer())
    self.intent_dropout = tf_keras.layers.Dropout(self.dropout_rate,
                                                  name="intent_dropout")
    self.slot_dropout = tf_keras.layers.Dropout(self.dropout_rate,
                                                name="slot_dropout")
    # float32 logits under mixed precision: softmax and cross-entropy stay
    # accurate, and serving sees one dtype.
    self.intent_classifier = tf_keras.layers.Dense(
        num_intents, kernel_initializer=tf_utils.clone_initializer(
            self._initializer), dtype="float32", name="intent_classifier")
    self.slot_classifier = tf_keras.layers.Dense(
        num_slots, kernel_initializer=tf_utils.clone_initializer(
            self._initializer), dtype="float32", name="slot_classifier")
    ensure_built(self, encoder_network,
                 [(self.intent_classifier, 2), (self.slot_classifier, 3)],
                 encoder_hidden_size(encoder_network))
    self.built = True

  def call(self, inputs, training=None):
    if not isinstance(inputs, dict):
      raise ValueError(f"{type(self).__name__} expects a dict of features "
                       f"{list(INPUT_NAMES)}; received {type(inputs)}.")
    missing = [k for k in INPUT_NAMES if k not in inputs]
    if missing:
      raise ValueError(f"{type(self).__name__} inputs lack {missing}; "
                       f"received {sorted(inputs)}.")
    outputs = self.encoder_network({k: inputs[k] for k in INPUT_NAMES},
                                   training=training)
    pooled = self.intent_dropout(outputs["pooled_output"], training=training)
    sequence = self.slot_dropout(outputs["sequence_output"], training=training)
    return {
        "intent_logits": self.intent_classifier(pooled),
        "slot_logits": self.slot_classifier(sequence),
    }

  def build_from_config(self, config):
    # Weights are created at construction; Keras' default would instead call
    # `build` on float placeholders, which an embedding lookup rejects.
    del config

  @property
  def checkpoint_items(self):
    """Sub-objects for `tf.train.Checkpoint`, as in Model Garden's models."""
    return dict(encoder=self.encoder_network,
                intent_classifier=self.intent_classifier,
                slot_classifier=self.slot_classifier)

  def get_config(self):
    return {
        "encoder_network": tf_keras.layers.serialize(self.encoder_network),
        "num_intents": self.num_intents,
        "num_slots": self.num_slots,
        "dropout_rate": self.dropout_rate,
        "initializer": tf_utils.serialize_initializer(
            self._initializer, use_legacy_format=True),
        "name": self.name,
    }

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    config["encoder_network"] = tf_keras.layers.deserialize(
        config["encoder_network"], custom_objects=custom_objects)
    return cls(**config)
