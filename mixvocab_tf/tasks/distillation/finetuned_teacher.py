"""The fine-tuned teacher of the task-distillation tasks (`distill_snips`,
`distill_glue`): where its run's checkpoint is, what is missing, and loading
it frozen after checking that the run was made with its vocabulary.
"""

import os
import re

from absl import logging
import tensorflow as tf

from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import checkpointing
from mixvocab_tf.models import teacher_loader


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
  """For tasks with `teacher_run`, `teacher_base`, `teacher_vocab_path` and
  `teacher_seq_length` (listed before the fine-tuning task's class)."""

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
