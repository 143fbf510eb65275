"""Hugging Face BERT checkpoints: `config.json` + `model.safetensors`.

The package's default teacher, all-MiniLM-L6-v2, is a Hugging Face
`BertModel` in this format. Its tensors are read with `safetensors.numpy`, so
torch is not needed (and a torch pickle, `pytorch_model.bin`, is refused),
renamed to google-research/bert's variable names and transposed to [in, out]
kernels: the common form of `bert_checkpoint.BertCheckpoint`.

Hugging Face's "gelu" is the exact (erf) GELU, its "gelu_new" /
"gelu_pytorch_tanh" the tanh approximation. Keras "gelu" is exact and Model
Garden's "Text>gelu" is the tanh approximation, and `ACTIVATIONS` maps each to
the one the checkpoint was trained with.

The MLM head (`cls.predictions.*`, BertForMaskedLM) is read when present; its
decoder must be tied to the word embeddings, as the Keras MaskedLM head ties
it. MiniLM has none.
"""

import os
import re
from typing import Any, Dict, Optional

import numpy as np
import tensorflow as tf

from mixvocab_tf.models.teacher_formats import bert_checkpoint

FORMAT = "huggingface"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
TORCH_FILE = "pytorch_model.bin"

ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "Text>gelu",
    "gelu_pytorch_tanh": "Text>gelu",
    "gelu_fast": "Text>gelu",
    "relu": "relu",
    "silu": "swish",
    "swish": "swish",
    "tanh": "tanh",
}


def is_checkpoint(path: str) -> bool:
  """Whether `path` is a directory with a config and safetensors weights."""
  if not tf.io.gfile.isdir(path):
    return False
  names = set(tf.io.gfile.listdir(path))
  return CONFIG_FILE in names and bool({WEIGHTS_FILE, INDEX_FILE} & names)


def check_not_torch_pickle(path: str) -> None:
  """Raises for a Hugging Face directory that only has torch weights.

  Reading `pytorch_model.bin` would need torch (and unpickling runs code), so
  such a directory gets an error saying so rather than "unknown format".
  """
  if not tf.io.gfile.isdir(path):
    return
  names = set(tf.io.gfile.listdir(path))
  if CONFIG_FILE in names and TORCH_FILE in names:
    raise ValueError(f"{path} holds a torch pickle ({TORCH_FILE}); only "
                     f"{WEIGHTS_FILE} can be read without torch.")


def encoder_config(config: Dict[str, Any],
                   source: str = "the config") -> Dict[str, Any]:
  """`BertEncoderV2` arguments of a Hugging Face `config.json` dict."""
  return bert_checkpoint.encoder_config(config, ACTIVATIONS, source)


def read_config(directory: str) -> Dict[str, Any]:
  """`BertEncoderV2` arguments of the checkpoint in `directory`."""
  config_path = os.path.join(directory, CONFIG_FILE)
  return encoder_config(bert_checkpoint.read_json(config_path), config_path)


def hf_name_to_google(name: str) -> Optional[str]:
  """`encoder.layer.0.attention.self.query.weight` -> google name, or None.

  None for tensors no Keras weight takes: the tied decoder (checked against
  the word embeddings instead), the NSP head, and anything outside BERT.
  """
  if name.startswith("bert."):
    name = name[len("bert."):]
  if name in ("cls.predictions.bias", "cls.predictions.decoder.bias"):
    return "cls/predictions/output_bias"
  if name.startswith("cls.") and not name.startswith("cls.predictions.transform"):
    return None  # The tied decoder, NSP: checked or not used.
  match = re.fullmatch(r"embeddings\.(\w+_embeddings)\.weight", name)
  if match:
    return "bert/embeddings/" + match.group(1)
  if not re.match(r"(embeddings|encoder|pooler|cls)\.", name):
    return None
  path, leaf = name.rsplit(".", 1)
  path = re.sub(r"layer\.(\d+)", r"layer_\1", path).replace(".", "/")
  if path.endswith("LayerNorm"):
    leaf = {"weight": "gamma", "gamma": "gamma", "bias": "beta",
            "beta": "beta"}.get(leaf)
  else:
    leaf = {"weight": "kernel", "bias": "bias"}.get(leaf)
  if leaf is None:
    return None
  return path + "/" + leaf if path.startswith("cls/") else (
      "bert/" + path + "/" + leaf)


def read_weights(directory: str) -> Dict[str, np.ndarray]:
  """The weights of `directory` (one or sharded safetensors), google names.

  Raises:
    ValueError: if the MLM decoder is not tied to the word embeddings.
  """
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  index = os.path.join(directory, INDEX_FILE)
  if os.path.isfile(index):
    files = sorted(set(bert_checkpoint.read_json(index)["weight_map"].values()))
  else:
    files = [WEIGHTS_FILE]
  state = {}
  for name in files:
    state.update(safetensors_numpy.load_file(os.path.join(directory, name)))
  weights = {}
  for name, value in state.items():
    google_name = hf_name_to_google(name)
    if google_name is None:
      continue
    value = np.asarray(value, np.float32)
    if google_name.endswith("/kernel"):
      value = value.T  # torch Linear stores [out, in].
    weights[google_name] = np.ascontiguousarray(value)
  decoder = state.get("cls.predictions.decoder.weight")
  word = weights.get("bert/embeddings/word_embeddings")
  if decoder is not None and word is not None and not np.array_equal(
      np.asarray(decoder, np.float32), word):
    raise ValueError(
        f"{directory}: cls.predictions.decoder.weight differs from the word "
        "embeddings; MLM heads here tie their output to the input table.")
  return weights


def read_checkpoint(directory: str) -> bert_checkpoint.BertCheckpoint:
  """Reads the Hugging Face checkpoint in `directory` into memory."""
  directory = os.fspath(directory)
  weights = read_weights(directory)
  return bert_checkpoint.BertCheckpoint(
      path=directory, format=FORMAT, encoder_config=read_config(directory),
      weights=weights)
