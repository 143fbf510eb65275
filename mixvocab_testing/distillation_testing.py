"""Fixtures for the distillation tasks' tests: tiny teachers and stage I runs.

A stage I checkpoint is written without training (a tiny pretrained teacher
with a student table, both MLM heads, the vocabularies' fingerprints, in the
layout of a trainer checkpoint), so that the tests of the tasks that read one
need not run stage I first.
"""

import os

import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import models
from mixvocab_tf import text as text_lib
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.core import checkpointing
from mixvocab_testing import trainer_testing as testing


def tiny_teacher(directory, **kwargs):
  """A tiny pretrained teacher (HF layout, no MLM head, as MiniLM) in
  `directory`, written once."""
  if not os.path.isfile(os.path.join(directory, "config.json")):
    os.makedirs(directory, exist_ok=True)
    kwargs.setdefault("with_mlm_head", False)
    testing.write_tiny_teacher(directory, **kwargs)
  return directory


def write_stage1_run(directory, teacher_dir, student_embedding_width,
                     student_vocab=None, seed=1, teacher=None):
  """A stage I model_dir as the trainer writes it, without training.

  Args:
    directory: the model_dir to write.
    teacher_dir: the pretrained tiny teacher.
    student_embedding_width: width of the student table.
    student_vocab: the student vocab.txt (default: the shipped one).
    seed: seed of the fresh student table and heads.
    teacher: a `DualVocabPretrainer` to save instead of a fresh one.

  Returns:
    (directory, teacher): the teacher saved.
  """
  student_vocab = student_vocab or assets.default_student_vocab()
  student_tokens = text_lib.load_vocab(student_vocab)
  teacher_tokens = text_lib.load_vocab(os.path.join(teacher_dir, "vocab.txt"))
  if teacher is None:
    tf.keras.utils.set_random_seed(seed)
    teacher = models.load_teacher(
        teacher_dir, student_vocab_size=len(student_tokens),
        student_embedding_width=student_embedding_width)
  encoder = teacher.encoder_network
  checkpoint = tf.train.Checkpoint(
      model=teacher,
      **{stage1.STUDENT_TABLE_KEY: encoder.get_student_embedding_table(),
         stage1.UP_PROJECTION_KEY: encoder.up_projection},
      metadata=checkpointing.make_metadata("stage1", {
          "teacher": text_lib.vocab_fingerprint(teacher_tokens),
          "student": text_lib.vocab_fingerprint(student_tokens)}))
  tf.train.CheckpointManager(checkpoint, directory, max_to_keep=1,
                             checkpoint_name=checkpointing.CHECKPOINT_PREFIX
                             ).save(checkpoint_number=1)
  return directory, teacher


def tiny_inputs(batch_size=4, seq_length=testing.TINY_SEQ_LENGTH):
  """Small batches of the built-in corpus."""
  return mlm_inputs.MlmInputs(global_batch_size=batch_size,
                              seq_length=seq_length, max_predictions=5,
                              max_teacher_predictions=3, shuffle_buffer=16)


def first_batch(task):
  """The first training batch of `task` (eager tensors)."""
  return next(iter(task.build_inputs(training=True)))
