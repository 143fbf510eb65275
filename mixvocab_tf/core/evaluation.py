"""Evaluation of a task's model, and the best checkpoint on the validation split.

Fine-tuning (Zhao et al., EACL 2021, Section 4.2) reports dev-set numbers of
the best checkpoint: the trainer's `orbit.Controller` runs the `Evaluator`
(an `orbit.StandardEvaluator`) every `evaluate_every` steps, and its eval
action `BestCheckpoint` keeps the checkpoint with the best validation metric
in `model_dir/best/`, beside a `metrics.json` that says which step it is and
what it scored.

Evaluation follows `official.core.base_task.Task`: `validation_step` gives one
batch's outputs, `aggregate_logs` folds them (as NumPy) into a state, and
`reduce_aggregated_logs` turns the state into metrics. Corpus-level metrics
(F1, slot F1) therefore see every prediction at once. The same function serves
the trainer, `tools/evaluate.py` and the masked-word accuracy of pretraining
checkpoints (`tasks.mlm_eval`).

Files written (by the chief):

  model_dir/metrics.json          the latest evaluation (step, metrics, row)
  model_dir/eval/                 TensorBoard scalars (written by the
                                  Controller) and history.jsonl
  model_dir/best/ckpt-N           the best model so far (no optimizer)
  model_dir/best/metrics.json     its step, metrics and markdown row
  model_dir/best/answers.jsonl    its answer to each example of the split, in
                                  the split's order (tasks with
                                  `eval_answers`: fine-tuning), so that a
                                  report can score it label by label
"""

import json
import math
import os
import time
from typing import Any, Dict, Mapping, Optional

from absl import logging
import numpy as np
import orbit
import tensorflow as tf

from mixvocab_tf.core import metrics_io
from mixvocab_tf.core import checkpointing

BEST_DIR = "best"
METRICS_JSON = "metrics.json"
ANSWERS_JSONL = "answers.jsonl"
EVAL_DIR = "eval"
HISTORY_JSONL = "history.jsonl"


def validation_step_fn(task, model):
  """`task.validation_step` on `model` as a tf.function.

  Keep it across evaluations of one run: a new function traces again for
  every batch shape (length buckets give several), which took most of a
  SNIPS evaluation's two seconds.
  """
  # autograph=False as in the training loop; reduce_retracing: the last batch
  # of a split is usually smaller.
  @tf.function(autograph=False, reduce_retracing=True)
  def step(features):
    return task.validation_step(model, features)
  return step


def write_answers(path: str, task, logs) -> int:
  """Writes `task.eval_answers(logs)` to `path` as JSON lines; returns how many.

  Each line is one example's answer in the split's order, with its position
  in the split (`index`): {"index": 0, "intent": ..., "tags": [...]} or
  {"index": 0, "label": ...}, the fields the exported model's predictor
  answers with, so the same scoring reads both.
  """
  answers = sorted(task.eval_answers(logs), key=lambda pair: pair[0])
  tf.io.gfile.makedirs(os.path.dirname(path) or ".")
  with tf.io.gfile.GFile(path + ".tmp", "w") as f:
    for index, answer in answers:
      f.write(json.dumps(dict(index=int(index), **answer),
                         ensure_ascii=False) + "\n")
  tf.io.gfile.rename(path + ".tmp", path, overwrite=True)
  return len(answers)


def read_answers(path: str, examples: int) -> Optional[list]:
  """The answers `write_answers` wrote, if they cover `examples` examples.

  Returns:
    The answers in the split's order (dicts without `index`), or None when
    the file is missing or covers another number of examples (a partial
    evaluation, or a split that has changed since).
  """
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path) as f:
    records = [json.loads(line) for line in f if line.strip()]
  if [r.get("index") for r in records] != list(range(examples)):
    return None
  return [{k: v for k, v in r.items() if k != "index"} for r in records]


def evaluate(task, model, max_batches: Optional[int] = None,
             dataset: Optional[tf.data.Dataset] = None,
             reduce_fn=None, step_fn=None,
             answers_path: Optional[str] = None) -> Dict[str, float]:
  """Runs `task`'s validation over its evaluation data; returns the metrics.

  Args:
    task: a `base_task.Task`.
    model: its model (weights loaded).
    max_batches: evaluate only this many batches (None: one whole pass).
    dataset: batches to evaluate (default: `task.build_inputs(training=False)`,
      which must end).
    reduce_fn: turns the aggregated state into metrics (default:
      `task.reduce_aggregated_logs`).
    step_fn: `validation_step_fn(task, model)` kept from an earlier call
      (default: a new one).
    answers_path: also write each example's answer here (`write_answers`;
      tasks with `eval_answers`).

  Returns:
    `task.reduce_aggregated_logs(...)`, a dict of floats, plus
    `eval_batches` and `eval_seconds`.

  Raises:
    ValueError: there was no batch to evaluate.
  """
  if max_batches is not None and max_batches <= 0:
    raise ValueError(f"max_batches must be positive or None; received "
                     f"{max_batches!r}.")
  if answers_path and not hasattr(task, "eval_answers"):
    raise ValueError(f"Task {task.task_name} gives no answers per example.")
  evaluator = TaskEvaluator(task, model, dataset=dataset, reduce_fn=reduce_fn,
                            step_fn=step_fn)
  evaluator.evaluate(tf.constant(max_batches or -1, tf.int32))
  if answers_path:
    write_answers(answers_path, task, evaluator.last_logs)
  return evaluator.last_results


def restore_model(task, model, checkpoint: str) -> str:
  """Reads the weights of a trainer checkpoint (or `best/`) into `model`.

  Args:
    task: the task that wrote the checkpoint (its `checkpoint_items` name the
      model's parts; only `model` is read: the whole model, or a
      distillation task's student).
    model: `task.build_model()`.
    checkpoint: a model_dir, a `best/` directory or a checkpoint prefix.

  Returns:
    The checkpoint path read.

  Raises:
    FileNotFoundError: no checkpoint there.
    VocabularyMismatchError: it was trained with other vocabularies.
    ValueError: it does not fit the model (another task or size).
  """
  path = checkpointing.resolve_checkpoint(checkpoint)
  checkpointing.check_vocab_fingerprints(path, task.vocab_fingerprints(),
                                         purpose="evaluating")
  # What the trainer saved as `model`: the whole model, or for the
  # distillation tasks the student (their frozen teacher is not saved).
  saved = task.checkpoint_items(model)["model"]
  try:
    status = tf.train.Checkpoint(model=saved).read(path)
    status.assert_existing_objects_matched()
  except (AssertionError, ValueError) as e:  # Missing or misshapen weights.
    recorded = checkpointing.read_metadata(path)["task"]
    raise ValueError(
        f"{path} (task {recorded or 'unknown'}) does not fit the model of "
        f"task {task.task_name}; evaluate it with the gin config it was "
        f"trained with (its operative_config.gin). Details: {str(e)[:300]}"
    ) from e
  status.expect_partial()
  return path


def count_parameters(model) -> int:
  return int(sum(np.prod(v.shape) for v in model.weights))


def report_fields(task, model, results: Mapping[str, Any],
                  metric_names=None) -> Dict[str, Any]:
  """Model name, parameters, fp32 size and the markdown row of `results`.

  A task may name its model (`report_name()`) and the metrics of its table
  row in order (`report_metrics`); otherwise (and without `metric_names`)
  every float metric is shown.
  """
  name = task.report_name() if hasattr(task, "report_name") else (
      task.task_name)
  params = count_parameters(model)
  names = metric_names or getattr(task, "report_metrics", None) or [
      k for k, v in results.items()
      if isinstance(v, float) and k != "eval_seconds"]
  shown = {k: results.get(k) for k in names}
  return {
      "model": name,
      "parameters": params,
      "size_bytes": 4 * params,
      "markdown_header": metrics_io.markdown_header(list(shown)),
      "markdown_row": metrics_io.markdown_row(name, params, 4 * params, shown),
  }


class TaskEvaluator(orbit.StandardEvaluator):
  """The task's validation over a dataset, as an `orbit.StandardEvaluator`.

  `evaluate(num_steps)` (-1: until the data ends) returns the numeric
  results; `last_results` holds all of them. `evaluate()` above runs it once;
  `Evaluator` adds the run's files and the best checkpoint.

  Args:
    task: the task (`validation_step`, `aggregate_logs`,
      `reduce_aggregated_logs`).
    model: its model.
    dataset: batches to evaluate (default: a new
      `task.build_inputs(training=False)` at every evaluation).
    reduce_fn: turns the aggregated state into metrics (default:
      `task.reduce_aggregated_logs`).
    step_fn: a kept `validation_step_fn(task, model)` (default: made once).
  """

  def __init__(self, task, model, dataset: Optional[tf.data.Dataset] = None,
               reduce_fn=None, step_fn=None):
    # The Python loop of StandardEvaluator around a kept tf.function (see
    # `validation_step_fn`): folding the outputs is NumPy, and the last batch
    # of a split is usually smaller.
    super().__init__(eval_dataset=None,
                     options=orbit.StandardEvaluatorOptions(
                         use_tf_function=False, use_tf_while_loop=False))
    self.task = task
    self.model = model
    self._dataset = dataset
    self._reduce_fn = reduce_fn or task.reduce_aggregated_logs
    self._step_fn = step_fn
    self._start = None
    #: Every result of the latest evaluation (the output holds the numbers).
    self.last_results = None
    #: The aggregated state of the latest evaluation (`task.aggregate_logs`).
    self.last_logs = None

  @property
  def eval_dataset(self):
    # A new pass over the split at every evaluation (built when it starts).
    if self._dataset is not None:
      return self._dataset
    return self.task.build_inputs(None, training=False)

  def eval_begin(self):
    if self._step_fn is None:
      self._step_fn = validation_step_fn(self.task, self.model)
    self._start = time.time()
    return {"logs": None, "batches": 0}

  def eval_step(self, iterator):
    return self._step_fn(next(iterator))

  def eval_reduce(self, state, step_outputs):
    outputs = tf.nest.map_structure(lambda t: t.numpy(), step_outputs)
    state["logs"] = self.task.aggregate_logs(state["logs"], outputs)
    state["batches"] += 1
    return state

  def eval_end(self, state):
    """The numeric results (summaries); all of them in `last_results`."""
    if not state["batches"]:
      raise ValueError(f"Task {self.task.task_name} gave no evaluation "
                       "batch; check its evaluation data.")
    results = dict(self._reduce_fn(state["logs"]))
    results["eval_batches"] = state["batches"]
    results["eval_seconds"] = time.time() - self._start
    self.last_results = results
    self.last_logs = state["logs"]
    return {k: v for k, v in results.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


class Evaluator(TaskEvaluator):
  """The task's validation during training, with the run's files and `best/`.

  `orbit.Controller.evaluate` runs it every `evaluate_every` steps and writes
  its numeric results to `model_dir/eval/`; its eval action `best`
  (a `BestCheckpoint`) writes `metrics.json` and keeps the best checkpoint.

  Example:
  ```python
  evaluator = Evaluator(task, model, model_dir, global_step=step_variable)
  controller = orbit.Controller(evaluator=evaluator,
                                eval_actions=[evaluator.best], ...)
  ```

  Args:
    task: the task (`validation_step`, `aggregate_logs`,
      `reduce_aggregated_logs`; optionally `best_metric`, `report_name()`,
      `report_metrics`, `write_assets(directory)`).
    model: the model being trained (None: only the best so far is read).
    model_dir: the run's directory.
    best_metric: metric that picks the best checkpoint (default: the task's
      `best_metric`; None: no best checkpoint is kept).
    best_mode: "max" or "min".
    max_batches: batches per evaluation (None: the whole split).
    is_chief: only the chief writes files.
    global_step: the run's step variable (the step of each evaluation).
  """

  def __init__(self, task, model, model_dir: str,
               best_metric: Optional[str] = None, best_mode: str = "max",
               max_batches: Optional[int] = None, is_chief: bool = True,
               global_step: Optional[tf.Variable] = None):
    super().__init__(task, model)
    self.max_batches = max_batches
    self.global_step = global_step
    self.best = BestCheckpoint(self, model_dir, best_metric=best_metric,
                               best_mode=best_mode, is_chief=is_chief)

  best_metric = property(lambda self: self.best.best_metric)
  best_value = property(lambda self: self.best.best_value)
  best_step = property(lambda self: self.best.best_step)
  best_dir = property(lambda self: self.best.best_dir)

  @property
  def eval_steps(self) -> int:
    """The `steps` of `Controller.evaluate` (-1: the whole split)."""
    return self.max_batches or -1


class BestCheckpoint:
  """Eval action: writes the evaluation's files and keeps the best model.

  `orbit.actions.NewBestMetric` decides what is best; this action adds what
  orbit does not do: it remembers the best step (early stopping counts from
  it), reads both back from `best/metrics.json` on a resume (a resumed run
  competes with the best of its earlier part), and writes `metrics.json`,
  `eval/history.jsonl` and `best/` as the package documents them.

  Args:
    evaluator: the `Evaluator` whose `last_results` are recorded.
    model_dir: the run's directory.
    best_metric: see `Evaluator`.
    best_mode: "max" or "min".
    is_chief: only the chief writes files.
  """

  def __init__(self, evaluator: Evaluator, model_dir: str,
               best_metric: Optional[str] = None, best_mode: str = "max",
               is_chief: bool = True):
    if best_mode not in ("max", "min"):
      raise ValueError(f"best_mode must be 'max' or 'min'; received "
                       f"{best_mode!r}.")
    self.evaluator = evaluator
    task = evaluator.task
    self.model_dir = model_dir
    self.best_metric = best_metric or getattr(task, "best_metric", None)
    self.best_mode = best_mode
    self.is_chief = is_chief
    self.best_dir = os.path.join(model_dir, BEST_DIR)
    self.best_value = None
    #: The step of the best evaluation so far (None before the first).
    self.best_step = None
    #: Whether the latest evaluation was a new best.
    self.is_best = False
    self._new_best = (orbit.actions.NewBestMetric(
        self._metric_value, higher_is_better=best_mode == "max")
                      if self.best_metric else None)
    self._best_checkpoint = None
    path = os.path.join(self.best_dir, METRICS_JSON)
    if tf.io.gfile.exists(path):
      record = metrics_io.read_metrics_json(path)
      self.best_value = record.get("metrics", {}).get(self.best_metric)
      self.best_step = record.get("step")
      if self._new_best and self.best_value is not None:
        self._new_best.commit({self.best_metric: self.best_value})
    if is_chief and hasattr(task, "write_assets"):
      task.write_assets(model_dir)

  def _metric_value(self, output):
    value = output.get(self.best_metric)
    # A missing or NaN metric is never a new best.
    if value is None or (isinstance(value, float) and math.isnan(value)):
      return -math.inf if self.best_mode == "max" else math.inf
    return value

  def _best(self):
    if self._best_checkpoint is None:
      task, model = self.evaluator.task, self.evaluator.model
      items = dict(task.checkpoint_items(model))
      self._best_checkpoint = checkpointing.RunCheckpoint(
          self.best_dir, items, task_name=task.task_name,
          vocab_fingerprints=task.vocab_fingerprints(), max_to_keep=1,
          encoder_configs=task.encoder_configs(model))
    return self._best_checkpoint

  def __call__(self, unused_output):
    evaluator = self.evaluator
    task, model = evaluator.task, evaluator.model
    step = int(evaluator.global_step.numpy())
    results = dict(evaluator.last_results)
    value = results.get(self.best_metric) if self.best_metric else None
    self.is_best = bool(self._new_best and self._new_best.commit(results))
    results["step"] = step
    shown = " | ".join(f"{k} {v:.4g}" for k, v in results.items()
                       if isinstance(v, float) and k != "eval_seconds")
    logging.info("eval at step %d | %s%s", step, shown,
                 " | new best" if self.is_best else "")
    if self.is_best:
      self.best_value, self.best_step = value, step
    if not self.is_chief:
      return
    extra = report_fields(task, model, results)
    extra.update(task=task.task_name, step=step, best_metric=self.best_metric,
                 split=getattr(task, "eval_split", None))
    if hasattr(task, "describe"):
      extra["description"] = task.describe()
    metrics = {k: v for k, v in results.items() if k != "step"}
    metrics_io.write_metrics_json(
        os.path.join(self.model_dir, METRICS_JSON), metrics, **extra)
    eval_dir = os.path.join(self.model_dir, EVAL_DIR)
    tf.io.gfile.makedirs(eval_dir)
    with tf.io.gfile.GFile(os.path.join(eval_dir, HISTORY_JSONL), "a") as f:
      f.write(json.dumps({"step": step, "metrics": metrics,
                          "markdown_row": extra["markdown_row"]},
                         sort_keys=True, default=float) + "\n")
    if self.is_best:
      path = self._best().save(step)
      if hasattr(task, "write_assets"):
        task.write_assets(self.best_dir)
      if hasattr(task, "eval_answers") and evaluator.last_logs is not None:
        write_answers(os.path.join(self.best_dir, ANSWERS_JSONL), task,
                      evaluator.last_logs)
      metrics_io.write_metrics_json(
          os.path.join(self.best_dir, METRICS_JSON), metrics,
          checkpoint=os.path.basename(path), **extra)
      logging.info("Best %s %.4g at step %d: %s", self.best_metric, value,
                   step, path)
    logging.info("%s", extra["markdown_row"])
