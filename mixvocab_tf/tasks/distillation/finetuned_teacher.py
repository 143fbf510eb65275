"""The fine-tuned teacher of the task-distillation tasks (`distill_intent_slot`,
`distill_text_classification`): where its run's checkpoint is, what is missing, and loading
it frozen after checking that the run was made with its vocabulary.
"""

import os
import re

from absl import logging
import tensorflow as tf
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import checkpointing
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.finetuning import finetune_task


def run_dir(path):
  """The run directory of a model_dir, its `best/`, or a checkpoint prefix."""
  path = os.path.normpath(os.fspath(path))
  if path.endswith(".index"):
    path = path[:-len(".index")]
  if re.fullmatch(r"ckpt-\d+", os.path.basename(path)) or (
      tf.io.gfile.exists(path + ".index")):
    path = os.path.dirname(path)
  if os.path.basename(path) == "best":
    path = os.path.dirname(path)
  return path


class FinetunedTeacherMixin:
  """The teacher of a task-distillation task (listed before the fine-tuning
  task's class; its constructor calls `init_teacher`)."""

  def init_teacher(self, teacher_run, teacher_base, teacher_vocab,
                   temperature, weights, teacher_seq_length,
                   teacher_batch_size):
    """Sets the teacher's fields, the temperature and the checked weights.

    Args:
      teacher_run: the teacher's fine-tuning run.
      teacher_base: its pretrained base ('default': the package's teacher).
      teacher_vocab: its vocabulary (None: teacher_base's vocab.txt).
      temperature: T of the distillation terms (positive).
      weights: {name: weight} (each >= 0; `kd` and `hard_label` not both 0).
      teacher_seq_length, teacher_batch_size: for computing its outputs.
    """
    self.teacher_run = teacher_run
    self.teacher_base = (assets.default_teacher_dir()
                         if teacher_base == finetune_task.DEFAULT_TEACHER
                         else teacher_base)
    self.teacher_vocab_path = teacher_vocab or os.path.join(
        self.teacher_base, "vocab.txt")
    self.temperature = losses.positive_temperature(temperature)
    self.kd_projections = {}  # name -> Dense, see `build_kd_projection`.
    self.weights = losses.checked_weights(type(self).__name__, weights,
                                          require_positive=False)
    if not (self.weights["kd"] or self.weights["hard_label"]):
      raise ValueError("kd_weight and hard_label_weight are both 0.")
    self.teacher_seq_length = int(teacher_seq_length)
    self.teacher_batch_size = int(teacher_batch_size)

  def teacher_checkpoint_path(self):
    """The teacher run's `best/` checkpoint if it has one, else its latest."""
    run = os.fspath(self.teacher_run)
    best = os.path.join(run, "best")
    if tf.io.gfile.isdir(run) and tf.train.latest_checkpoint(best):
      run = best
    return checkpointing.resolve_checkpoint(run,
                                            what="fine-tuned teacher run")

  def missing_files(self):
    missing = dict(super().missing_files())
    for what, path in (("teacher base", self.teacher_base),
                       ("teacher vocabulary", self.teacher_vocab_path)):
      if not tf.io.gfile.exists(path):
        missing[what] = f"not found: {path}"
    try:
      self.teacher_checkpoint_path()
    except FileNotFoundError as e:
      missing["fine-tuned teacher"] = str(e)
    return missing

  def teacher_encoder(self):
    """A `PlainBertEncoder` of the teacher base's architecture."""
    config = dict(teacher_loader.read_bert_config(self.teacher_base)[1])
    if self.teacher_seq_length > config["max_sequence_length"]:
      raise ValueError(
          f"teacher_seq_length {self.teacher_seq_length} exceeds the "
          f"teacher's {config['max_sequence_length']} positions.")
    return networks.PlainBertEncoder(**config)

  def load_teacher(self, teacher):
    """Freezes `teacher` and reads the teacher run's weights into it."""
    teacher.trainable = False
    path = self.teacher_checkpoint_path()
    fingerprint = text_lib.vocab_fingerprint(
        text_lib.load_vocab(self.teacher_vocab_path))
    # A teacher run records its vocabulary as the teacher's.
    checkpointing.check_vocab_fingerprints(
        path, {"teacher": fingerprint}, purpose="distilling the teacher")
    status = tf.train.Checkpoint(model=teacher).read(path)
    status.assert_existing_objects_matched().expect_partial()
    logging.info("Loaded the fine-tuned teacher from %s.", path)
    return teacher

  # ---------------------------------------------------------------------------
  # Learnt maps from the student's width to the teacher's, for the
  # representation terms (`distill_intent_slot`' word hidden states, `distill_text_classification`'s
  # pooled outputs).

  def build_kd_projection(self, name):
    """A `Dense` student width -> teacher width, built, registered by name.

    Call from `build_model` after the student's encoder is built. The
    projection is trained (`trainable_variables`) and checkpointed beside the
    model under `name` (`checkpoint_items`), so a run resumes exactly; it is
    not part of the model, and export leaves it out.
    """
    teacher_width = teacher_loader.read_bert_config(
        self.teacher_base)[1]["hidden_size"]
    projection = tf_keras.layers.Dense(teacher_width, name=name)
    with tf.init_scope():
      projection(tf.zeros([1, self.encoder_config["hidden_size"]]))
    self.kd_projections[name] = projection
    return projection

  def trainable_variables(self, model):
    variables = list(super().trainable_variables(model))
    for projection in self.kd_projections.values():
      variables += projection.trainable_variables
    return variables

  def checkpoint_items(self, model):
    items = dict(super().checkpoint_items(model))
    items.update(self.kd_projections)
    return items
