"""A single-vocabulary BERT encoder: the student, and the plain teacher.

The students of Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary
Training" (EACL 2021), Section 4, and the unmodified teacher that the baselines
distil from are ordinary BERT encoders. This is
`official.nlp.modeling.networks.BertEncoderV2` with one change: it creates its
weights when constructed. That lets checkpoint loaders assign weights right away,
and it works around a tf_keras bug: a `MultiHeadAttention` inside a custom layer
builds its variables lazily, so reloading a tf_keras SavedModel re-creates them
after the restore and silently drops the attention weights
(keras-team/tf-keras#514). Built at construction, the variables exist before
the restore and receive the saved values.
"""

import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks as nlp_networks

from mixvocab_tf.networks import batched_attention


def build_with_dummy_inputs(layer, feature_names):
  """Runs `layer` once on a [1, 1] batch, outside any graph, to create weights.

  The first call would also fix the layer's SavedModel save spec to [1, 1]; it is
  set beforehand to [None, None] so that exports take any batch and length.

  Args:
    layer: A layer taking a dict of int features.
    feature_names: The keys of that dict.
  """
  layer._set_save_spec({  # pylint: disable=protected-access
      name: tf.TensorSpec([None, None], tf.int32, name=name)
      for name in feature_names}, [], {})
  with tf.init_scope():
    ids = tf.zeros((1, 1), tf.int32)
    features = {name: ids for name in feature_names}
    if "input_mask" in features:
      features["input_mask"] = tf.ones((1, 1), tf.int32)
    layer(features, training=False)


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class PlainBertEncoder(nlp_networks.BertEncoderV2):
  """`BertEncoderV2` with its weights created at construction.

  Example:
  ```python
  encoder = PlainBertEncoder(vocab_size=4928, hidden_size=96, num_layers=6,
                             num_attention_heads=4, inner_dim=384)
  encoder.count_params()  # Available before any call.
  ```

  Args:
    **kwargs: The arguments of `BertEncoderV2` (vocab_size, hidden_size, ...).

  Call arguments and outputs are those of `BertEncoderV2`: a dict of int
  `input_word_ids`, `input_mask`, `input_type_ids` (other keys, such as
  `input_vocab_ids`, are ignored) to a dict with `sequence_output`,
  `pooled_output`, `encoder_outputs` and on request `attention_scores`.
  """

  def __init__(self, **kwargs):
    if kwargs.get("embedding_layer") is not None:
      raise ValueError("PlainBertEncoder owns its word embeddings; received an "
                       "embedding_layer, which it cannot serialize.")
    super().__init__(**kwargs)
    build_with_dummy_inputs(
        self, ("input_word_ids", "input_mask", "input_type_ids"))
    # The attention products as batched matmuls (`batched_attention`): the
    # same forward outputs, faster training steps.
    batched_attention.use_batched_matmuls(self)

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(**config)
