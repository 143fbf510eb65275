"""Loads pretrained BERT teachers from Hugging Face and google-research checkpoints.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4, distil from BERT-LARGE, released by google-research/bert as a
TF1 checkpoint (`bert_config.json` + `bert_model.ckpt`). The package's default
teacher, all-MiniLM-L6-v2, is a Hugging Face `BertModel` (`config.json` +
`model.safetensors`). Both are read into one form (google variable names, [in,
out] kernels, NumPy arrays; safetensors are read with `safetensors.numpy`, so
torch is not needed) and assigned to the Keras networks by the names that
`mixvocab_tf.networks.bert_variables` gives their weights.

A pretrained teacher has no student table: the student table, the up-projection
and the student-vocabulary MLM head are created fresh. The teacher-vocabulary MLM
head is loaded when the checkpoint has one (HF `cls.predictions.*`, google
`cls/predictions/*`) and created fresh otherwise (MiniLM has none).

Activations: Hugging Face's "gelu" is the exact (erf) GELU, its "gelu_new" /
"gelu_pytorch_tanh" the tanh approximation; google-research/bert's "gelu" is the
tanh approximation. Keras "gelu" is exact and Model Garden's "Text>gelu" is the
tanh approximation, and each checkpoint gets the one it was trained with.
"""

import dataclasses
import glob
import json
import os
import re

from absl import logging
import numpy as np
import tensorflow as tf
import tf_keras

from mixvocab_tf.models import dual_vocab_pretrainer
from mixvocab_tf.models import mlm_pretrainer
from mixvocab_tf.networks import bert_variables
from mixvocab_tf.networks import dual_vocab_bert_encoder
from mixvocab_tf.networks import plain_bert_encoder

HUGGINGFACE = "huggingface"
GOOGLE = "google"

_HF_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "Text>gelu",
    "gelu_pytorch_tanh": "Text>gelu",
    "gelu_fast": "Text>gelu",
    "relu": "relu",
    "silu": "swish",
    "swish": "swish",
    "tanh": "tanh",
}
_GOOGLE_ACTIVATIONS = {
    # google-research/bert modeling.gelu is the tanh approximation.
    "gelu": "Text>gelu",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}
# BertEncoderV2 fixes every LayerNorm epsilon at 1e-12 (BERT's value).
_LAYER_NORM_EPS = 1e-12

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

# Encoder arguments a caller may change without changing any weight's shape.
_ALLOWED_OVERRIDES = ("return_attention_scores", "return_word_embeddings",
                      "output_dropout", "attention_dropout")


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


def _read_json(path):
  with open(path) as f:
    return json.load(f)


def _encoder_config(config, activations, what):
  """BertEncoderV2 arguments from a BERT config in HF or google spelling."""
  model_type = config.get("model_type", "bert")
  if model_type != "bert":
    raise ValueError(f"Only BERT checkpoints can be loaded; {what} has "
                     f"model_type {model_type!r}.")
  position_type = config.get("position_embedding_type", "absolute")
  if position_type != "absolute":
    raise ValueError(f"Only absolute position embeddings are supported; {what} "
                     f"has position_embedding_type {position_type!r}.")
  eps = float(config.get("layer_norm_eps", _LAYER_NORM_EPS))
  if not np.isclose(eps, _LAYER_NORM_EPS, rtol=1e-3, atol=0):
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


def encoder_config_from_bert_config(config, checkpoint_format=HUGGINGFACE,
                                    source="the config"):
  """`BertEncoderV2` keyword arguments from a BERT config dict.

  Args:
    config: A Hugging Face `config.json` or google-research `bert_config.json`,
      as a dict.
    checkpoint_format: "huggingface" or "google"; it decides what "gelu" means
      (exact for Hugging Face, the tanh approximation for google).
    source: Where the config came from, for error messages.

  Returns:
    A dict for `PlainBertEncoder(**kwargs)`; for a `DualVocabBertEncoder` pass
    its `vocab_size` as `teacher_vocab_size`.
  """
  if checkpoint_format not in (HUGGINGFACE, GOOGLE):
    raise ValueError(f"checkpoint_format must be {HUGGINGFACE!r} or {GOOGLE!r}; "
                     f"received {checkpoint_format!r}.")
  activations = _HF_ACTIVATIONS if checkpoint_format == HUGGINGFACE else (
      _GOOGLE_ACTIVATIONS)
  return _encoder_config(config, activations, source)


def _hf_name_to_google(name):
  """`encoder.layer.0.attention.self.query.weight` -> google name, or None."""
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


def _read_huggingface(directory):
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  index = os.path.join(directory, "model.safetensors.index.json")
  if os.path.isfile(index):
    files = sorted(set(_read_json(index)["weight_map"].values()))
  else:
    files = ["model.safetensors"]
  state = {}
  for name in files:
    state.update(safetensors_numpy.load_file(os.path.join(directory, name)))
  weights = {}
  for name, value in state.items():
    google_name = _hf_name_to_google(name)
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
  config = _read_json(os.path.join(directory, "config.json"))
  return weights, _encoder_config(config, _HF_ACTIVATIONS,
                                  os.path.join(directory, "config.json"))


def _google_checkpoint_prefix(path):
  if tf.io.gfile.isdir(path):
    prefix = os.path.join(path, "bert_model.ckpt")
    if tf.io.gfile.exists(prefix + ".index"):
      return prefix
    latest = tf.train.latest_checkpoint(path)
    if latest:
      return latest
    indexes = sorted(glob.glob(os.path.join(path, "*.index")))
    if len(indexes) == 1:
      return indexes[0][:-len(".index")]
    raise ValueError(f"No TF checkpoint found in {path}; expected "
                     "bert_model.ckpt.index or a `checkpoint` file.")
  return path


def _read_google(path):
  prefix = _google_checkpoint_prefix(path)
  config_path = os.path.join(os.path.dirname(prefix), "bert_config.json")
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
  config = _read_json(config_path)
  return weights, _encoder_config(config, _GOOGLE_ACTIVATIONS, config_path)


def detect_checkpoint_format(path):
  """"huggingface" or "google" for a checkpoint directory (or google prefix)."""
  if tf.io.gfile.isdir(path):
    names = set(tf.io.gfile.listdir(path))
    if "config.json" in names and ({"model.safetensors",
                                    "model.safetensors.index.json"} & names):
      return HUGGINGFACE
    if "bert_config.json" in names:
      return GOOGLE
    if "config.json" in names and "pytorch_model.bin" in names:
      raise ValueError(f"{path} holds a torch pickle (pytorch_model.bin); only "
                       "model.safetensors can be read without torch.")
  elif tf.io.gfile.exists(path + ".index") and tf.io.gfile.exists(
      os.path.join(os.path.dirname(path), "bert_config.json")):
    return GOOGLE
  raise ValueError(
      f"Cannot tell the checkpoint format of {path!r}: expected a directory with "
      "config.json + model.safetensors (Hugging Face) or bert_config.json + "
      "bert_model.ckpt (google-research/bert), or a google checkpoint prefix.")


def read_bert_config(path):
  """(format, BertEncoderV2 keyword arguments) of a checkpoint, weights unread.

  Args:
    path: As for `read_bert_checkpoint`.
  """
  path = os.fspath(path)
  checkpoint_format = detect_checkpoint_format(path)
  if checkpoint_format == HUGGINGFACE:
    config_path = os.path.join(path, "config.json")
    return checkpoint_format, _encoder_config(_read_json(config_path),
                                              _HF_ACTIVATIONS, config_path)
  prefix = _google_checkpoint_prefix(path)
  config_path = os.path.join(os.path.dirname(prefix), "bert_config.json")
  return checkpoint_format, _encoder_config(_read_json(config_path),
                                            _GOOGLE_ACTIVATIONS, config_path)


def read_bert_checkpoint(path):
  """Reads a Hugging Face or google-research/bert checkpoint into memory.

  Args:
    path: A Hugging Face directory (`config.json`, `model.safetensors` or a
      sharded `model.safetensors.index.json`), a google-research/bert directory
      (`bert_config.json`, `bert_model.ckpt.*`), or a google checkpoint prefix.

  Returns:
    A `BertCheckpoint`.
  """
  path = os.fspath(path)
  checkpoint_format = detect_checkpoint_format(path)
  if checkpoint_format == HUGGINGFACE:
    weights, config = _read_huggingface(path)
  else:
    weights, config = _read_google(path)
  return BertCheckpoint(path=path, format=checkpoint_format,
                        encoder_config=config, weights=weights)


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


def assign_encoder_weights(encoder, checkpoint):
  """Loads `checkpoint` into a `PlainBertEncoder`/`BertEncoderV2` or the teacher
  side of a `DualVocabBertEncoder`. A missing pooler is left as initialized."""
  variables = bert_variables.encoder_variables(encoder)
  pooler = {k: variables.pop(k) for k in list(variables) if "/pooler/" in k}
  _assign(variables, checkpoint, required=True)
  if _assign(pooler, checkpoint, required=False):
    logging.warning("%s has no pooler; pooler_transform keeps its fresh "
                    "initialization.", checkpoint.path)


def assign_masked_lm_weights(masked_lm, checkpoint):
  """Loads `cls/predictions/*` into a MaskedLM head; returns whether it did."""
  if not checkpoint.has_mlm_head:
    logging.info("%s has no MLM head; %s keeps its fresh initialization.",
                 checkpoint.path, masked_lm.name)
    return False
  _assign(bert_variables.masked_lm_variables(masked_lm), checkpoint,
          required=True)
  return True


def _exists(path):
  return bool(path) and tf.io.gfile.exists(path)


def teacher_encoder_config(checkpoint_path, config_path=None):
  """`BertEncoderV2` arguments of a teacher, and where they came from.

  Tried in order: the checkpoint's own config (`read_bert_config`), the config
  file `config_path` (a google `bert_config.json` or a Hugging Face
  `config.json`), then BERT-LARGE's published dimensions, so that a dry run
  of a TPU config builds the paper's teacher on a machine without it.

  Args:
    checkpoint_path: a checkpoint as for `read_bert_checkpoint` (may be
      absent).
    config_path: a config file for when the checkpoint is not reachable.

  Returns:
    (encoder kwargs, description of the source).
  """
  if _exists(checkpoint_path):
    try:
      return (read_bert_config(checkpoint_path)[1],
              f"the config of {checkpoint_path}")
    except (ValueError, FileNotFoundError) as e:
      if not _exists(config_path):
        raise ValueError(f"Cannot read the teacher checkpoint "
                         f"{checkpoint_path}: {e}") from e
  if _exists(config_path):
    with tf.io.gfile.GFile(config_path) as f:
      config = json.load(f)
    # A google bert_config.json has no model_type, and its "gelu" is the tanh
    # approximation.
    checkpoint_format = GOOGLE if "model_type" not in config else HUGGINGFACE
    return (encoder_config_from_bert_config(config, checkpoint_format,
                                            source=config_path), config_path)
  return (encoder_config_from_bert_config(
      BERT_LARGE_CONFIG, GOOGLE, source="built-in BERT-LARGE"),
          "built-in BERT-LARGE dimensions (24 x 1024, 16 heads; neither the "
          f"checkpoint {checkpoint_path!r} nor the config {config_path!r} was "
          "found)")


def _encoder_kwargs(encoder_config, overrides):
  unknown = sorted(set(overrides) - set(_ALLOWED_OVERRIDES))
  if unknown:
    raise ValueError(f"Cannot override {unknown} of a pretrained encoder; "
                     f"allowed: {list(_ALLOWED_OVERRIDES)}.")
  kwargs = dict(encoder_config)
  kwargs.update(overrides)
  return kwargs


def _as_checkpoint(path_or_checkpoint):
  if isinstance(path_or_checkpoint, BertCheckpoint):
    return path_or_checkpoint
  return read_bert_checkpoint(path_or_checkpoint)


def build_teacher(encoder_config, *, student_vocab_size,
                  student_embedding_width, name="teacher", **overrides):
  """The stage I teacher architecture, fresh: a `DualVocabPretrainer`.

  Zhao et al. (EACL 2021), Section 3: a pretrained BERT plus a student table
  of the student's width d_s and an up-projection to the teacher's width.
  Every teacher of the package (stage I, the distillation tasks' frozen
  teacher) is built here; `load_pretrained_weights` fills it.

  Args:
    encoder_config: `BertEncoderV2` arguments of the pretrained BERT (its
      `vocab_size` becomes the teacher vocabulary's), e.g. from
      `teacher_encoder_config` or `BertCheckpoint.encoder_config`.
    student_vocab_size: rows of the student table.
    student_embedding_width: d_s, the width of the student table.
    name: the Keras model's name.
    **overrides: any of return_attention_scores, return_word_embeddings,
      output_dropout, attention_dropout.

  Returns:
    A `DualVocabPretrainer` with fresh weights.
  """
  kwargs = _encoder_kwargs(encoder_config, overrides)
  teacher_vocab_size = kwargs.pop("vocab_size")
  encoder = dual_vocab_bert_encoder.DualVocabBertEncoder(
      teacher_vocab_size=teacher_vocab_size,
      student_vocab_size=student_vocab_size,
      student_embedding_width=student_embedding_width,
      **kwargs)
  return dual_vocab_pretrainer.DualVocabPretrainer(encoder, name=name)


def load_pretrained_weights(model, path):
  """Assigns a pretrained BERT's weights to an encoder or a pretrainer.

  The one loader of pretrained weights: stage I's teacher, the distillation
  tasks' teacher without a stage I run and fine-tuning from a teacher all
  come here.

  Args:
    model: a `PlainBertEncoder` / `BertEncoderV2` / `DualVocabBertEncoder`
      (its teacher side), or a pretrainer holding one as `encoder_network`
      (`MLMPretrainer`, `DualVocabPretrainer`), whose teacher-vocabulary
      `masked_lm` head is loaded too when the checkpoint has one.
    path: a checkpoint path (see `read_bert_checkpoint`) or a
      `BertCheckpoint`.

  Returns:
    Whether an MLM head was loaded (False for a bare encoder).
  """
  checkpoint = _as_checkpoint(path)
  encoder = getattr(model, "encoder_network", model)
  assign_encoder_weights(encoder, checkpoint)
  if encoder is model:
    return False
  return assign_masked_lm_weights(model.masked_lm, checkpoint)


def load_bert_encoder(path, **overrides):
  """A plain (single-vocabulary) pretrained BERT encoder.

  Args:
    path: A checkpoint path (see `read_bert_checkpoint`) or a `BertCheckpoint`.
    **overrides: Any of return_attention_scores, return_word_embeddings,
      output_dropout, attention_dropout.

  Returns:
    A `PlainBertEncoder` holding the checkpoint's weights.
  """
  checkpoint = _as_checkpoint(path)
  encoder = plain_bert_encoder.PlainBertEncoder(
      **_encoder_kwargs(checkpoint.encoder_config, overrides))
  load_pretrained_weights(encoder, checkpoint)
  return encoder


def load_bert_pretrainer(path, **overrides):
  """A plain pretrained BERT with its MLM head (fresh if the checkpoint has none).

  Args:
    path: A checkpoint path (see `read_bert_checkpoint`) or a `BertCheckpoint`.
    **overrides: As for `load_bert_encoder`.

  Returns:
    An `MLMPretrainer` whose `mlm_logits` cover the teacher vocabulary.
  """
  checkpoint = _as_checkpoint(path)
  model = mlm_pretrainer.MLMPretrainer(plain_bert_encoder.PlainBertEncoder(
      **_encoder_kwargs(checkpoint.encoder_config, overrides)))
  load_pretrained_weights(model, checkpoint)
  return model


def load_teacher(path, *, student_vocab_size, student_embedding_width,
                 **overrides):
  """The stage I teacher: a pretrained BERT with a fresh student table.

  `build_teacher` then `load_pretrained_weights`.

  Example:
  ```python
  teacher = load_teacher("/ckpt/uncased_L-24_H-1024_A-16",
                         student_vocab_size=4928, student_embedding_width=256)
  teacher.encoder_network  # DualVocabBertEncoder
  ```

  Args:
    path: A Hugging Face or google-research/bert checkpoint (see
      `read_bert_checkpoint`), or a `BertCheckpoint`.
    student_vocab_size: Rows of the new student table.
    student_embedding_width: Width of the student table, the student's hidden
      size.
    **overrides: As for `load_bert_encoder`.

  Returns:
    A `DualVocabPretrainer`; the encoder's teacher side and (if present) the
    teacher-vocabulary MLM head hold the checkpoint's weights, the student
    table, the up-projection and the student-vocabulary head are fresh.
  """
  checkpoint = _as_checkpoint(path)
  model = build_teacher(checkpoint.encoder_config,
                        student_vocab_size=student_vocab_size,
                        student_embedding_width=student_embedding_width,
                        name="dual_vocab_pretrainer", **overrides)
  load_pretrained_weights(model, checkpoint)
  return model
