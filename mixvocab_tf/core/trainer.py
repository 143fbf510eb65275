"""The training loop shared by every task: strategy, LAMB, checkpoints, logs.

One `Trainer` runs any registered `Task` (stage I and II of Zhao et al., EACL
2021, Section 3; the NoKD and dual-training baselines; later fine-tuning):

* the model and the optimizer are created in the strategy's scope; each input
  pipeline gets its `tf.distribute.InputContext` through
  `strategy.distribute_datasets_from_function`;
* each replica's loss is its share of the global-batch objective (see
  `tasks.base_task`); the trainer all-reduces the gradients itself, takes their
  global norm once (logged) and clips with it before the optimizer's update;
* checkpoints (`RunCheckpoint`) hold model, optimizer and step, the dropout
  generators and the input iterator, so that a run killed at any moment and
  restarted ends with the weights of an uninterrupted run;
* TensorBoard scalars and a console line with an ETA every `log_every` steps;
  `operative_config.gin` beside the checkpoints;
* a non-finite loss stops the run with the step in the message, without
  saving, so the last good checkpoint stays the latest.

Dropout randomness: tf_keras dropout normally uses stateful TF1 random ops
whose state lives in the kernel and restarts with the process. The trainer
builds the model with tf_keras's `tf.random.Generator`-backed random ops
(`enable_tf_random_generator`, switched on only while the model is built) and
checkpoints those generators. Their dropout draws 16 random bits per element
rather than a float32 (`core.dropout`: half the random-number work).
"""

import contextlib
import dataclasses
import datetime
import json
import os
import time
from typing import Any, Dict, List, Optional, Union

from absl import logging
import gin
import numpy as np
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import base_task
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import distribute
from mixvocab_tf.core import dropout as dropout_lib
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import optimization as optimization_lib

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
OPERATIVE_CONFIG = "operative_config.gin"
#: Where checkpoints whose weights gave a NaN or a loss spike are moved.
DIVERGED_DIR = "diverged"
#: Written when early stopping ends a run: its step, the best step and why.
EARLY_STOPPING_JSON = "early_stopping.json"


class NonFiniteLossError(RuntimeError):
  """The loss or the gradient norm became NaN or Inf."""


@dataclasses.dataclass
class LogRecord:
  """What the trainer logged at one step (also returned by `train`)."""
  step: int
  scalars: Dict[str, float]


@contextlib.contextmanager
def _generator_backed_dropout():
  """Builds layers whose dropout draws from checkpointable tf.random.Generators.

  Only the construction needs the switch: each layer fixes its kind of random
  generator when it is created, so other models of the process are left as
  they are.
  """
  experimental = tf_keras.backend.experimental
  was_enabled = experimental.is_tf_random_generator_enabled()
  experimental.enable_tf_random_generator()
  try:
    yield
  finally:
    if not was_enabled:
      experimental.disable_tf_random_generator()


def dropout_generators(model: tf.Module) -> List[tf.random.Generator]:
  """The tf.random.Generators behind the dropout of `model`'s layers.

  tf_keras keeps them in a private attribute of each layer and leaves them out
  of the layer's checkpoint dependencies; this lists them (in the layers'
  deterministic traversal order) so the trainer can checkpoint them.
  """
  generators = []
  seen = set()
  # pylint: disable=protected-access
  for layer in model._flatten_layers(include_self=True, recursive=True):
    random_generator = getattr(layer, "_random_generator", None)
    generator = getattr(random_generator, "_generator", None)
    if isinstance(generator, tf.random.Generator) and id(generator) not in seen:
      seen.add(id(generator))
      generators.append(generator)
  # pylint: enable=protected-access
  return generators


def _iterator_trackables(iterator):
  """Checkpointable parts of an (optionally distributed) input iterator."""
  if isinstance(iterator, tf.__internal__.tracking.Trackable):
    return [iterator]
  # A DistributedIterator is not trackable itself; with per-replica input and
  # no fetching to device (see `_input_options`) each of its parts is a plain
  # tf.data iterator, which is.
  parts = [getattr(it, "_iterator", None)
           for it in getattr(iterator, "_iterators", [])]
  if parts and all(isinstance(p, tf.__internal__.tracking.Trackable)
                   for p in parts):
    return parts
  return None


def parameter_summary(model: tf.Module, trainable_variables=None,
                      depth: int = 2) -> str:
  """A table of parameter counts by variable-name prefix, trainable or not."""
  trainable_ids = {id(v) for v in (
      model.trainable_variables if trainable_variables is None
      else trainable_variables)}
  groups: Dict[str, List[int]] = {}
  total = [0, 0]
  for variable in model.variables:
    name = variable.name.split(":")[0]
    prefix = "/".join(name.split("/")[:depth])
    count = int(np.prod(variable.shape)) if variable.shape.rank else 1
    column = 0 if id(variable) in trainable_ids else 1
    groups.setdefault(prefix, [0, 0])[column] += count
    total[column] += count
  width = max([len(k) for k in groups] + [10])
  lines = [f"{'variables':<{width}}  {'trained':>12}  {'frozen':>12}"]
  for prefix in sorted(groups):
    trained, frozen = groups[prefix]
    lines.append(f"{prefix:<{width}}  {trained:>12,}  {frozen:>12,}")
  lines.append(f"{'total':<{width}}  {total[0]:>12,}  {total[1]:>12,}")
  return "\n".join(lines)


def _dummy_batch(element_spec):
  """Zeros shaped like one example of `element_spec` (batch 1)."""
  def zeros(spec):
    shape = [1] + [d if d is not None else 1 for d in spec.shape.as_list()[1:]]
    return tf.zeros(shape, spec.dtype)
  return tf.nest.map_structure(zeros, element_spec)


def _format_duration(seconds):
  return str(datetime.timedelta(seconds=int(max(seconds, 0))))


@gin.configurable(module="mixvocab_tf.trainer", denylist=["model_dir",
                                                          "strategy"])
class Trainer:
  """Trains a task; resumes from the run's own latest checkpoint.

  Example:
  ```python
  trainer = Trainer(model_dir="/tmp/run", task="stage1", train_steps=300)
  trainer.train()
  ```

  Args:
    model_dir: directory of checkpoints, summaries and the operative config.
    strategy: a `tf.distribute.Strategy` (default: the default strategy).
    task: a registered task name (`base_task.registered_tasks()`), its class,
      or a `Task`; a name or class is built with gin's bindings.
    train_steps: optimizer steps of the whole run.
    optimization: an `official` OptimizationConfig (default:
      `optimization_config(train_steps=train_steps)` with gin's bindings).
    steps_per_loop: steps per call of the compiled training loop.
    checkpoint_every: steps between checkpoints (the last step always saves).
    keep_checkpoints: checkpoints kept.
    log_every: steps between console lines and TensorBoard scalars.
    precision: "float32", "mixed_bfloat16", "mixed_float16" or "auto"
      (bfloat16 on TPU, else float32).
    seed: seed of weight initialisation and dropout.
    deterministic: make TF ops deterministic (exact resume tests; slower).
    evaluate_every: steps between evaluations on the task's validation data
      (and at the last step); None: no evaluation. The best checkpoint is
      kept in `model_dir/best/` (see `evaluation.Evaluator`).
    eval_max_batches: batches per evaluation (None: the whole split).
    best_metric: the metric that picks the best checkpoint (None: the
      task's `best_metric`).
    loss_spike_factor: divergence guard: the run stops (like on a NaN) when
      a step's loss exceeds this factor times max(1, the running average of
      the losses so far); None: only NaN and Inf stop it. A checkpoint counts
      as good once the loss measured right after it passed this check; on a
      stop, checkpoints that did not are moved to `diverged/`, so a rerun
      resumes from a good one.
    early_stopping_patience: stop when this many evaluations in a row have
      not improved on the best one (None: train all `train_steps`). Counted
      from the best checkpoint's step, so a resumed run stops where an
      uninterrupted one would; a stopped run stays stopped when rerun.
      Without `evaluate_every` it is not used (a warning says so).
      `train_steps` is then the budget's ceiling (and the length of the
      learning-rate schedule).
  """

  def __init__(self,
               model_dir: str,
               strategy: Optional[tf.distribute.Strategy] = None,
               task: Union[str, type, base_task.Task] = gin.REQUIRED,
               train_steps: int = gin.REQUIRED,
               optimization: Optional[Any] = None,
               steps_per_loop: int = 1,
               checkpoint_every: int = 1000,
               keep_checkpoints: int = 3,
               log_every: int = 100,
               precision: str = "auto",
               seed: int = 0,
               deterministic: bool = False,
               evaluate_every: Optional[int] = None,
               eval_max_batches: Optional[int] = None,
               best_metric: Optional[str] = None,
               early_stopping_patience: Optional[int] = None,
               loss_spike_factor: Optional[float] = 10.0):
    if not model_dir:
      raise ValueError("model_dir is required (where checkpoints go).")
    for name, value in (("train_steps", train_steps),
                        ("steps_per_loop", steps_per_loop),
                        ("checkpoint_every", checkpoint_every),
                        ("keep_checkpoints", keep_checkpoints),
                        ("log_every", log_every)):
      if not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer; received "
                         f"{value!r}.")
    for name, value in (("evaluate_every", evaluate_every),
                        ("eval_max_batches", eval_max_batches),
                        ("early_stopping_patience", early_stopping_patience)):
      if value is not None and (not isinstance(value, int) or value <= 0):
        raise ValueError(f"{name} must be a positive integer or None; "
                         f"received {value!r}.")
    if early_stopping_patience and not evaluate_every:
      # A config that evaluates (and stops early) run without evaluations,
      # e.g. for a timing run: nothing to count, so nothing stops early.
      logging.warning("early_stopping_patience=%s is not used: "
                      "evaluate_every is None, so there are no evaluations "
                      "to count.", early_stopping_patience)
      early_stopping_patience = None
    if loss_spike_factor is not None and not loss_spike_factor > 1:
      raise ValueError("loss_spike_factor must be above 1 (or None); "
                       f"received {loss_spike_factor!r}.")
    self.loss_spike_factor = loss_spike_factor
    self.evaluate_every = evaluate_every
    self.early_stopping_patience = early_stopping_patience
    self.stopped_early_at = None
    self.eval_max_batches = eval_max_batches
    self.best_metric = best_metric
    self.eval_results = []
    if precision not in PRECISIONS:
      raise ValueError(f"precision must be one of {PRECISIONS}; received "
                       f"{precision!r}.")
    self.model_dir = model_dir
    self.strategy = strategy or tf.distribute.get_strategy()
    self.train_steps = train_steps
    self.steps_per_loop = steps_per_loop
    self.checkpoint_every = checkpoint_every
    self.keep_checkpoints = keep_checkpoints
    self.log_every = log_every
    self.seed = seed
    self.deterministic = deterministic
    if precision == "auto":
      precision = ("mixed_bfloat16" if distribute.is_tpu(self.strategy)
                   else "float32")
    self.precision = precision
    self.task = self._make_task(task)
    if optimization is None:
      optimization = optimization_lib.optimization_config(
          train_steps=train_steps)
    self.optimization = optimization
    self.clip_norm = optimization_lib.clip_norm_of(optimization)
    self.worker_index, self.num_workers = distribute.worker_info(self.strategy)
    self._stop_requested = False
    self._built = False

  @staticmethod
  def _make_task(task):
    if isinstance(task, base_task.Task):
      return task
    if isinstance(task, str):
      task = base_task.get_task_class(task)
    if isinstance(task, type) and issubclass(task, base_task.Task):
      return task()
    raise ValueError("task must be a registered task name, a Task class or a "
                     f"Task; received {task!r}.")

  @property
  def is_chief(self):
    return self.worker_index == 0

  def request_stop(self):
    """Asks the loop to save and return after the current steps (SIGTERM)."""
    self._stop_requested = True

  # ---------------------------------------------------------------------------
  # Building.

  def build(self):
    """Builds model, optimizer, input and checkpoint; idempotent."""
    if self._built:
      return
    tf_keras.utils.set_random_seed(self.seed)
    if self.deterministic:
      tf.config.experimental.enable_op_determinism()
    tf_keras.mixed_precision.set_global_policy(self.precision)
    logging.info("Task %s", self.task.describe())
    with self.strategy.scope():
      with _generator_backed_dropout():
        self.model = self.task.build_model()
      dropout_lib.use_sixteen_bit_dropout(self.model)
      self.optimizer, self.learning_rate = optimization_lib.build_optimizer(
          self.optimization)
      if self.precision == "mixed_float16":
        self.optimizer = tf_keras.mixed_precision.LossScaleOptimizer(
            self.optimizer)
    self.trainable_variables = list(self.task.trainable_variables(self.model))
    if not self.trainable_variables:
      raise ValueError(f"Task {self.task.task_name} has no trainable "
                       "variables.")
    self.iterator, element_spec = self._make_input_iterator()

    # One forward pass in the scope's cross-replica context creates the
    # dropout generators (they are created lazily, and a replica function
    # cannot create variables under a MirroredStrategy).
    with self.strategy.scope():
      self.task.compute_loss(self.model, _dummy_batch(element_spec),
                             training=True)
    self.dropout_generators = dropout_generators(self.model)
    input_trackables = _iterator_trackables(self.iterator)
    if input_trackables is None:
      logging.warning(
          "The input iterator of %s cannot be checkpointed; a resumed run "
          "reads the data from its start again.", type(self.strategy).__name__)
    items = dict(self.task.checkpoint_items(self.model))
    items.update(optimizer=self.optimizer, dropout_rng=self.dropout_generators)
    if input_trackables is not None:
      items["input"] = input_trackables
    self.run_checkpoint = checkpointing.RunCheckpoint(
        self.model_dir, items, task_name=self.task.task_name,
        vocab_fingerprints=self.task.vocab_fingerprints(),
        max_to_keep=self.keep_checkpoints, worker_index=self.worker_index,
        num_workers=self.num_workers,
        encoder_configs=self.task.encoder_configs(self.model))
    self._train_loop = self._make_train_loop()
    self.evaluator = evaluation.Evaluator(
        self.task, self.model, self.model_dir, best_metric=self.best_metric,
        max_batches=self.eval_max_batches,
        is_chief=self.is_chief) if self.evaluate_every else None
    self._built = True

  def _make_input_iterator(self):
    """The training input iterator and the spec of one replica's batch.

    Per-replica batches always come from `task.build_inputs` with the
    pipeline's `tf.distribute.InputContext`. The iterator is laid out so that
    tf.train.Checkpoint can save its position wherever tf.distribute allows:

    * default strategy: the plain tf.data iterator;
    * MirroredStrategy: one host-side iterator per replica (PER_REPLICA, no
      fetching to device; a host-to-device copy per step, small next to a
      step on CPU or GPU);
    * MultiWorkerMirroredStrategy with one device per worker: each worker
      iterates its own pipeline (its InputContext as tf.distribute would
      build it) and hands the batch to `strategy.run`, because the
      multi-device iterator of `distribute_datasets_from_function` cannot be
      saved;
    * otherwise (TPU, several devices per worker): the distributed iterator,
      whose position is not saved (a warning says so).
    """
    strategy = self.strategy
    specs = []

    def dataset_fn(context):
      dataset = self.task.build_inputs(context, training=True)
      specs.append(dataset.element_spec)
      return dataset

    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and (
        len(strategy.extended.worker_devices) == 1):
      context = tf.distribute.InputContext(
          num_input_pipelines=self.num_workers,
          input_pipeline_id=self.worker_index,
          num_replicas_in_sync=strategy.num_replicas_in_sync)
      with tf.device(strategy.extended.worker_devices[0]):
        return iter(dataset_fn(context)), specs[0]
    options = None
    if isinstance(strategy, tf.distribute.MirroredStrategy):
      options = tf.distribute.InputOptions(
          experimental_fetch_to_device=False,
          experimental_replication_mode=(
              tf.distribute.InputReplicationMode.PER_REPLICA))
    dataset = strategy.distribute_datasets_from_function(dataset_fn,
                                                         options=options)
    return iter(dataset), specs[0]

  # ---------------------------------------------------------------------------
  # The step.

  def _replica_step(self, features):
    variables = self.trainable_variables
    with tf.GradientTape() as tape:
      loss, metrics = self.task.compute_loss(self.model, features,
                                             training=True)
      loss = tf.cast(loss, tf.float32)
      scaled_loss = loss
      if self.precision == "mixed_float16":
        scaled_loss = self.optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled_loss, variables)
    if self.precision == "mixed_float16":
      grads = self.optimizer.get_unscaled_gradients(grads)
    pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
    grads = [g for g, _ in pairs]
    context = tf.distribute.get_replica_context()
    # The replicas' losses add up to the global objective, so the sum of their
    # gradients is its gradient.
    grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
    grad_norm = tf.linalg.global_norm(grads)
    if self.clip_norm:
      grads, _ = tf.clip_by_global_norm(grads, self.clip_norm,
                                        use_norm=grad_norm)
    self.optimizer.apply_gradients(
        zip(grads, [v for _, v in pairs]),
        experimental_aggregate_gradients=False)
    loss, metrics = context.all_reduce(tf.distribute.ReduceOp.SUM,
                                       (loss, metrics))
    return loss, grad_norm, metrics

  def _make_train_loop(self):
    strategy = self.strategy

    # autograph=False: the loop is written with tf.while_loop, and Keras then
    # traces the layers' `call` as written instead of converting each one
    # with autograph first, which is most of the tracing time of a BERT.
    @tf.function(autograph=False)
    def train_step(iterator):
      outputs = strategy.run(self._replica_step, args=(next(iterator),))
      # All-reduced in the replicas: every replica holds the same values.
      loss, grad_norm, metrics = tf.nest.map_structure(
          lambda v: strategy.experimental_local_results(v)[0], outputs)
      finite = tf.math.is_finite(loss)
      if self.precision != "mixed_float16":
        # With float16, dynamic loss scaling expects overflowing gradients
        # now and then: the LossScaleOptimizer skips those steps and lowers
        # the scale.
        finite = tf.logical_and(finite, tf.math.is_finite(grad_norm))
      return loss, grad_norm, metrics, finite

    @tf.function(autograph=False)
    def train_loop(iterator, num_steps):
      # The first step outside the loop gives the metrics their structure;
      # train_step is one function, traced once for both calls.
      loss, norm_sum, metrics, finite = train_step(iterator)
      no_bad_step = tf.constant(-1, tf.int64)

      def bad_step_if(finite):
        return tf.where(finite, no_bad_step,
                        tf.cast(self.optimizer.iterations, tf.int64))

      def more(i, bad_step, *unused):
        return tf.logical_and(i < num_steps, bad_step < 0)

      def body(i, bad_step, last_loss, loss_sum, norm_sum, metrics):
        del bad_step, last_loss
        loss, norm, step_metrics, finite = train_step(iterator)
        metrics = tf.nest.map_structure(tf.add, metrics, step_metrics)
        return (i + 1, bad_step_if(finite), loss, loss_sum + loss,
                norm_sum + norm, metrics)

      _, bad_step, loss, loss_sum, norm_sum, metrics = tf.while_loop(
          more, body, (tf.constant(1, num_steps.dtype), bad_step_if(finite),
                       loss, loss, norm_sum, metrics))
      return loss_sum, norm_sum, metrics, bad_step, loss

    return train_loop

  # ---------------------------------------------------------------------------
  # The run.

  def _write_operative_config(self):
    if not self.is_chief:
      return
    tf.io.gfile.makedirs(self.model_dir)
    path = os.path.join(self.model_dir, OPERATIVE_CONFIG)
    with tf.io.gfile.GFile(path + ".tmp", "w") as f:
      f.write(gin.operative_config_str())
    tf.io.gfile.rename(path + ".tmp", path, overwrite=True)

  def _check_files(self):
    missing = self.task.missing_files()
    if missing:
      raise FileNotFoundError(
          f"Task {self.task.task_name} cannot start: " + "; ".join(
              f"{what}: {problem}" for what, problem in missing.items()))

  def _step(self):
    return int(self.optimizer.iterations.numpy())

  def train(self, until_step: Optional[int] = None) -> List[LogRecord]:
    """Runs (or resumes) training to `train_steps`; returns the logged records.

    Args:
      until_step: stop (and save) at this step instead, e.g. to run a schedule
        of `train_steps` in several sessions.

    Raises:
      NonFiniteLossError: the loss became NaN or Inf, or spiked (see
        `loss_spike_factor`); nothing more is saved.
      VocabularyMismatchError: the run's checkpoint has other vocabularies.
      RunDirectoryBusyError: another live process trains in this model_dir.
    """
    # One process per run directory (each worker owns its own directory);
    # taken before anything is built, so an unwritable or busy model_dir
    # fails at once.
    lock = checkpointing.RunLock(checkpointing.worker_directory(
        self.model_dir, self.worker_index))
    with lock:
      return self._train(until_step)

  def _train(self, until_step):
    if not checkpointing.has_checkpoint(self.model_dir):
      # A fresh run: fail before the (slow) build if a file is missing.
      self._check_files()
    self.build()
    restored = self.run_checkpoint.restore_latest()
    if restored is None:
      self._check_files()
      self.task.initialize(self.model)
    self._write_operative_config()
    step = self._step()
    if restored is not None and step != restored:
      raise ValueError(f"Checkpoint ckpt-{restored} holds optimizer step "
                       f"{step}; it was not written by this trainer.")
    end_step = self.train_steps if until_step is None else min(
        until_step, self.train_steps)
    if self._should_stop_early(step):
      logging.info("Stopped early already (%s); nothing to do.",
                   self._early_stopping_reason(step))
      return []
    if step >= end_step:
      logging.info("Step %d already reaches step %d; nothing to do.", step,
                   end_step)
      return []
    logging.info("Training %s from step %d to %d, global batch %d, %d "
                 "replica(s), %s.", self.task.task_name, step,
                 self.train_steps, self.task.global_batch_size,
                 self.strategy.num_replicas_in_sync, self.precision)
    writer = (tf.summary.create_file_writer(
        os.path.join(self.model_dir, "train")) if self.is_chief else
              tf.summary.create_noop_writer())
    records = []
    window = _Window()
    guard = _DivergenceGuard(self.loss_spike_factor)
    start_step, start_time = step, time.time()
    timed_from = None  # (step, time) after the first loop, which traces.
    with writer.as_default():
      while step < end_step:
        boundary = min(end_step,
                       _next_multiple(step, self.log_every),
                       _next_multiple(step, self.checkpoint_every),
                       _next_multiple(step, self.evaluate_every or end_step),
                       step + self.steps_per_loop)
        loss_sum, norm_sum, metrics, bad_step, last_loss = self._train_loop(
            self.iterator, tf.constant(boundary - step, tf.int32))
        bad_step = int(bad_step)
        if bad_step >= 0:
          self._stop_diverged(
              step, f"Non-finite loss or gradient at step {bad_step} (loss "
              f"{float(last_loss)})")
        chunk_loss = float(loss_sum) / (boundary - step)
        guard.check(step, chunk_loss, self)
        done = boundary - step
        step = self._step()
        window.add(done, float(loss_sum), float(norm_sum),
                   tf.nest.map_structure(lambda t: t.numpy(), metrics))
        now = time.time()
        if timed_from is None:
          timed_from = (step, now)
        if step % self.log_every == 0 or step == end_step:
          records.append(self._log(step, window, timed_from, now))
          window = _Window()
        if step % self.checkpoint_every == 0 or step == end_step:
          self.run_checkpoint.save(step)
        if self.evaluator and (step % self.evaluate_every == 0 or
                               step == end_step):
          self.eval_results.append(self.evaluator.run(step))
          if self._should_stop_early(step):
            logging.info("Early stopping at step %d: %s.", step,
                         self._early_stopping_reason(step))
            self.stopped_early_at = step
            if step % self.checkpoint_every and step != end_step:
              self.run_checkpoint.save(step)
            self._write_early_stopping(step)
            break
        if self._stop_requested:
          logging.warning("Stop requested at step %d.", step)
          self.run_checkpoint.save(step)
          break
    writer.flush()
    logging.info("Trained steps %d-%d in %s.", start_step, step,
                 _format_duration(time.time() - start_time))
    return records

  def _stop_diverged(self, step, what):
    """Sets aside checkpoints not known to be good; raises with the reason.

    Every chunk of steps before this one passed the checks, so every
    checkpoint before `step` was followed by a good loss; one saved at `step`
    itself gave the bad loss.
    """
    moved = (self.run_checkpoint.set_aside_from(step, DIVERGED_DIR)
             if self.is_chief else [])
    good = self.run_checkpoint.latest_checkpoint or "none"
    raise NonFiniteLossError(
        f"{what}. Stopped without saving. A checkpoint counts as good when "
        "the loss measured right after it was finite and below "
        f"{self.loss_spike_factor} x max(1, the running average loss)"
        + (f"; {', '.join(moved)} did not pass and was moved to diverged/"
           if moved else "") +
        f". The latest good checkpoint is {good}; rerunning resumes from it. "
        "Lower the learning rate, check the inputs, or use float32.")

  def _should_stop_early(self, step):
    """Whether `early_stopping_patience` evaluations passed without a best."""
    if not (self.early_stopping_patience and self.evaluator and
            self.evaluator.best_step is not None):
      return False
    since_best = (step - self.evaluator.best_step) // self.evaluate_every
    return since_best >= self.early_stopping_patience

  def _write_early_stopping(self, step):
    if not self.is_chief:
      return
    record = {"step": step, "best_step": self.evaluator.best_step,
              "best_metric": self.evaluator.best_metric,
              "best_value": self.evaluator.best_value,
              "patience": self.early_stopping_patience,
              "evaluate_every": self.evaluate_every,
              "train_steps": self.train_steps,
              "reason": self._early_stopping_reason(step)}
    with tf.io.gfile.GFile(os.path.join(self.model_dir, EARLY_STOPPING_JSON),
                           "w") as f:
      json.dump(record, f, indent=2)

  def _early_stopping_reason(self, step):
    return (f"{self.evaluator.best_metric} has not improved for "
            f"{(step - self.evaluator.best_step) // self.evaluate_every} "
            f"evaluations (patience {self.early_stopping_patience}); the "
            f"best, {self.evaluator.best_value:.4g}, is step "
            f"{self.evaluator.best_step}'s, kept in "
            f"{self.evaluator.best_dir}")

  def _log(self, step, window, timed_from, now):
    scalars = {"loss": window.loss_sum / max(window.steps, 1),
               "gradient_norm": window.norm_sum / max(window.steps, 1),
               "learning_rate": float(self.learning_rate(step - 1))}
    for name, (total, count) in sorted(window.metrics.items()):
      scalars[name] = float(total / count) if count else float("nan")
    elapsed = now - window.start
    if window.steps and elapsed > 0:
      scalars["examples_per_second"] = (window.steps *
                                        self.task.global_batch_size / elapsed)
    for name, value in scalars.items():
      tf.summary.scalar(name, value, step=step)
    timed_steps, timed_time = step - timed_from[0], now - timed_from[1]
    eta = ((self.train_steps - step) * timed_time / timed_steps
           if timed_steps > 0 else float("nan"))
    shown = " | ".join(
        f"{k} {v:.4g}" for k, v in scalars.items()
        if k not in ("learning_rate", "examples_per_second"))
    logging.info(
        "step %d/%d (%.0f%%) | %s | lr %.3g | %.1f ex/s | ETA %s", step,
        self.train_steps, 100.0 * step / self.train_steps, shown,
        scalars["learning_rate"], scalars.get("examples_per_second", 0.0),
        _format_duration(eta) if eta == eta else "?")
    return LogRecord(step=step, scalars=scalars)

  # ---------------------------------------------------------------------------
  # Dry run.

  def dry_run(self) -> str:
    """Validates the config and builds the model; returns the report.

    Runs on the default strategy (no TPU is touched), builds no optimizer
    slots and reads no data. Files the run needs but this machine lacks are
    listed, not fatal.
    """
    tf_keras.utils.set_random_seed(self.seed)
    with _generator_backed_dropout():
      model = self.task.build_model()
    trainable = list(self.task.trainable_variables(model))
    lines = [f"Task: {self.task.describe()}", "Parameters:"]
    lines.append(parameter_summary(model, trainable))
    schedule = optimization_lib.build_optimizer(self.optimization)[1]
    marks = sorted({0, self.train_steps // 10, self.train_steps // 2,
                    self.train_steps - 1})
    lines.append(
        f"Optimizer: {self.optimization.optimizer.type}, clip norm "
        f"{self.clip_norm}, {self.train_steps} steps, learning rate " +
        ", ".join(f"step {s}: {float(schedule(s)):.3g}" for s in marks))
    missing = self.task.missing_files()
    if missing:
      lines.append("Not found on this machine (training would stop here):")
      lines.extend(f"  {k}: {v}" for k, v in missing.items())
    else:
      lines.append("All files the run needs are present.")
    lines.append("Operative config:")
    lines.append(gin.operative_config_str())
    return "\n".join(lines)


class _DivergenceGuard:
  """The loss-spike check of `Trainer.loss_spike_factor`.

  The reference is the running mean of the chunks' mean losses seen so far
  in this process; a chunk whose mean loss exceeds `factor * max(1,
  reference)` stops the run. The floor of 1 keeps fine-tuning losses near 0
  from tripping the check on an ordinary hard batch.
  """

  def __init__(self, factor):
    self.factor = factor
    self.total, self.count = 0.0, 0

  def check(self, step, loss, trainer):
    if self.factor and self.count:
      reference = self.total / self.count
      limit = self.factor * max(1.0, reference)
      if loss > limit:
        trainer._stop_diverged(  # pylint: disable=protected-access
            step, f"Loss spike after step {step}: {loss:.4g}, above "
            f"{self.factor} x max(1, running average {reference:.4g}) = "
            f"{limit:.4g}")
    self.total += loss
    self.count += 1


@dataclasses.dataclass
class _Window:
  """Sums over the steps since the last log line."""
  steps: int = 0
  loss_sum: float = 0.0
  norm_sum: float = 0.0
  metrics: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
  start: float = dataclasses.field(default_factory=time.time)

  def add(self, steps, loss_sum, norm_sum, metrics):
    self.steps += steps
    self.loss_sum += loss_sum
    self.norm_sum += norm_sum
    for name, value in metrics.items():
      self.metrics[name] = self.metrics.get(name, 0.0) + value


def _next_multiple(step, every):
  return (step // every + 1) * every

