"""Stage I: the teacher learns the student vocabulary on mixed-vocabulary MLM.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3, stage I and Eq. 1. A pretrained teacher reads text in which
each word was segmented with the teacher's or (with probability p_SV = 0.5)
the student's vocabulary. Student tokens are embedded with a new student table
of the student's width d_s and an up-projection to the teacher's width. A
masked token is predicted with the softmax of its own vocabulary, and the loss
adds both cross-entropies (`mlm_task.mlm_loss`). The teacher, both tables and
the up-projection all train.

Stage II (`stage2.py`) reads the student table from this task's checkpoint
under the stable name `student_word_embeddings`.
"""

import json
import os
from typing import Optional

from absl import logging
import tensorflow as tf

from mixvocab_tf import data as data_lib
from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task

#: google-research/bert's uncased_L-24_H-1024_A-16 (BERT-LARGE), the paper's
#: teacher; used by the dry run when its bert_config.json is not reachable.
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

#: Stable checkpoint names that later stages read.
STUDENT_TABLE_KEY = "student_word_embeddings"
UP_PROJECTION_KEY = "up_projection"


def _exists(path):
  return bool(path) and tf.io.gfile.exists(path)


def teacher_encoder_config(teacher_checkpoint: Optional[str],
                           teacher_config: Optional[str] = None):
  """BertEncoderV2 arguments of the teacher, and where they came from.

  Tried in order: the checkpoint's own config (`read_bert_config`), the config
  file `teacher_config` (a google `bert_config.json` or a Hugging Face
  `config.json`), then BERT-LARGE's published dimensions.

  Returns:
    (encoder kwargs, description of the source).
  """
  if _exists(teacher_checkpoint):
    try:
      return (teacher_loader.read_bert_config(teacher_checkpoint)[1],
              f"the config of {teacher_checkpoint}")
    except (ValueError, FileNotFoundError) as e:
      if not _exists(teacher_config):
        raise ValueError(f"Cannot read the teacher checkpoint "
                         f"{teacher_checkpoint}: {e}") from e
  if _exists(teacher_config):
    with tf.io.gfile.GFile(teacher_config) as f:
      config = json.load(f)
    # A google bert_config.json has no model_type, and its "gelu" is the tanh
    # approximation.
    checkpoint_format = (teacher_loader.GOOGLE if "model_type" not in config
                         else teacher_loader.HUGGINGFACE)
    return (teacher_loader.encoder_config_from_bert_config(
        config, checkpoint_format, source=teacher_config), teacher_config)
  return (teacher_loader.encoder_config_from_bert_config(
      BERT_LARGE_CONFIG, teacher_loader.GOOGLE, source="built-in BERT-LARGE"),
          "built-in BERT-LARGE dimensions (24 x 1024, 16 heads; neither the "
          f"checkpoint {teacher_checkpoint!r} nor the config "
          f"{teacher_config!r} was found)")


@base_task.register_task("stage1")
class Stage1Task(mlm_task.MlmTask):
  """Mixed-vocabulary MLM of the teacher (Eq. 1).

  Args:
    teacher_checkpoint: the pretrained teacher, a Hugging Face directory
      (config.json + model.safetensors) or a google-research/bert checkpoint
      (directory with bert_config.json + bert_model.ckpt, or prefix); default:
      the package's default teacher (all-MiniLM-L6-v2).
    teacher_config: a config file giving the teacher's dimensions when the
      checkpoint is not reachable (dry runs); default: the checkpoint's.
    student_embedding_width: d_s, the width of the student table: the hidden
      size of the stage II student (96 for L6-H96).
    dropout_rate: dropout of the teacher (None: the checkpoint's).
    inputs: what to read (`MlmInputs`; default: gin's bindings).
    teacher_vocab: the teacher's vocab.txt (default: the one beside the
      teacher checkpoint, where both layouts keep it).
    student_vocab: the student's vocab.txt (default: the shipped one).
  """

  input_mode = "mixed"

  def __init__(self,
               teacher_checkpoint: Optional[str] = None,
               teacher_config: Optional[str] = None,
               student_embedding_width: int = 96,
               dropout_rate: Optional[float] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               teacher_vocab: Optional[str] = None,
               student_vocab: Optional[str] = None):
    if teacher_checkpoint is None:
      teacher_checkpoint = data_lib.default_teacher_dir()
    if teacher_vocab is None:
      base = (teacher_checkpoint if not teacher_checkpoint.endswith(".ckpt")
              else os.path.dirname(teacher_checkpoint))
      teacher_vocab = os.path.join(base, "vocab.txt")
    super().__init__(inputs=inputs, teacher_vocab=teacher_vocab,
                     student_vocab=student_vocab)
    if int(student_embedding_width) <= 0:
      raise ValueError("student_embedding_width must be positive; received "
                       f"{student_embedding_width!r}.")
    self.teacher_checkpoint = teacher_checkpoint
    self.teacher_config = teacher_config
    self.student_embedding_width = int(student_embedding_width)
    self.dropout_rate = dropout_rate
    self.config_source = None

  def _vocab_size(self, which, default):
    try:
      return len(self.vocab(which))
    except FileNotFoundError:
      # Dry run without the files: sizes from the config.
      return default

  def build_model(self):
    encoder_kwargs, self.config_source = teacher_encoder_config(
        self.teacher_checkpoint, self.teacher_config)
    if self.config_source.startswith("built-in"):
      logging.warning("Teacher dimensions from %s.", self.config_source)
    if self.dropout_rate is not None:
      encoder_kwargs.update(output_dropout=self.dropout_rate,
                            attention_dropout=self.dropout_rate)
    teacher_vocab_size = encoder_kwargs.pop("vocab_size")
    vocab_size = self._vocab_size("teacher", teacher_vocab_size)
    if vocab_size != teacher_vocab_size:
      raise ValueError(
          f"The teacher vocabulary {self.teacher_vocab_path} has {vocab_size} "
          f"tokens but the teacher ({self.config_source}) has "
          f"{teacher_vocab_size} word embeddings; use the checkpoint's own "
          "vocab.txt.")
    student_vocab_size = self._vocab_size(
        "student", networks.PAPER_STUDENT_VOCAB_SIZE)
    encoder = networks.DualVocabBertEncoder(
        teacher_vocab_size=teacher_vocab_size,
        student_vocab_size=student_vocab_size,
        student_embedding_width=self.student_embedding_width,
        **encoder_kwargs)
    return models.DualVocabPretrainer(encoder, name="teacher")

  def initialize(self, model):
    if not _exists(self.teacher_checkpoint):
      raise FileNotFoundError(
          f"Teacher checkpoint not found: {self.teacher_checkpoint}. Stage I "
          "starts from a pretrained teacher; set Stage1Task.teacher_checkpoint "
          "(a Hugging Face directory or a google-research/bert checkpoint).")
    logging.info("Loading the teacher from %s.", self.teacher_checkpoint)
    checkpoint = teacher_loader.read_bert_checkpoint(self.teacher_checkpoint)
    teacher_loader.assign_encoder_weights(model.encoder_network, checkpoint)
    teacher_loader.assign_masked_lm_weights(model.masked_lm, checkpoint)

  def checkpoint_items(self, model):
    encoder = model.encoder_network
    return {
        "model": model,
        # Stable names for stage II (the object paths inside `model` are
        # implementation details of the networks).
        STUDENT_TABLE_KEY: encoder.get_student_embedding_table(),
        UP_PROJECTION_KEY: encoder.up_projection,
    }

  def missing_files(self):
    missing = dict(super().missing_files())
    if not _exists(self.teacher_checkpoint):
      missing["teacher checkpoint"] = f"not found: {self.teacher_checkpoint}"
    return missing

  def describe(self):
    source = f", teacher dims from {self.config_source}" if (
        self.config_source) else ""
    return (f"{super().describe()}, p_SV {self.input_config.p_student}, "
            f"teacher {self.teacher_checkpoint}, student table width "
            f"{self.student_embedding_width}{source}")
