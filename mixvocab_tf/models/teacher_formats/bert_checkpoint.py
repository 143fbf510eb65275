"""The one in-memory form of a pretrained BERT, whatever its checkpoint format.

Every format module of this package reads its checkpoint into a
`BertCheckpoint`: weights under google-research/bert variable names, [in, out]
kernels, float32 NumPy arrays, and the `BertEncoderV2` keyword arguments of
its config. Keeping one form means the Keras side (`assign_encoder_weights`,
`assign_masked_lm_weights`, which find each weight by the name that
`mixvocab_tf.networks.bert_variables` gives it) and the config checks
(`encoder_config`) are written once, not once per format.
"""

import dataclasses
import json
from typing import Any, Dict, Mapping

from absl import logging
import numpy as np
import tf_keras

from mixvocab_tf.networks import bert_variables

# BertEncoderV2 fixes every LayerNorm epsilon at 1e-12 (BERT's value).
LAYER_NORM_EPS = 1e-12


@dataclasses.dataclass
class BertCheckpoint:
  """A BERT checkpoint read into memory.

  Attributes:
    path: Where it was read from.
    format: "huggingface" or "google".
    encoder_config: Keyword arguments of `BertEncoderV2` for this model.
    weights: google-research/bert name -> float32 array ([in, out] kernels).
  """
  path: str
  format: str
  encoder_config: dict
  weights: dict

  @property
  def has_mlm_head(self):
    return any(name.startswith("cls/predictions/") for name in self.weights)

  @property
  def has_pooler(self):
    return "bert/pooler/dense/kernel" in self.weights


def read_json(path: str) -> Dict[str, Any]:
  with open(path) as f:
    return json.load(f)


def encoder_config(config: Mapping[str, Any], activations: Mapping[str, str],
                   what: str) -> Dict[str, Any]:
  """BertEncoderV2 arguments from a BERT config in HF or google spelling.

  The two spellings share their keys; they differ only in what an activation
  name means, so each format passes its own `activations` table.

  Args:
    config: a `config.json` / `bert_config.json` as a dict.
    activations: the format's `hidden_act` -> Keras activation name.
    what: where the config came from, for error messages.

  Returns:
    A dict for `PlainBertEncoder(**kwargs)`.

  Raises:
    ValueError: for a model `BertEncoderV2` cannot reproduce (not BERT,
      relative positions, another LayerNorm epsilon, an unknown activation).
  """
  model_type = config.get("model_type", "bert")
  if model_type != "bert":
    raise ValueError(f"Only BERT checkpoints can be loaded; {what} has "
                     f"model_type {model_type!r}.")
  position_type = config.get("position_embedding_type", "absolute")
  if position_type != "absolute":
    raise ValueError(f"Only absolute position embeddings are supported; {what} "
                     f"has position_embedding_type {position_type!r}.")
  eps = float(config.get("layer_norm_eps", LAYER_NORM_EPS))
  if not np.isclose(eps, LAYER_NORM_EPS, rtol=1e-3, atol=0):
    raise ValueError(f"layer_norm_eps must be 1e-12 (BertEncoderV2 fixes it); "
                     f"{what} has {eps}.")
  hidden_act = config.get("hidden_act", "gelu")
  if hidden_act not in activations:
    raise ValueError(f"Unsupported hidden_act {hidden_act!r} in {what}; expected "
                     f"one of {sorted(activations)}.")
  return dict(
      vocab_size=int(config["vocab_size"]),
      hidden_size=int(config["hidden_size"]),
      num_layers=int(config["num_hidden_layers"]),
      num_attention_heads=int(config["num_attention_heads"]),
      max_sequence_length=int(config.get("max_position_embeddings", 512)),
      type_vocab_size=int(config.get("type_vocab_size", 2)),
      inner_dim=int(config["intermediate_size"]),
      inner_activation=activations[hidden_act],
      output_dropout=float(config.get("hidden_dropout_prob", 0.1)),
      attention_dropout=float(config.get("attention_probs_dropout_prob", 0.1)),
      initializer=tf_keras.initializers.TruncatedNormal(
          stddev=float(config.get("initializer_range", 0.02))),
  )


def _assign(variables, checkpoint, required):
  """Assigns checkpoint weights to `variables` ({google name: variable})."""
  missing = [name for name in variables if name not in checkpoint.weights]
  if missing and required:
    raise ValueError(
        f"{checkpoint.path} lacks {len(missing)} weight(s) the model needs, e.g. "
        f"{missing[:3]}.")
  for name, variable in variables.items():
    if name in missing:
      continue
    value = checkpoint.weights[name]
    expected = bert_variables.canonical_shape(name, variable.shape)
    if tuple(value.shape) != expected:
      raise ValueError(f"{name} in {checkpoint.path} has shape "
                       f"{list(value.shape)}; the model expects {list(expected)}.")
    variable.assign(value.reshape(variable.shape))
  return missing


def assign_encoder_weights(encoder, checkpoint: BertCheckpoint) -> None:
  """Loads `checkpoint` into a `PlainBertEncoder`/`BertEncoderV2` or the teacher
  side of a `DualVocabBertEncoder`. A missing pooler is left as initialized."""
  variables = bert_variables.encoder_variables(encoder)
  pooler = {k: variables.pop(k) for k in list(variables) if "/pooler/" in k}
  _assign(variables, checkpoint, required=True)
  if _assign(pooler, checkpoint, required=False):
    logging.warning("%s has no pooler; pooler_transform keeps its fresh "
                    "initialization.", checkpoint.path)


def assign_masked_lm_weights(masked_lm, checkpoint: BertCheckpoint) -> bool:
  """Loads `cls/predictions/*` into a MaskedLM head; returns whether it did."""
  if not checkpoint.has_mlm_head:
    logging.info("%s has no MLM head; %s keeps its fresh initialization.",
                 checkpoint.path, masked_lm.name)
    return False
  _assign(bert_variables.masked_lm_variables(masked_lm), checkpoint,
          required=True)
  return True
