"""Names the variables of a BERT encoder and MLM head as google-research/bert does.

The teachers of Zhao et al. (EACL 2021), Section 4 (BERT-LARGE), and the default
teacher of this package (MiniLM) come as checkpoints of other code bases. This
module is the one place that knows where `official.nlp.modeling` keeps each
weight (it reads private attributes of `BertEncoderV2`, `TransformerEncoderBlock`,
`MultiHeadAttention` and `MaskedLM`), and it gives each the name it has in a
google-research/bert checkpoint, e.g. `bert/encoder/layer_0/attention/self/query/
kernel`. Loaders and the shared-projection loss work on these names.

Kernels in those checkpoints are 2-D [in, out] and biases 1-D; the attention
weights of `MultiHeadAttention` are split by head ([d, heads, head_dim] and
[heads, head_dim, d]). Both are the same row-major data, so a reshape converts
between them (`canonical_shape`).
"""

import collections

import numpy as np


def _layer_variables(block):
  """google name (relative to the layer) -> variable of a TransformerEncoderBlock."""
  attention = block._attention_layer  # pylint: disable=protected-access
  out = collections.OrderedDict()
  for name, dense in (("attention/self/query", attention._query_dense),  # pylint: disable=protected-access
                      ("attention/self/key", attention._key_dense),  # pylint: disable=protected-access
                      ("attention/self/value", attention._value_dense),  # pylint: disable=protected-access
                      ("attention/output/dense", attention._output_dense)):  # pylint: disable=protected-access
    out[name + "/kernel"] = dense.kernel
    out[name + "/bias"] = dense.bias
  norm = block._attention_layer_norm  # pylint: disable=protected-access
  out["attention/output/LayerNorm/gamma"] = norm.gamma
  out["attention/output/LayerNorm/beta"] = norm.beta
  out["intermediate/dense/kernel"] = block._intermediate_dense.kernel  # pylint: disable=protected-access
  out["intermediate/dense/bias"] = block._intermediate_dense.bias  # pylint: disable=protected-access
  out["output/dense/kernel"] = block._output_dense.kernel  # pylint: disable=protected-access
  out["output/dense/bias"] = block._output_dense.bias  # pylint: disable=protected-access
  norm = block._output_layer_norm  # pylint: disable=protected-access
  out["output/LayerNorm/gamma"] = norm.gamma
  out["output/LayerNorm/beta"] = norm.beta
  return out


def _bert_encoder_v2(encoder):
  """The BertEncoderV2 inside `encoder` (itself, or a DualVocabBertEncoder's)."""
  return getattr(encoder, "bert_encoder", encoder)


def encoder_variables(encoder, include_word_embeddings=True):
  """google name -> variable for a built `BertEncoderV2` or `DualVocabBertEncoder`.

  Args:
    encoder: A built encoder. For a `DualVocabBertEncoder` the word embeddings
      are the teacher table; its student table and up-projection have no google
      name and are not included.
    include_word_embeddings: Whether to include `bert/embeddings/word_embeddings`.

  Returns:
    An ordered dict from names such as `bert/encoder/layer_0/attention/self/
    query/kernel` to variables.
  """
  bert = _bert_encoder_v2(encoder)
  if not bert.built:
    raise ValueError(f"The encoder {encoder.name} must be built (called once) "
                     "before its variables can be named.")
  out = collections.OrderedDict()
  if include_word_embeddings:
    out["bert/embeddings/word_embeddings"] = encoder.get_embedding_table()
  # pylint: disable=protected-access
  out["bert/embeddings/position_embeddings"] = (
      bert._position_embedding_layer._position_embeddings)
  out["bert/embeddings/token_type_embeddings"] = (
      bert._type_embedding_layer.embeddings)
  out["bert/embeddings/LayerNorm/gamma"] = bert._embedding_norm_layer.gamma
  out["bert/embeddings/LayerNorm/beta"] = bert._embedding_norm_layer.beta
  if bert._embedding_projection is not None:
    raise ValueError("Encoders with a factorized embedding (embedding_width != "
                     "hidden_size) have no google-research/bert naming.")
  # pylint: enable=protected-access
  for i, block in enumerate(bert.transformer_layers):
    for name, variable in _layer_variables(block).items():
      out[f"bert/encoder/layer_{i}/{name}"] = variable
  out["bert/pooler/dense/kernel"] = bert.pooler_layer.kernel
  out["bert/pooler/dense/bias"] = bert.pooler_layer.bias
  return out


def masked_lm_variables(masked_lm, prefix="cls/predictions"):
  """google name -> variable of a built `official...layers.MaskedLM` head.

  The output matrix is the tied word-embedding table and is not included.
  """
  if not masked_lm.built:
    raise ValueError(f"The head {masked_lm.name} must be built first.")
  return collections.OrderedDict([
      (f"{prefix}/transform/dense/kernel", masked_lm.dense.kernel),
      (f"{prefix}/transform/dense/bias", masked_lm.dense.bias),
      (f"{prefix}/transform/LayerNorm/gamma", masked_lm.layer_norm.gamma),
      (f"{prefix}/transform/LayerNorm/beta", masked_lm.layer_norm.beta),
      (f"{prefix}/output_bias", masked_lm.bias),
  ])


def canonical_shape(name, shape):
  """The shape a weight has in a google-research/bert checkpoint.

  Args:
    name: google name of the weight.
    shape: Its shape in the Keras model.

  Returns:
    A tuple: [in, out] for kernels, [n] for biases and LayerNorm parameters, the
    unchanged shape for embedding tables.
  """
  shape = tuple(int(s) for s in shape)
  if name.endswith("/kernel"):
    if len(shape) == 3:
      if name.endswith("attention/output/dense/kernel"):
        return (shape[0] * shape[1], shape[2])
      return (shape[0], shape[1] * shape[2])
    return shape
  if name.endswith(("/bias", "/gamma", "/beta", "output_bias")):
    return (int(np.prod(shape)),)
  return shape
