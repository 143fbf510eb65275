"""google-research/bert checkpoints: `bert_config.json` + a TF1 `bert_model.ckpt`.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4, distil from BERT-LARGE, released by google-research/bert in
this format. Its variables already carry the names and [in, out] kernels of
the common form (`bert_checkpoint.BertCheckpoint`), so reading is a filter:
optimizer slots and the NSP head are dropped.

google-research/bert's "gelu" is the tanh approximation (its
`modeling.gelu`), which Model Garden calls "Text>gelu"; `ACTIVATIONS` keeps
that meaning apart from Hugging Face's exact "gelu".
"""

import glob
import os
import re
from typing import Any, Dict

import numpy as np
import tensorflow as tf

from mixvocab_tf.models.teacher_formats import bert_checkpoint

FORMAT = "google"
CONFIG_FILE = "bert_config.json"
CHECKPOINT_NAME = "bert_model.ckpt"

ACTIVATIONS = {
    # google-research/bert modeling.gelu is the tanh approximation.
    "gelu": "Text>gelu",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}

#: google-research/bert's uncased_L-24_H-1024_A-16 (BERT-LARGE), the paper's
#: teacher (Section 4); the dimensions of last resort when neither the
#: checkpoint nor a config file is reachable (dry runs of the TPU configs).
BERT_LARGE_CONFIG = {
    "vocab_size": 30522,
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
}


def is_checkpoint(path: str) -> bool:
  """Whether `path` is a google directory, or a prefix with its config beside."""
  if tf.io.gfile.isdir(path):
    return CONFIG_FILE in set(tf.io.gfile.listdir(path))
  return bool(tf.io.gfile.exists(path + ".index") and tf.io.gfile.exists(
      os.path.join(os.path.dirname(path), CONFIG_FILE)))


def checkpoint_prefix(path: str) -> str:
  """The checkpoint prefix of a directory (or `path` itself, a prefix).

  A directory is searched for google's own `bert_model.ckpt`, then a TF
  `checkpoint` file's latest, then a single `*.index`: the layouts BERT
  checkpoints are published and re-saved in.
  """
  if tf.io.gfile.isdir(path):
    prefix = os.path.join(path, CHECKPOINT_NAME)
    if tf.io.gfile.exists(prefix + ".index"):
      return prefix
    latest = tf.train.latest_checkpoint(path)
    if latest:
      return latest
    indexes = sorted(glob.glob(os.path.join(path, "*.index")))
    if len(indexes) == 1:
      return indexes[0][:-len(".index")]
    raise ValueError(f"No TF checkpoint found in {path}; expected "
                     f"{CHECKPOINT_NAME}.index or a `checkpoint` file.")
  return path


def _config_path(prefix: str) -> str:
  return os.path.join(os.path.dirname(prefix), CONFIG_FILE)


def encoder_config(config: Dict[str, Any],
                   source: str = "the config") -> Dict[str, Any]:
  """`BertEncoderV2` arguments of a google `bert_config.json` dict."""
  return bert_checkpoint.encoder_config(config, ACTIVATIONS, source)


def read_config(path: str) -> Dict[str, Any]:
  """`BertEncoderV2` arguments of the checkpoint at `path` (dir or prefix)."""
  config_path = _config_path(checkpoint_prefix(path))
  return encoder_config(bert_checkpoint.read_json(config_path), config_path)


def read_weights(prefix: str) -> Dict[str, np.ndarray]:
  """The model weights of the checkpoint at `prefix`, float32."""
  reader = tf.train.load_checkpoint(prefix)
  weights = {}
  for name in reader.get_variable_to_shape_map():
    # Optimizer slots (adam_m, adam_v) and NSP weights are not model weights
    # here.
    if not (name.startswith("bert/") or name.startswith("cls/predictions/")):
      continue
    if re.search(r"adam_[mv]$|/Adam(_1)?$", name):
      continue
    weights[name] = np.asarray(reader.get_tensor(name), np.float32)
  return weights


def read_checkpoint(path: str) -> bert_checkpoint.BertCheckpoint:
  """Reads a google-research/bert checkpoint (directory or prefix) into memory."""
  path = os.fspath(path)
  prefix = checkpoint_prefix(path)
  weights = read_weights(prefix)
  config_path = _config_path(prefix)
  return bert_checkpoint.BertCheckpoint(
      path=path, format=FORMAT,
      encoder_config=encoder_config(bert_checkpoint.read_json(config_path),
                                    config_path),
      weights=weights)
