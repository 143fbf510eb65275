"""Exports the model of a trainer checkpoint through its task's export module.

Connects the fine-tuning tasks of Zhao et al. (EACL 2021), §4.2, to serving:
the task that trained a checkpoint rebuilds its model, and its
`export_module(model)` wraps it with the tokenizer, labels and sequence length
that serving needs. This file knows no task: a new fine-tuning task exports
by defining `export_module`. `mixvocab_tf.serving.export_run` rebuilds the task
from a run's `operative_config.gin` and calls `export_task_checkpoint`.
"""

from mixvocab_tf.core import evaluation
from mixvocab_tf.export import saved_model_export


def export_task_checkpoint(task, checkpoint, export_dir,
                           pack_word_tables=True):
  """Restores `task`'s model from `checkpoint` and exports it.

  Args:
    task: the task that wrote the checkpoint; it must have
      `export_module(model)` (the fine-tuning tasks do).
    checkpoint: a model_dir, its `best/` directory or a ckpt-N prefix.
    export_dir: the new SavedModel directory.
    pack_word_tables: whether the signatures converted to .tflite read the
      word table at 4 bits per weight (`saved_model_export`).

  Returns:
    (export_dir, the checkpoint path read).

  Raises:
    ValueError: the task has no export module.
  """
  if not callable(getattr(task, "export_module", None)):
    raise ValueError(
        f"Task {getattr(task, 'task_name', type(task).__name__)!r} has no "
        "export module; expected a task with export_module(model) (a "
        "fine-tuning task such as intent_slot or text_classification). Export a "
        "pretraining run's student encoder with "
        "mixvocab_tf.serving.export_run.export_encoder_run instead.")
  model = task.build_model()
  path = evaluation.restore_model(task, model, checkpoint)
  module = task.export_module(model)
  return saved_model_export.export_saved_model(
      module, export_dir, pack_word_tables=pack_word_tables), path
