"""Exports a trained run as a SavedModel that takes raw strings, in process.

Serving the students of Zhao et al. (EACL 2021), §4.2, starts from a trainer
run: `export_run` rebuilds the run's task from its `operative_config.gin`
(`gin_utils.parse_run_config`), restores the chosen checkpoint and writes the
task's own export module (`task.export_module(model)`); `export_encoder_run`
does the same for the bare student encoder of a pretraining run (stage II,
NoKD, a baseline). `mixvocab-export` (`cli/export_saved_model.py`) and the
jobs' export step (`jobs.export_steps`) call
them, so the export works from an installed package, without a source
checkout.

Example:
```python
from mixvocab_tf.serving import export_run
export_run.export_run("/tmp/snips", "/tmp/snips_export")  # best checkpoint
```
"""

import os
from typing import Optional, Sequence

import tensorflow as tf

import mixvocab_tf.tasks  # Registers the built-in tasks.  # pylint: disable=unused-import
from mixvocab_tf import assets
from mixvocab_tf import networks
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import run_files
from mixvocab_tf.export import checkpoint_export
from mixvocab_tf.export import encoder_export_module
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.models.teacher_formats import huggingface
from mixvocab_tf.tasks.finetuning import finetune_task

CHECKPOINT_CHOICES = ("best", "latest")


def checkpoint_path(model_dir: Optional[str], checkpoint: str = "best") -> str:
  """What to restore: 'best' (model_dir/best, else the latest), 'latest'
  (model_dir's latest), or `checkpoint` itself (a directory or ckpt-N)."""
  if checkpoint in CHECKPOINT_CHOICES:
    if not model_dir:
      raise ValueError(f"checkpoint={checkpoint!r} needs the run's model_dir; "
                       "received none. Give a checkpoint path instead.")
    best = os.path.join(model_dir, evaluation.BEST_DIR)
    return (best if checkpoint == "best" and tf.io.gfile.isdir(best) else
            model_dir)
  return checkpoint


def _summary(export_dir, checkpoint, task_name):
  return {"export_dir": export_dir, "checkpoint": checkpoint,
          "task": task_name, "size_bytes": run_files.file_size(export_dir)}


def export_run(model_dir: Optional[str], export_dir: str,
               checkpoint: str = "best",
               gin_files: Sequence[str] = (),
               gin_bindings: Sequence[str] = (),
               vocab: Optional[str] = None,
               seq_length: Optional[int] = None,
               labels: Optional[str] = None,
               pack_word_tables: bool = True) -> dict:
  """Exports a fine-tuning run through its task's export module.

  The caller's gin configuration is left as it was (`isolated_config`), so a
  job can export in the middle of its own steps.

  Args:
    model_dir: the run; its `operative_config.gin` rebuilds the task unless
      `gin_files` is given.
    export_dir: the new SavedModel directory.
    checkpoint: 'best', 'latest' or a checkpoint path (`checkpoint_path`).
    gin_files: the run's gin files, instead of its operative config.
    gin_bindings: extra bindings.
    vocab: the vocab.txt the model was trained with (default: the run's).
    seq_length: most tokens per input (default: the run's).
    labels: a label file instead of the run's (tasks that have one, e.g.
      SNIPS' `snips_labels.json`; see `export_overrides`).
    pack_word_tables: whether the signatures converted to .tflite read the
      word table at 4 bits per weight (`export.saved_model_export`).

  Returns:
    {'export_dir', 'checkpoint' (the path read), 'task' (its registered
    name), 'size_bytes'}.

  Raises:
    ValueError: the run's task has no export module.
  """
  with gin_utils.isolated_config():
    task_class = gin_utils.parse_run_config(model_dir, gin_files,
                                            gin_bindings)
    overrides = {}
    if hasattr(task_class, "export_overrides"):
      overrides.update(task_class.export_overrides(model_dir, labels))
    if vocab:
      overrides["vocab"] = vocab
    if seq_length:
      overrides["seq_length"] = seq_length
    task = task_class(**overrides)
    export_dir, read = checkpoint_export.export_task_checkpoint(
        task, checkpoint_path(model_dir, checkpoint), export_dir,
        pack_word_tables=pack_word_tables)
  return _summary(export_dir, read, task.task_name)


def export_encoder_run(model_dir: Optional[str], export_dir: str,
                       checkpoint: str = "best",
                       vocab: Optional[str] = None,
                       seq_length: Optional[int] = None,
                       key: str = finetune_task.STUDENT_ENCODER_KEY) -> dict:
  """Exports the encoder a pretraining run saved under `key`.

  Strings in, `pooled_output` and `sequence_output` out
  (`EncoderExportModule`). The encoder's sizes are read from the
  checkpoint's variable shapes, as fine-tuning reads them.

  Args:
    model_dir: the run (None with a checkpoint path).
    export_dir: the new SavedModel directory.
    checkpoint: 'best' (falls back to the latest: pretraining keeps no best),
      'latest' or a checkpoint path.
    vocab: the student vocab.txt (default: the shipped one).
    seq_length: most tokens per text (default
      `EncoderExportModule`'s).
    key: the encoder's name in the checkpoint.

  Returns:
    As `export_run`, with task 'encoder'.
  """
  path = checkpointing.resolve_checkpoint(checkpoint_path(model_dir,
                                                          checkpoint))
  config = finetune_task.encoder_config_from_checkpoint(path, key)
  encoder = networks.PlainBertEncoder(**config)
  status = tf.train.Checkpoint(**{key: encoder}).read(path)
  status.assert_existing_objects_matched().expect_partial()
  module = encoder_export_module.EncoderExportModule(
      encoder, vocab or assets.default_student_vocab(),
      seq_length or encoder_export_module.DEFAULT_SEQ_LENGTH)
  saved_model_export.export_saved_model(module, export_dir)
  return _summary(export_dir, path, module.task)


def export_bert_run(model_dir: str, output_dir: str,
                    checkpoint: str = "best") -> dict:
  """Writes the BERT a teacher's fine-tuning run tuned as a Hugging Face
  BERT directory (`huggingface.write_checkpoint`; its heads left out).

  A teacher the own-data job fine-tuned on a user's data knows their domain;
  written this way it is the `TEACHER` of the next job (another task of the
  same app), or a model for other tools.

  Args:
    model_dir: a fine-tuning run of a pretrained BERT (a job's `teacher`).
    output_dir: the new directory.
    checkpoint: 'best', 'latest' or a checkpoint path (`checkpoint_path`).

  Returns:
    {'export_dir', 'checkpoint' (the path read), 'task', 'size_bytes'}.

  Raises:
    ValueError: the run fine-tuned a student, not a pretrained BERT.
  """
  with gin_utils.isolated_config():
    task = gin_utils.parse_run_config(model_dir, (), ())()
    if not getattr(task, "teacher_checkpoint", None):
      raise ValueError(
          f"{model_dir} fine-tuned a student, not a pretrained BERT (its "
          "task has no teacher_checkpoint); give a teacher's run, e.g. an "
          "own-data job's `teacher` directory.")
    model = task.build_model()
    read = evaluation.restore_model(task, model,
                                    checkpoint_path(model_dir, checkpoint))
    huggingface.write_checkpoint(model.encoder_network, task.encoder_config,
                                 task.vocab_path, output_dir)
  return _summary(output_dir, read, task.task_name)
