r"""Exports a trained student as a SavedModel that takes raw strings.

From a fine-tuning run (Zhao et al., EACL 2021, §4.2: SNIPS, or SST-2 /
MRPC / MNLI): the run's `operative_config.gin` rebuilds its task and model,
the checkpoint's weights are read, and the task's labels, vocabulary and
sequence length go into the export module (`mixvocab_tf.export`):

  python tools/export_saved_model.py --model_dir=/tmp/snips \
      --checkpoint=best --export_dir=/tmp/snips_export

  # Labels or vocabulary other than the run's:
  python tools/export_saved_model.py --model_dir=/tmp/snips \
      --labels=/tmp/snips/snips_labels.json \
      --vocab=mixvocab_tf/data/student_vocab.txt --export_dir=/tmp/export

From a pretraining run (stage II, NoKD, a baseline): the bare student encoder
(strings in, pooled and sequence outputs out):

  python tools/export_saved_model.py --model_dir=/tmp/stage2 --encoder \
      --export_dir=/tmp/encoder_export

The SavedModel loads with `tf_keras.models.load_model` (the fine-tuned model,
token features in) and `keras.layers.TFSMLayer(export_dir,
call_endpoint="serving_default")` (strings in); convert it with
`tools/convert_tflite.py`. Prints a JSON summary.
"""

import json
import os
import sys

from absl import app
from absl import flags
import gin

from mixvocab_tf import data as data_lib
from mixvocab_tf.jobs import report
from mixvocab_tf.export import checkpoint_export
from mixvocab_tf.export import encoder_export_module
import mixvocab_tf.tasks  # Registers the built-in tasks.  # pylint: disable=unused-import
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.finetuning import finetune_snips
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import trainer as trainer_lib

_MODEL_DIR = flags.DEFINE_string(
    "model_dir", None, "The trainer run to export (its operative_config.gin "
    "rebuilds the task unless --gin_file is given).")
_CHECKPOINT = flags.DEFINE_string(
    "checkpoint", "best", "'best' (model_dir/best, falling back to the "
    "latest if the run kept none), 'latest', a directory or a ckpt-N prefix.")
_EXPORT_DIR = flags.DEFINE_string("export_dir", None,
                                  "The new SavedModel directory.")
_LABELS = flags.DEFINE_string(
    "labels", None, "SNIPS label JSON (default: the run's "
    "snips_labels.json, else built from SNIPS train).")
_VOCAB = flags.DEFINE_string(
    "vocab", None, "The vocab.txt the model was trained with (default: the "
    "run's).")
_ENCODER = flags.DEFINE_bool(
    "encoder", False, "Export the bare student encoder of a pretraining run "
    "(stage II, NoKD, ...) instead of a fine-tuned model.")
_ENCODER_KEY = flags.DEFINE_string(
    "encoder_key", "student_encoder", "With --encoder: the encoder's name in "
    "the checkpoint.")
_SEQ_LENGTH = flags.DEFINE_integer(
    "seq_length", None, "Most tokens per input (default: the task's; "
    f"{encoder_export_module.DEFAULT_SEQ_LENGTH} with --encoder).")
_GIN_FILE = flags.DEFINE_multi_string(
    "gin_file", [], "Gin files (default: model_dir/operative_config.gin).")
_GIN_BINDINGS = flags.DEFINE_multi_string("gin_bindings", [],
                                          "Extra gin bindings.")


def _checkpoint_path():
  model_dir, checkpoint = _MODEL_DIR.value, _CHECKPOINT.value
  if checkpoint in ("latest", "best"):
    if not model_dir:
      raise ValueError(f"--checkpoint={checkpoint} needs --model_dir.")
    best = os.path.join(model_dir, evaluation.BEST_DIR)
    return best if checkpoint == "best" and os.path.isdir(best) else model_dir
  return checkpoint


def _task():
  files = list(_GIN_FILE.value)
  if not files:
    if not _MODEL_DIR.value:
      raise ValueError("Give --model_dir (its operative_config.gin is read) "
                       "or --gin_file.")
    files = [os.path.join(_MODEL_DIR.value, trainer_lib.OPERATIVE_CONFIG)]
    if not os.path.isfile(files[0]):
      raise FileNotFoundError(
          f"{files[0]} not found; pass the run's --gin_file instead.")
  try:
    # An operative config of a pipeline run also binds the pipeline's
    # configurables, which gin must know to parse the file.
    import mixvocab_tf.jobs.pipeline  # pylint: disable=g-import-not-at-top,unused-import
  except ImportError:
    pass
  gin_utils.parse(files, _GIN_BINDINGS.value)
  task_class = base_task.get_task_class(gin.query_parameter("Trainer.task"))
  name = task_class.__name__
  with gin.unlock_config():
    if _VOCAB.value:
      gin.bind_parameter(f"{name}.vocab", _VOCAB.value)
    if _SEQ_LENGTH.value:
      gin.bind_parameter(f"{name}.seq_length", _SEQ_LENGTH.value)
    labels = _LABELS.value
    if labels is None and _MODEL_DIR.value:
      run_labels = os.path.join(_MODEL_DIR.value, finetune_snips.LABELS_FILE)
      labels = run_labels if os.path.isfile(run_labels) else None
    if labels and issubclass(task_class, finetune_snips.FinetuneSnipsTask):
      gin.bind_parameter(f"{name}.labels_file", labels)
  return task_class()


def _run():
  if not _EXPORT_DIR.value:
    raise ValueError("--export_dir is required.")
  if _ENCODER.value:
    path = _checkpoint_path()
    export_dir, read = checkpoint_export.export_encoder_checkpoint(
        path, _EXPORT_DIR.value,
        _VOCAB.value or data_lib.default_student_vocab(),
        _SEQ_LENGTH.value or encoder_export_module.DEFAULT_SEQ_LENGTH,
        key=_ENCODER_KEY.value)
    task_name = "encoder"
  else:
    task = _task()
    export_dir, read = checkpoint_export.export_task_checkpoint(
        task, _checkpoint_path(), _EXPORT_DIR.value)
    task_name = task.task_name
  size = report.file_size(export_dir)
  print(json.dumps({"export_dir": export_dir, "checkpoint": read,
                    "task": task_name, "size_bytes": size}, indent=1))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  try:
    _run()
  except (ValueError, FileNotFoundError, FileExistsError) as e:
    print(f"\nerror: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
  app.run(main)
