"""Sentence (pair) classification on a BERT encoder: GLUE SST-2, MRPC, MNLI.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4.2 and Table 2, fine-tune their students on GLUE with a
classifier on the pooled [CLS] output, as BERT does. Model Garden's
`BertClassifier` would be the one to reuse, but it is a functional model built
on `encoder_network.inputs`, which `BertEncoderV2` (a layer) does not have;
this is the same head as a subclassed model, built at construction and
serializable like the package's other models.
"""

import tensorflow as tf
import tf_keras

from official.modeling import tf_utils

from mixvocab_tf.models import joint_intent_slot_model

INPUT_NAMES = joint_intent_slot_model.INPUT_NAMES
#: What the classifier reads (`SentenceClassifier.pooling`).
POOLINGS = ("cls", "mean")


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class SentenceClassifier(tf_keras.Model):
  """An encoder with a dropout + dense classifier on its pooled output.

  Example:
  ```python
  model = SentenceClassifier(build_student_encoder("L6-H96", 4928),
                             num_classes=3)
  model(dict(input_word_ids=ids, input_mask=mask,
             input_type_ids=types))["logits"]  # [B, 3]
  ```

  Args:
    encoder_network: a BERT encoder taking a dict of `input_word_ids`,
      `input_mask`, `input_type_ids` and returning `pooled_output`.
    num_classes: number of classes.
    dropout_rate: dropout on the pooled output.
    pooling: what the classifier reads: 'cls', the encoder's pooled [CLS]
      output (BERT's head), or 'mean', the mean of the sequence output over
      the sentence's tokens (its `input_mask`; [CLS] and [SEP] included). A
      student pretrained with MLM alone has never trained its [CLS] pooler
      (no next-sentence task); the mean reads the token states MLM trained.
    initializer: initializer of the classifier's kernel (default: truncated
      normal, stddev 0.02).
    **kwargs: keyword arguments of `tf_keras.Model` (e.g. `name`).

  Call arguments:
    inputs: a dict of int [B, L] `input_word_ids`, `input_mask` and
      `input_type_ids` (0 on [CLS] A [SEP], 1 on B [SEP]); other keys are
      ignored.
    training: whether dropout is on.

  Returns:
    `{'logits': float32 [B, num_classes], 'pooled_output': [B, hidden]}`,
    the latter what the classifier reads (before its dropout), e.g. for a
    representation-level distillation loss (`distill_text_classification`).
  """

  def __init__(self, encoder_network, num_classes, dropout_rate=0.1,
               initializer=None, pooling="cls", name="sentence_classifier",
               **kwargs):
    super().__init__(name=name, **kwargs)
    if (not isinstance(num_classes, int) or isinstance(num_classes, bool) or
        num_classes < 1):
      raise ValueError(f"num_classes must be a positive integer; received "
                       f"{num_classes!r}.")
    if not 0.0 <= float(dropout_rate) < 1.0:
      raise ValueError(f"dropout_rate must be in [0, 1); received "
                       f"{dropout_rate!r}.")
    if pooling not in POOLINGS:
      raise ValueError(f"pooling must be one of {POOLINGS}; received "
                       f"{pooling!r}.")
    self.pooling = pooling
    self.encoder_network = encoder_network
    self.num_classes = num_classes
    self.dropout_rate = float(dropout_rate)
    self._initializer = tf_keras.initializers.get(
        initializer or joint_intent_slot_model.default_head_initializer())
    self.dropout = tf_keras.layers.Dropout(self.dropout_rate, name="dropout")
    self.classifier = tf_keras.layers.Dense(
        num_classes, kernel_initializer=tf_utils.clone_initializer(
            self._initializer), dtype="float32", name="classifier")
    joint_intent_slot_model.ensure_built(
        self, encoder_network, [(self.classifier, 2)],
        joint_intent_slot_model.encoder_hidden_size(encoder_network))
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
    if self.pooling == "mean":
      mask = tf.cast(inputs["input_mask"], outputs["sequence_output"].dtype)
      mask = tf.expand_dims(mask, -1)
      pooled = tf.reduce_sum(outputs["sequence_output"] * mask, axis=1) / (
          tf.maximum(tf.reduce_sum(mask, axis=1), 1.0))
    else:
      pooled = outputs["pooled_output"]
    return {"logits": self.classifier(self.dropout(pooled, training=training)),
            "pooled_output": pooled}

  def build_from_config(self, config):
    del config  # Built at construction, as JointIntentSlotModel.

  @property
  def checkpoint_items(self):
    return dict(encoder=self.encoder_network, classifier=self.classifier)

  def get_config(self):
    return {
        "encoder_network": tf_keras.layers.serialize(self.encoder_network),
        "num_classes": self.num_classes,
        "dropout_rate": self.dropout_rate,
        "pooling": self.pooling,
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
