"""The attention products of the encoders as batched matmuls.

`tf_keras.layers.MultiHeadAttention` computes the attention scores and the
weighted values with `tf.einsum` over [batch, length, heads, head_dim]
tensors, and `_compute_attention` is the method it documents for overriding
that computation. The encoders of this package (`PlainBertEncoder`,
`DualVocabBertEncoder`) compute the same two products as `tf.matmul` over
[batch, heads, length, head_dim]: the forward outputs are the einsums' bit
for bit (tested), and the gradients differ in the last bits only. With
TensorFlow's oneDNN kernels (on by default on CPUs with AVX-512) the batched
matmuls and their gradients take less time in float32: at batch 64 and 128
tokens, 4 heads of 24, the attention's forward and backward pass took 39 ms
against 60 ms, and the student's training step 718 -> 668 ms (0.93x;
docs/PERFORMANCE.md).
Layers computing in another dtype (mixed bfloat16) keep the einsums, which
were the faster there.

Example:
```python
encoder = nlp_networks.BertEncoderV2(...)
encoder(features)  # Builds the blocks' attention layers.
batched_attention.use_batched_matmuls(encoder)
```
"""

# The override reads MultiHeadAttention's private attributes, as its own
# `_compute_attention` does.
# pylint: disable=protected-access

import math
import types

import tensorflow as tf

from mixvocab_tf.core import dropout as dropout_lib


def _compute_attention(self, query, key, value, attention_mask=None,
                       training=None):
  """`MultiHeadAttention._compute_attention` with batched matmuls.

  Args:
    self: a `tf_keras.layers.MultiHeadAttention` over axis 1 of rank-4
      projections.
    query: [B, T, N, key_dim].
    key: [B, S, N, key_dim].
    value: [B, S, N, value_dim].
    attention_mask: boolean [B, T, S] or None.
    training: whether dropout applies.

  Returns:
    The attention output [B, T, N, value_dim] and the scores [B, N, T, S],
    as the einsum version returns them.
  """
  if query.dtype != tf.float32:
    # In mixed bfloat16 (the own-data teacher on CPUs with AVX512-BF16 or
    # AMX) the einsums were faster: 181-246 against 154-205 examples/s for
    # the SNIPS teacher's step on an AMX Xeon.
    return type(self)._compute_attention(
        self, query, key, value, attention_mask=attention_mask,
        training=training)
  # The same scaling as tf_keras's, on the query.
  query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
  to_heads = [0, 2, 1, 3]
  query = tf.transpose(query, to_heads)
  key = tf.transpose(key, to_heads)
  value = tf.transpose(value, to_heads)
  scores = tf.matmul(query, key, transpose_b=True)
  scores = self._masked_softmax(scores, attention_mask)
  # In the trainer's steps (training a Python True, the layer's dropout
  # switched to 16-bit draws) the kept probabilities' scale multiplies the
  # [B, heads, T, head_dim] product instead of the [B, heads, T, T]
  # probabilities: one pass over the largest tensor fewer, forward and
  # backward. The same mask, drawn from the same generator.
  unscaled = (dropout_lib.unscaled_dropout(self._dropout_layer, scores)
              if training is True else None)
  if unscaled is None:
    weighted = tf.matmul(self._dropout_layer(scores, training=training), value)
  else:
    dropped, scale = unscaled
    weighted = tf.matmul(dropped, value)
    if scale != 1.0:
      weighted *= tf.cast(scale, weighted.dtype)
  output = tf.transpose(weighted, to_heads)
  return output, scores


def uses_batched_matmuls(attention_layer) -> bool:
  """Whether `use_batched_matmuls` switched this attention layer over."""
  return getattr(attention_layer, "_mixvocab_batched_matmuls", False)


def use_batched_matmuls(encoder):
  """Switches the built attention layers of a `BertEncoderV2` to matmuls.

  Layers over other attention axes than a BERT's (one sequence axis) keep
  their einsums.

  Args:
    encoder: a built `official.nlp.modeling.networks.BertEncoderV2` (or a
      subclass); its blocks' attention layers exist once it was called.

  Returns:
    The number of attention layers switched.
  """
  switched = 0
  for block in encoder.transformer_layers:
    layer = getattr(block, "_attention_layer", None)
    if layer is None or tuple(layer._attention_axes or ()) != (1,):
      continue
    layer._compute_attention = types.MethodType(_compute_attention, layer)
    layer._mixvocab_batched_matmuls = True
    switched += 1
  return switched
