"""Exports a trainer checkpoint (a fine-tuning run, or a bare student).

Connects the fine-tuning tasks of Zhao et al. (EACL 2021), §4.2, to serving:
the task that trained a checkpoint rebuilds its model and names what serving
needs (labels, vocabulary, sequence length), and the matching export module
wraps it. `tools/export_saved_model.py` builds the task from the run's
`operative_config.gin` and calls `export_task_checkpoint`.
"""

from mixvocab_tf import networks
from mixvocab_tf.export import encoder_export_module
from mixvocab_tf.export import glue_export_module
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import snips_export_module
from mixvocab_tf.tasks.finetuning import finetune_glue
from mixvocab_tf.tasks.finetuning import finetune_snips
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning import glue_data
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import evaluation

import tensorflow as tf


def export_module_for_task(task, model):
  """The export module of a fine-tuning `task`'s `model`.

  Args:
    task: a `FinetuneSnipsTask` or `FinetuneGlueTask`.
    model: its model (`task.build_model()`), with trained weights.

  Raises:
    ValueError: another kind of task.
  """
  if isinstance(task, finetune_snips.FinetuneSnipsTask):
    return snips_export_module.SnipsExportModule(
        model, task.labels, task.vocab_path, seq_length=task.seq_length)
  if isinstance(task, finetune_glue.FinetuneGlueTask):
    return glue_export_module.GlueExportModule(
        model, task.label_names, task.vocab_path,
        pair=glue_data.is_pair_task(task.glue_task),
        seq_length=task.seq_length)
  raise ValueError(
      f"Task {task.task_name!r} is not a fine-tuning task (finetune_snips, "
      "finetune_glue); export its student encoder with "
      "export_encoder_checkpoint instead.")


def export_task_checkpoint(task, checkpoint, export_dir):
  """Restores `task`'s model from `checkpoint` and exports it.

  Args:
    task: the fine-tuning task that wrote the checkpoint.
    checkpoint: a model_dir, its `best/` directory or a ckpt-N prefix.
    export_dir: the new SavedModel directory.

  Returns:
    (export_dir, the checkpoint path read).
  """
  model = task.build_model()
  path = evaluation.restore_model(task, model, checkpoint)
  module = export_module_for_task(task, model)
  return saved_model_export.export_saved_model(module, export_dir), path


def export_encoder_checkpoint(checkpoint, export_dir, vocab,
                              seq_length=encoder_export_module
                              .DEFAULT_SEQ_LENGTH,
                              key=finetune_task.STUDENT_ENCODER_KEY):
  """Exports the encoder saved under `key` (stage II, NoKD, a baseline).

  The encoder's sizes are read from the checkpoint's variable shapes.

  Returns:
    (export_dir, the checkpoint path read).
  """
  path = checkpointing.resolve_checkpoint(checkpoint)
  config = finetune_task.encoder_config_from_checkpoint(path, key)
  encoder = networks.PlainBertEncoder(**config)
  status = tf.train.Checkpoint(**{key: encoder}).read(path)
  status.assert_existing_objects_matched().expect_partial()
  module = encoder_export_module.EncoderExportModule(encoder, vocab,
                                                     seq_length)
  return saved_model_export.export_saved_model(module, export_dir), path
