r"""Evaluates a trained checkpoint on a split and prints its metrics.

Fine-tuning runs (SNIPS, GLUE) print the paper's metrics on the chosen split
(Zhao et al., EACL 2021, Tables 2-3); pretraining runs (stage I, stage II,
NoKD) print masked-word prediction accuracy per vocabulary on held-out text.
The run's own `operative_config.gin` rebuilds its task and model, so a
model_dir is all it needs. `mixvocab-evaluate` (installed) or
`python tools/evaluate.py` (in a checkout), the same flags:

  mixvocab-evaluate --model_dir=/tmp/snips                # latest
  mixvocab-evaluate --model_dir=/tmp/snips --checkpoint=best
  mixvocab-evaluate --model_dir=/tmp/mrpc --split=train --max_batches=5
  mixvocab-evaluate --model_dir=/tmp/stage2 --max_batches=50 \
      --input_files=held_out.txt                  # masked-word accuracy
  mixvocab-evaluate --model_dir=/tmp/stage1 --mlm_mode=student

It prints the metrics as JSON, then a markdown header and row (model,
parameters, fp32 size, metrics) for reports; `--output_json` also writes
them. `--checkpoint` takes 'latest', 'best', a directory or a ckpt-N prefix.
"""

import json
import os

from absl import flags
import gin

import mixvocab_tf.tasks  # Registers the built-in tasks.  # pylint: disable=unused-import
from mixvocab_tf.cli import console
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import metrics_io
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.pretraining import mlm_eval
from mixvocab_tf.tasks.pretraining import mlm_task

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags (`run` defines them; importing this does not)."""
  flags.DEFINE_string("model_dir", None,
                      "The run to evaluate; its operative_config.gin "
                      "rebuilds the task unless --gin_file is given.")
  flags.DEFINE_string("checkpoint", "latest",
                      "'latest' (model_dir's), 'best' (model_dir/best), a "
                      "directory or a checkpoint prefix.")
  flags.DEFINE_multi_string(
      "gin_file", [], "Gin files (default: model_dir/operative_config.gin).")
  flags.DEFINE_multi_string("gin_bindings", [], "Extra gin bindings.")
  flags.DEFINE_string("split", None,
                      "Fine-tuning split to evaluate (SNIPS: valid, train; "
                      "GLUE: validation, validation_mismatched, train); "
                      "default: the task's eval_split.")
  flags.DEFINE_integer("max_batches", None,
                       "Evaluate only this many batches (default: all).")
  flags.DEFINE_enum("mlm_mode", None, list(mlm_eval.MODES),
                    "Pretraining runs: segmentation of the text (default: "
                    "the task's: mixed for stage I, student for stage II / "
                    "NoKD).")
  flags.DEFINE_list("input_files", None,
                    "Pretraining runs: held-out text files (default: the "
                    "run's training text).")
  flags.DEFINE_string("output_json", None, "Also write the metrics here.")


def _parse_config():
  task_class = gin_utils.parse_run_config(FLAGS.model_dir, FLAGS.gin_file,
                                          FLAGS.gin_bindings)
  if FLAGS.split:
    if not issubclass(task_class, finetune_task.FinetuneTask):
      raise ValueError(f"--split applies to fine-tuning tasks; task "
                       f"{task_class.task_name} reads its text files "
                       "(use --input_files).")
    gin.bind_parameter(f"{task_class.__name__}.eval_split", FLAGS.split)
  return task_class()


def _checkpoint_path():
  if FLAGS.checkpoint in ("latest", "best"):
    if not FLAGS.model_dir:
      raise ValueError(f"--checkpoint={FLAGS.checkpoint} needs --model_dir.")
    return (FLAGS.model_dir if FLAGS.checkpoint == "latest" else
            os.path.join(FLAGS.model_dir, evaluation.BEST_DIR))
  return FLAGS.checkpoint


def load_model(task, path):
  """The task's model with the weights at `path` (trainer checkpoints).

  The one place that knows model formats: SavedModel exports
  (`mixvocab_tf.export`) plug in here.
  """
  if os.path.isfile(os.path.join(path, "saved_model.pb")):
    raise NotImplementedError(
        f"{path} is a SavedModel; evaluating exports is not supported yet. "
        "Evaluate the trainer checkpoint it was exported from.")
  model = task.build_model()
  return model, evaluation.restore_model(task, model, path)


def _run():
  task = _parse_config()
  path = _checkpoint_path()
  model, checkpoint = load_model(task, path)
  if isinstance(task, mlm_task.MlmTask):
    results = mlm_eval.masked_word_accuracy(
        task, model, FLAGS.max_batches, mode=FLAGS.mlm_mode,
        input_files=FLAGS.input_files)
    table = mlm_eval.accuracy_table(results)
    names = [k for k in sorted(results) if k.endswith("/accuracy") and
             results.get(k.replace("/accuracy", "/masked_tokens"))]
  else:
    results = evaluation.evaluate(task, model, FLAGS.max_batches)
    table = names = None
  extra = evaluation.report_fields(task, model, results, names)
  extra.update(task=task.task_name, checkpoint=checkpoint,
               split=getattr(task, "eval_split", None),
               description=task.describe())
  if isinstance(task, mlm_task.MlmTask):
    extra["input_files"] = FLAGS.input_files or "the run's own text"
  print(json.dumps({"metrics": results, **extra}, indent=2, sort_keys=True,
                   default=str))
  print(table or extra["markdown_header"] + "\n" + extra["markdown_row"])
  if FLAGS.output_json:
    metrics_io.write_metrics_json(FLAGS.output_json, results, **extra)


def main(argv):
  """The absl main of `mixvocab-evaluate` (flags: `define_flags`)."""
  console.run_tool(argv, _run,
                   (ValueError, FileNotFoundError, NotImplementedError))


def run():
  """The `mixvocab-evaluate` console script."""
  define_flags()
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
