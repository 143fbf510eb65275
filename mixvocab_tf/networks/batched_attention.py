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
docs/PERFORMANCE.md). From 96 tokens on, the key's and the value's
gradients are computed as transposed products, which Eigen's batched matmul
(oneDNN off, as on AVX2 CPUs) runs about twice as fast: the student's
training step at 128 tokens 728 -> 678 ms on such a CPU.
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

# From this many keys on, the two products' gradients for the key and the
# value are computed transposed (`_scores_transposed_key_gradient`). Measured
# on a 2-core AVX2 CPU (oneDNN off), forward and backward of the attention
# with its softmax, median of 9: [batch 64, 128 tokens, 4 heads, 24] 36 ->
# 28 ms, [32, 128, 12, 32] 60 -> 52 ms, [32, 96, 4, 24] 9.5 -> 8.4 ms; at 64
# tokens no faster ([32, 64, 4, 24] 6.7 -> 6.6 ms, [32, 64, 12, 32] 20.6 ->
# 20.0 ms) and at 16 slower (1.06 -> 1.21 ms), so shorter sequences, and
# batches padded to their longest query (no static length), keep autodiff's.
TRANSPOSED_GRADIENTS_FROM_LENGTH = 96


_TO_HEADS = [0, 2, 1, 3]  # [B, T, N, D] <-> [B, N, T, D].
_FROM_TRANSPOSED_HEADS = [0, 3, 1, 2]  # [B, N, D, T] -> [B, T, N, D].


@tf.custom_gradient
def _scores_transposed_key_gradient(query, key):
  """Attention scores with d key computed transposed.

  Autodiff's d key is `matmul(d, query, transpose_a=True)`, [S, T] x [T, D]
  with the first operand transposed, which Eigen's batched matmul runs at
  about half the speed of `matmul(query, d, transpose_a=True)`: the [D, S]
  result, whose transpose to the key's [B, S, N, D] is the one transpose
  autodiff would do anyway (of the heads). The same sums in another order:
  equal within float32 rounding.

  Args:
    query: [B, N, T, D], scaled.
    key: [B, S, N, D].

  Returns:
    The scores [B, N, T, S] and their gradient function.
  """
  key_heads = tf.transpose(key, _TO_HEADS)
  scores = tf.matmul(query, key_heads, transpose_b=True)

  def gradient(upstream):
    return (tf.matmul(upstream, key_heads),
            tf.transpose(tf.matmul(query, upstream, transpose_a=True),
                         _FROM_TRANSPOSED_HEADS))

  return scores, gradient


@tf.custom_gradient
def _weighted_transposed_value_gradient(probabilities, value):
  """The weighted values with d value computed transposed.

  As in `_scores_transposed_key_gradient`: autodiff's
  `matmul(probabilities, d, transpose_a=True)` becomes the [D, S] product
  `matmul(d, probabilities, transpose_a=True)` and the heads' transpose.

  Args:
    probabilities: [B, N, T, S].
    value: [B, S, N, D].

  Returns:
    The weighted values [B, N, T, D] and their gradient function.
  """
  value_heads = tf.transpose(value, _TO_HEADS)
  weighted = tf.matmul(probabilities, value_heads)

  def gradient(upstream):
    return (tf.matmul(upstream, value_heads, transpose_b=True),
            tf.transpose(tf.matmul(upstream, probabilities, transpose_a=True),
                         _FROM_TRANSPOSED_HEADS))

  return weighted, gradient


def _scores(query, key):
  return tf.matmul(query, tf.transpose(key, _TO_HEADS), transpose_b=True)


def _weighted(probabilities, value):
  return tf.matmul(probabilities, tf.transpose(value, _TO_HEADS))


def _products(key):
  """The scores' and the weighted values' functions for keys like `key`."""
  length = key.shape[1]  # [B, S, N, D]
  if length is not None and length >= TRANSPOSED_GRADIENTS_FROM_LENGTH:
    return (_scores_transposed_key_gradient,
            _weighted_transposed_value_gradient)
  return _scores, _weighted


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
  query = tf.transpose(query, _TO_HEADS)
  scores_product, weighted_product = _products(key)
  scores = scores_product(query, key)
  scores = self._masked_softmax(scores, attention_mask)
  # In the trainer's steps (training a Python True, the layer's dropout
  # switched to 16-bit draws) the kept probabilities' scale multiplies the
  # [B, heads, T, head_dim] product instead of the [B, heads, T, T]
  # probabilities: one pass over the largest tensor fewer, forward and
  # backward. The same mask, drawn from the same generator.
  unscaled = (dropout_lib.unscaled_dropout(self._dropout_layer, scores)
              if training is True else None)
  if unscaled is None:
    weighted = weighted_product(
        self._dropout_layer(scores, training=training), value)
  else:
    dropped, scale = unscaled
    weighted = weighted_product(dropped, value)
    if scale != 1.0:
      weighted *= tf.cast(scale, weighted.dtype)
  output = tf.transpose(weighted, _TO_HEADS)
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
