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

import json
import os
import re
from typing import Any, Dict, Optional

import numpy as np
import tensorflow as tf

from mixvocab_tf.models.teacher_formats import bert_checkpoint
from mixvocab_tf.networks import bert_variables

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
    raise ValueError(
        f"{path} holds a torch pickle ({TORCH_FILE}); only {WEIGHTS_FILE} "
        "can be read without torch. Where torch is installed, "
        "`transformers.BertModel.from_pretrained(path).save_pretrained(path, "
        "safe_serialization=True)` writes it.")


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


def google_name_to_hf(name: str) -> str:
  """`bert/encoder/layer_0/attention/self/query/kernel` -> its Hugging Face
  `BertModel` name (`hf_name_to_google`'s inverse on an encoder's names)."""
  path, leaf = name.removeprefix("bert/").rsplit("/", 1)
  path = re.sub(r"layer_(\d+)", r"layer.\1", path).replace("/", ".")
  if leaf.endswith("_embeddings"):  # bert/embeddings/word_embeddings
    return f"{path}.{leaf}.weight"
  return path + "." + {"kernel": "weight", "bias": "bias", "gamma": "weight",
                       "beta": "bias"}[leaf]


def write_checkpoint(encoder, encoder_config: Dict[str, Any], vocab_path: str,
                     directory: str) -> str:
  """Writes a BERT encoder as a Hugging Face `BertModel` directory.

  `config.json`, `model.safetensors` (torch's [out, in] kernels) and
  `vocab.txt` in `BertModel`'s names and config keys, which this module
  reads back: e.g. a teacher fine-tuned on a user's data, to be the
  teacher of the next job.

  Args:
    encoder: a built `PlainBertEncoder` / `BertEncoderV2`.
    encoder_config: its `BertEncoderV2` arguments (`encoder_config`'s form).
    vocab_path: the vocabulary it reads.
    directory: the new directory.

  Returns:
    `directory`.
  """
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  hidden_act = {keras: hf for hf, keras in reversed(ACTIVATIONS.items())}
  activation = encoder_config["inner_activation"]
  if activation not in hidden_act:
    raise ValueError(f"The encoder's activation {activation!r} has no Hugging "
                     f"Face name; expected one of {sorted(hidden_act)}.")
  state = {}
  for name, variable in bert_variables.encoder_variables(encoder).items():
    value = np.asarray(variable.numpy(), np.float32).reshape(
        bert_variables.canonical_shape(name, variable.shape))
    if name.endswith("/kernel"):
      value = value.T  # torch Linear stores [out, in].
    state[google_name_to_hf(name)] = np.ascontiguousarray(value)
  initializer = encoder_config.get("initializer")
  config = {
      "architectures": ["BertModel"], "model_type": "bert",
      "vocab_size": int(encoder_config["vocab_size"]),
      "hidden_size": int(encoder_config["hidden_size"]),
      "num_hidden_layers": int(encoder_config["num_layers"]),
      "num_attention_heads": int(encoder_config["num_attention_heads"]),
      "intermediate_size": int(encoder_config["inner_dim"]),
      "hidden_act": hidden_act[activation],
      "max_position_embeddings": int(encoder_config["max_sequence_length"]),
      "type_vocab_size": int(encoder_config["type_vocab_size"]),
      "hidden_dropout_prob": float(encoder_config["output_dropout"]),
      "attention_probs_dropout_prob": float(
          encoder_config["attention_dropout"]),
      "initializer_range": float(getattr(initializer, "stddev", 0.02)),
      "layer_norm_eps": bert_checkpoint.LAYER_NORM_EPS,
      "position_embedding_type": "absolute",
  }
  tf.io.gfile.makedirs(directory)
  # Through GFile (any file system, the usual file mode), not save_file.
  with tf.io.gfile.GFile(os.path.join(directory, WEIGHTS_FILE), "wb") as f:
    f.write(safetensors_numpy.save(state, metadata={"format": "pt"}))
  with tf.io.gfile.GFile(os.path.join(directory, CONFIG_FILE), "w") as f:
    f.write(json.dumps(config, indent=2) + "\n")
  # The package's tokenizers lowercase, as uncased BERTs read text.
  with tf.io.gfile.GFile(os.path.join(directory, "tokenizer_config.json"),
                         "w") as f:
    f.write(json.dumps({"do_lower_case": True,
                        "tokenizer_class": "BertTokenizer"}, indent=2) + "\n")
  tf.io.gfile.copy(vocab_path, os.path.join(directory, "vocab.txt"),
                   overwrite=True)
  return directory
