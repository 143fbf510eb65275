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
them, and `--predictions` (fine-tuning runs) each example's answer, as the
trainer keeps the best checkpoint's in `best/answers.jsonl`. `--checkpoint`
takes 'latest', 'best', a directory or a ckpt-N prefix.

An exported model (a SavedModel, a .tflite or its builtin-ops file) is
scored with `--model` on labelled data in the own-data job's formats
(`--data`: a .csv, .tsv or .jsonl file, a seq.in / seq.out / label
directory, or a dataset directory, whose `--split` is read, validation by
default), through the predictor an app's answers come from
(`serving/scoring.py`): intent accuracy and slot F1, or accuracy, and
macro-F1, beside the floor of always answering the most frequent label
(train's for a dataset directory, else the data's own), the worst labels
(and slot types) and the most confused pairs:

  mixvocab-evaluate --model=runs/mine/export/model_dynamic.tflite \
      --data=new_queries.csv --predictions=answers.jsonl
  mixvocab-evaluate --model=runs/mine/export/saved_model \
      --data=my_dataset --split=test

It prints the scores as JSON, then a short table for people;
`--output_json` also writes the JSON, `--predictions` each example's answer
beside its gold label. The data is checked before the model loads.

`--baseline` names a second exported model, e.g. the file an app runs now,
scored on the same examples: each headline score's change from it to
`--model`, with a 95% interval from a paired bootstrap over the examples
(`scoring.paired_change`), so that a change of a few examples is not taken
for an improvement:

  mixvocab-evaluate --model=runs/mine2/export/model_dynamic.tflite \
      --baseline=runs/mine/export/model_dynamic.tflite --data=new.csv
"""

import json
import os
import sys

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
                      "default: the task's eval_split. With --model and a "
                      "dataset directory: validation (default), test or "
                      "train.")
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
  flags.DEFINE_string(
      "model", None, "An exported model to score on --data instead of a "
      "checkpoint: a SavedModel directory, a .tflite or its builtin-ops "
      "file.")
  flags.DEFINE_string(
      "data", None, "With --model: labelled examples, a .csv, .tsv, .jsonl "
      "or .conll file, a Rasa NLU file, a Label Studio JSON export, a "
      "seq.in / seq.out / label directory, or a dataset directory (its "
      "--split; default validation).")
  flags.DEFINE_string("text_column", "text", "With --data: the column of "
                      "the text (or of the first text of a pair).")
  flags.DEFINE_string("text_b_column", None, "With --data: the column of "
                      "a pair's second text (default: text_b when there is "
                      "no text column).")
  flags.DEFINE_string("label_column", "label", "With --data: the column of "
                      "the label.")
  flags.DEFINE_string("predictions", None, "Write each example's answer "
                      "here (JSON lines): with --model, beside its gold label "
                      "and whether it is right; with --model_dir (a "
                      "fine-tuning run), with its position in the split.")
  flags.DEFINE_string(
      "baseline", None, "With --model: another exported model (e.g. the "
      "one an app runs now) scored on the same examples; prints each "
      "score's change from it to --model with a 95% interval (paired "
      "bootstrap).")
  flags.DEFINE_integer("batch_size", None, "With --model: examples per call "
                       "of the model (default: the predictor's).",
                       lower_bound=1)


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
    raise ValueError(
        f"{path} is a SavedModel, not a trainer checkpoint; score an export "
        "with --model and --data (labelled examples).")
  model = task.build_model()
  return model, evaluation.restore_model(task, model, path)


def _run_export():
  """`--model`: an exported model scored on `--data`."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.serving import predictor as predictor_lib
  from mixvocab_tf.serving import scoring
  # pylint: enable=g-import-not-at-top
  if FLAGS.model_dir or FLAGS.gin_file:
    raise ValueError("--model scores an exported model; --model_dir and "
                     "--gin_file name a training run. Give one of them.")
  if not FLAGS.data:
    raise ValueError("--model needs --data: the labelled examples to score "
                     "it on (a .csv, .tsv or .jsonl file, a seq.in / seq.out "
                     "/ label directory, or a dataset directory).")
  labelled = scoring.read_labelled(
      FLAGS.data, split=FLAGS.split, text_column=FLAGS.text_column,
      text_b_column=FLAGS.text_b_column, label_column=FLAGS.label_column)
  kwargs = {} if FLAGS.batch_size is None else {
      "batch_size": FLAGS.batch_size}
  progress = lambda line: print(line, file=sys.stderr, flush=True)
  # Both models load before either answers: a baseline that cannot serve
  # this data is refused first.
  models = [predictor_lib.load_predictor(path, **kwargs)
            for path in (FLAGS.model, FLAGS.baseline) if path]
  for predictor in models:
    scoring.check_compatible(predictor, labelled)
  result = scoring.score_predictor(
      models[0], labelled, predictions_path=FLAGS.predictions,
      progress=progress, keep_answers=True)
  answers = result.pop("answers")
  lines = scoring.summary_lines(result)
  if FLAGS.baseline:
    rows, gold = scoring.rows_and_gold(labelled.split)
    before = scoring.predict_all(models[1], rows, progress)
    names = scoring.headline_names(labelled.kind)
    result["baseline"] = {"model": models[1].model_path, "change":
                          scoring.paired_change(
                              labelled.kind, before, answers, gold,
                              list(models[0].labels))}
    lines += ["", f"Against --baseline={FLAGS.baseline}, on the same "
              f"{result['examples']:,} examples: " + scoring.change_text(
                  result["baseline"]["change"], names) + ". The intervals "
              f"are a paired bootstrap ({scoring.RESAMPLES:,} resamples of "
              "the examples, the same for both models): one that holds 0 "
              "says the change may be chance."]
  extra = {k: v for k, v in result.items() if k != "scores"}
  print(json.dumps({"metrics": result["scores"], **extra}, indent=2,
                   sort_keys=True, ensure_ascii=False))
  print("\n".join(lines))
  if FLAGS.output_json:
    metrics_io.write_metrics_json(FLAGS.output_json, result["scores"],
                                  **extra)


def _run():
  if FLAGS.model:
    _run_export()
    return
  given = [f"--{name}" for name in ("data", "baseline") if FLAGS[name].value]
  if given:
    raise ValueError(
        f"{' and '.join(given)} {'go' if len(given) > 1 else 'goes'} with "
        "--model (an exported model scored on labelled data); a training "
        "run's checkpoint is scored on its own task's data.")
  task = _parse_config()
  if FLAGS.predictions and not hasattr(task, "eval_answers"):
    raise ValueError(f"--predictions: task {task.task_name} gives no answer "
                     "per example (fine-tuning tasks do).")
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
    results = evaluation.evaluate(task, model, FLAGS.max_batches,
                                  answers_path=FLAGS.predictions)
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
  # A DataError (a broken --data file) is a ValueError.
  console.run_tool(argv, _run, (ValueError, FileNotFoundError))


def run():
  """The `mixvocab-evaluate` console script."""
  define_flags()
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
