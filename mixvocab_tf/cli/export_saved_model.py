r"""Exports a trained student as a SavedModel that takes raw strings.

`mixvocab-export` (installed) or `python tools/export_saved_model.py` (in a
checkout), the same flags.

From a fine-tuning run (Zhao et al., EACL 2021, §4.2: SNIPS, or SST-2 /
MRPC / MNLI): the run's `operative_config.gin` rebuilds its task and model,
the checkpoint's weights are read, and the task's own export module wraps
them with its labels, vocabulary and sequence length
(`mixvocab_tf.serving.export_run`, which the jobs' export steps call too):

  mixvocab-export --model_dir=/tmp/snips --checkpoint=best \
      --export_dir=/tmp/snips_export

  # Labels or vocabulary other than the run's:
  mixvocab-export --model_dir=/tmp/snips \
      --labels=/tmp/snips/snips_labels.json \
      --vocab=mixvocab_tf/assets/student_vocab.txt --export_dir=/tmp/export

From a teacher's fine-tuning run (an own-data job's `teacher`): the BERT it
tuned, as a Hugging Face BERT directory, the TEACHER of a next job:

  mixvocab-export --model_dir=runs/mine/teacher --bert \
      --export_dir=teachers/mine

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

from mixvocab_tf.cli import console
from mixvocab_tf.export import encoder_export_module
from mixvocab_tf.serving import export_run

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags (`run` defines them; importing this does not)."""
  flags.DEFINE_string(
      "model_dir", None, "The trainer run to export (its "
      "operative_config.gin rebuilds the task unless --gin_file is given).")
  flags.DEFINE_string(
      "checkpoint", "best", "'best' (model_dir/best, falling back to the "
      "latest if the run kept none), 'latest', a directory or a ckpt-N "
      "prefix.")
  flags.DEFINE_string("export_dir", None, "The new SavedModel directory.")
  flags.DEFINE_string(
      "labels", None, "SNIPS label JSON (default: the run's "
      "snips_labels.json, else built from SNIPS train).")
  flags.DEFINE_string(
      "vocab", None, "The vocab.txt the model was trained with (default: "
      "the run's).")
  flags.DEFINE_bool(
      "encoder", False, "Export the bare student encoder of a pretraining "
      "run (stage II, NoKD, ...) instead of a fine-tuned model.")
  flags.DEFINE_bool(
      "bert", False, "Write the BERT a teacher's fine-tuning run tuned (an "
      "own-data job's `teacher`) as a Hugging Face BERT directory "
      "(config.json, model.safetensors, vocab.txt; its heads left out) "
      "instead of a SavedModel: the TEACHER of a next own-data job.")
  flags.DEFINE_string(
      "encoder_key", "student_encoder", "With --encoder: the encoder's name "
      "in the checkpoint.")
  flags.DEFINE_integer(
      "seq_length", None, "Most tokens per input (default: the task's; "
      f"{encoder_export_module.DEFAULT_SEQ_LENGTH} with --encoder).")
  flags.DEFINE_bool(
      "pack_word_tables", True, "Whether the signature converted to .tflite "
      "reads the word table at 4 bits a weight (half its bytes); "
      "--nopack_word_tables keeps it whole, as the jobs' export does when 4 "
      "bits cost the model more than 0.3 points (and one example's worth) on "
      "validation.")
  flags.DEFINE_multi_string(
      "gin_file", [], "Gin files (default: model_dir/operative_config.gin).")
  flags.DEFINE_multi_string("gin_bindings", [], "Extra gin bindings.")


def _run():
  if not FLAGS.export_dir:
    raise ValueError("--export_dir is required.")
  if FLAGS.bert:
    summary = export_run.export_bert_run(FLAGS.model_dir, FLAGS.export_dir,
                                         FLAGS.checkpoint)
  elif FLAGS.encoder:
    summary = export_run.export_encoder_run(
        FLAGS.model_dir, FLAGS.export_dir, FLAGS.checkpoint,
        vocab=FLAGS.vocab, seq_length=FLAGS.seq_length,
        key=FLAGS.encoder_key)
  else:
    summary = export_run.export_run(
        FLAGS.model_dir, FLAGS.export_dir, FLAGS.checkpoint,
        gin_files=FLAGS.gin_file, gin_bindings=FLAGS.gin_bindings,
        vocab=FLAGS.vocab, seq_length=FLAGS.seq_length,
        labels=FLAGS.labels, pack_word_tables=FLAGS.pack_word_tables)
  print(json.dumps(summary, indent=1))


def main(argv):
  """The absl main of `mixvocab-export` (flags: `define_flags`)."""
  console.run_tool(argv, _run)


def run():
  """The `mixvocab-export` console script."""
  define_flags()
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
