"""Loads pretrained BERT teachers, whatever the checkpoint's format.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4, distil from BERT-LARGE, released by google-research/bert as a
TF1 checkpoint; the package's default teacher, all-MiniLM-L6-v2, is a Hugging
Face `BertModel`. Each format has its reader in `models.teacher_formats`
(`huggingface`, `google_research`), which brings it into one form
(`BertCheckpoint`: google variable names, [in, out] kernels, NumPy arrays).
This module tells the formats apart and builds the Keras teachers from that
form; callers never name a format.

A pretrained teacher has no student table: the student table, the up-projection
and the student-vocabulary MLM head are created fresh. The teacher-vocabulary MLM
head is loaded when the checkpoint has one (HF `cls.predictions.*`, google
`cls/predictions/*`) and created fresh otherwise (MiniLM has none).
"""

import json
import os

import tensorflow as tf

from mixvocab_tf.models import dual_vocab_pretrainer
from mixvocab_tf.models import mlm_pretrainer
from mixvocab_tf.models.teacher_formats import bert_checkpoint
from mixvocab_tf.models.teacher_formats import google_research
from mixvocab_tf.models.teacher_formats import huggingface
from mixvocab_tf.networks import dual_vocab_bert_encoder
from mixvocab_tf.networks import plain_bert_encoder

# The formats' names, importable from here as they were before each format
# had its own module.
HUGGINGFACE = huggingface.FORMAT
GOOGLE = google_research.FORMAT
BERT_LARGE_CONFIG = google_research.BERT_LARGE_CONFIG
BertCheckpoint = bert_checkpoint.BertCheckpoint
assign_encoder_weights = bert_checkpoint.assign_encoder_weights
assign_masked_lm_weights = bert_checkpoint.assign_masked_lm_weights

# The format modules, in the order `detect_checkpoint_format` tries them (a
# directory with both a safetensors and a google checkpoint is Hugging Face's).
_FORMATS = {HUGGINGFACE: huggingface, GOOGLE: google_research}

# Encoder arguments a caller may change without changing any weight's shape.
_ALLOWED_OVERRIDES = ("return_attention_scores", "return_word_embeddings",
                      "output_dropout", "attention_dropout")


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
  return _FORMATS[checkpoint_format].encoder_config(config, source)


def detect_checkpoint_format(path):
  """"huggingface" or "google" for a checkpoint directory (or google prefix)."""
  for checkpoint_format, module in _FORMATS.items():
    if module.is_checkpoint(path):
      return checkpoint_format
  huggingface.check_not_torch_pickle(path)
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
  return checkpoint_format, _FORMATS[checkpoint_format].read_config(path)


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
  return _FORMATS[detect_checkpoint_format(path)].read_checkpoint(path)


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
