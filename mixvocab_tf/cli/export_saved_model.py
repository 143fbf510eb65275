r"""Exports a trained student as a SavedModel that takes raw strings.

`mixvocab-export` (installed) or `python tools/export_saved_model.py` (in a
checkout), the same flags.

From a fine-tuning run (Zhao et al., EACL 2021, §4.2: SNIPS, or SST-2 /
MRPC / MNLI): the run's `operative_config.gin` rebuilds its task and model,
the checkpoint's weights are read, and the task's own export module wraps
them with its labels, vocabulary and sequence length
(`mixvocab_tf.jobs.export_run`, which the main job's export step calls too):

  mixvocab-export --model_dir=/tmp/snips --checkpoint=best \
      --export_dir=/tmp/snips_export

  # Labels or vocabulary other than the run's:
  mixvocab-export --model_dir=/tmp/snips \
      --labels=/tmp/snips/snips_labels.json \
      --vocab=mixvocab_tf/assets/student_vocab.txt --export_dir=/tmp/export

From a pretraining run (stage II, NoKD, a baseline): the bare student encoder
(strings in, pooled and sequence outputs out):

  mixvocab-export --model_dir=/tmp/stage2 --encoder \
      --export_dir=/tmp/encoder_export

The SavedModel loads with `tf_keras.models.load_model` (the fine-tuned model,
token features in) and `keras.layers.TFSMLayer(export_dir,
call_endpoint="serving_default")` (strings in); convert it with
`mixvocab-convert` and query it with `mixvocab-predict`. Prints a JSON
summary.
"""

import json

from absl import flags

from mixvocab_tf import cli as cli_entry
from mixvocab_tf.core import cli
from mixvocab_tf.export import encoder_export_module
from mixvocab_tf.jobs import export_run

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


def _run():
  if not _EXPORT_DIR.value:
    raise ValueError("--export_dir is required.")
  if _ENCODER.value:
    summary = export_run.export_encoder_run(
        _MODEL_DIR.value, _EXPORT_DIR.value, _CHECKPOINT.value,
        vocab=_VOCAB.value, seq_length=_SEQ_LENGTH.value,
        key=_ENCODER_KEY.value)
  else:
    summary = export_run.export_run(
        _MODEL_DIR.value, _EXPORT_DIR.value, _CHECKPOINT.value,
        gin_files=_GIN_FILE.value, gin_bindings=_GIN_BINDINGS.value,
        vocab=_VOCAB.value, seq_length=_SEQ_LENGTH.value,
        labels=_LABELS.value)
  print(json.dumps(summary, indent=1))


def main(argv):
  cli.run_tool(argv, _run)


def run():
  """The `mixvocab-export` console script."""
  cli_entry.run_main(main, __name__)


if __name__ == "__main__":
  run()
