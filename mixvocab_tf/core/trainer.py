"""The training run shared by every task: `orbit.Controller` and its parts.

One `Trainer` runs any registered `Task` (stage I and II of Zhao et al., EACL
2021, Section 3; the NoKD and dual-training baselines; later fine-tuning) the
way Model Garden's `official.core.train_lib` does: an `orbit.Controller`
drives

* a `task_trainer.TaskTrainer` (`orbit.StandardTrainer`): the step, its
  gradient all-reduce and clipping, summaries every `log_every` steps;
* an `evaluation.Evaluator` (`orbit.StandardEvaluator`) every
  `evaluate_every` steps, whose action keeps the best checkpoint;
* checkpoints through `checkpointing.ControllerCheckpointManager`;
* train actions (`actions`): the divergence guard, the progress line with an
  ETA, the stop on SIGTERM; early stopping after each evaluation.

What stays here is what orbit leaves to its user, each a promise of
docs/RELIABILITY.md:

* the model and the optimizer are created in the strategy's scope; each input
  pipeline gets its `tf.distribute.InputContext`; the input iterator is made
  before the first step so that checkpoints hold its position;
* checkpoints (`RunCheckpoint`) hold model, optimizer and step, the dropout
  generators and the input iterator, so that a run killed at any moment and
  restarted ends with the weights of an uninterrupted run;
* one process per run directory (`run_lock`), the vocabulary and task checks
  on resume, `operative_config.gin` beside the checkpoints, `dry_run`;
* the segments between evaluations, so that early stopping and a stop
  request end `Controller.train` (it has no way to be told to stop).

Dropout randomness: tf_keras dropout normally uses stateful TF1 random ops
whose state lives in the kernel and restarts with the process. The trainer
builds the model with tf_keras's `tf.random.Generator`-backed random ops
(`enable_tf_random_generator`, switched on only while the model is built) and
checkpoints those generators. Their dropout draws 16 random bits per element
rather than a float32 (`core.dropout`: half the random-number work).
"""

import contextlib
import os
import re
import time
from typing import Any, Dict, List, Optional, Union

from absl import logging
import gin
import numpy as np
import orbit
from orbit import controller as orbit_controller
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import actions
from mixvocab_tf.core import base_task
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import distribute
from mixvocab_tf.core import dropout as dropout_lib
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import gelu as gelu_lib
from mixvocab_tf.core import lazy_adam
from mixvocab_tf.core import learning_rate_multipliers as lr_multipliers
from mixvocab_tf.core import op_threads
from mixvocab_tf.core import optimization as optimization_lib
from mixvocab_tf.core import precision as precision_lib
from mixvocab_tf.core import task_trainer as task_trainer_lib

PRECISIONS = precision_lib.PRECISIONS
OPERATIVE_CONFIG = "operative_config.gin"
# Where the trainer's callers have always found these names.
DIVERGED_DIR = actions.DIVERGED_DIR
EARLY_STOPPING_JSON = actions.EARLY_STOPPING_JSON
NonFiniteLossError = actions.NonFiniteLossError
LogRecord = actions.LogRecord


# Bit-identical resume (orbit checkpoints what it is given; Model Garden gives
# neither of these): the dropout generators and the input iterator's position.


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


# --dry_run and the start of a run: what is trained (orbit builds nothing).


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
    checkpoint_minutes: minutes of training after which a checkpoint is also
      saved at the next loop boundary, off the `checkpoint_every` cadence, so
      a killed run loses at most about this much work however long its
      cadence is; None: only `checkpoint_every` counts. The extra
      checkpoints count against `keep_checkpoints`, so runs whose kept
      checkpoints make a curve (pretraining) leave it None; the fine-tuning
      configs, which save once an epoch, set it to 10.
    keep_checkpoints: checkpoints kept.
    log_every: steps between console lines and TensorBoard scalars.
    precision: "float32", "mixed_bfloat16", "mixed_float16", "auto"
      (bfloat16 on TPU, else float32) or "mixed_bfloat16_if_native"
      (bfloat16 on TPU and on CPUs with bfloat16 instructions and oneDNN on,
      else float32: `core/precision.py`).
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
    best_metric_ceiling: the best metric's highest possible value, e.g. 1.0
      for an accuracy or an F1 (its lowest for a metric minimised): once the
      best checkpoint reaches it the run stops, as no later checkpoint can
      replace it (only a strictly better score is a new best), so the best
      checkpoint is the same as after the whole budget. None: not used. Needs
      `evaluate_every`.
    lazy_sparse_updates: apply sparse gradients (a word table's) to only the
      rows the batch used (`lazy_adam.py`), for the "adam" and "adamw"
      optimizers; the own-data job's teacher sets it (its 30,522-row table
      otherwise costs a dense Adam update at every step).
    learning_rate_multipliers: regular expression -> multiplier of the
      learning rate of the variables whose names it matches (the first
      pattern that matches wins), for the "adam" and "adamw" optimizers
      (`learning_rate_multipliers.py`); None: one rate for all. A pattern
      that matches no trainable variable is an error before the first step.
    frozen_variables: a regular expression; the task's trainable variables
      whose names it matches are not trained (no gradient, no optimizer
      slots). Backpropagation stops at the lowest layer still trained, so
      freezing an encoder's embeddings and lower layers makes a step
      cheaper. None: train them all. A pattern that matches none or all of
      them is an error before the first step.
    concurrent_ops: run up to this many TensorFlow operations at once, each
      on the cores divided by it (`op_threads.py`), instead of TensorFlow's
      default (every operation on all cores); the teachers' forward passes
      over a transfer set then run that many batches side by side. For
      small models, whose operations are too small to split across cores:
      the 6 x 96 student's distillation step ran 1.3x faster with 2 on 2
      cores, with the same weights bit for bit. None: TensorFlow's default.
  """

  def __init__(self,
               model_dir: str,
               strategy: Optional[tf.distribute.Strategy] = None,
               task: Union[str, type, base_task.Task] = gin.REQUIRED,
               train_steps: int = gin.REQUIRED,
               optimization: Optional[Any] = None,
               steps_per_loop: int = 1,
               checkpoint_every: int = 1000,
               checkpoint_minutes: Optional[float] = None,
               keep_checkpoints: int = 3,
               log_every: int = 100,
               precision: str = "auto",
               seed: int = 0,
               deterministic: bool = False,
               evaluate_every: Optional[int] = None,
               eval_max_batches: Optional[int] = None,
               best_metric: Optional[str] = None,
               early_stopping_patience: Optional[int] = None,
               loss_spike_factor: Optional[float] = 10.0,
               best_metric_ceiling: Optional[float] = None,
               lazy_sparse_updates: bool = False,
               learning_rate_multipliers: Optional[Dict[str, float]] = None,
               frozen_variables: Optional[str] = None,
               concurrent_ops: Optional[int] = None):
    # TensorFlow fixes its thread pools at its first operation. Gin may have
    # run one while it built these arguments, so the binary sets them before
    # (cli/train.py) and this call then changes nothing; it serves a Trainer
    # built in Python before any operation (else it warns).
    op_threads.set_concurrent_ops(concurrent_ops)
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
    if checkpoint_minutes is not None and not (
        isinstance(checkpoint_minutes, (int, float)) and checkpoint_minutes > 0):
      raise ValueError("checkpoint_minutes must be a positive number or None; "
                       f"received {checkpoint_minutes!r}.")
    if loss_spike_factor is not None and not loss_spike_factor > 1:
      raise ValueError("loss_spike_factor must be above 1 (or None); "
                       f"received {loss_spike_factor!r}.")
    self.loss_spike_factor = loss_spike_factor
    self.evaluate_every = evaluate_every
    self.early_stopping_patience = early_stopping_patience
    self.best_metric_ceiling = (None if best_metric_ceiling is None else
                                float(best_metric_ceiling))
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
    self.checkpoint_minutes = checkpoint_minutes
    self.keep_checkpoints = keep_checkpoints
    self.log_every = log_every
    self.seed = seed
    self.deterministic = deterministic
    precision, why = precision_lib.resolve(
        precision, is_tpu=distribute.is_tpu(self.strategy))
    precision_lib.log_choice(precision, why)
    self.precision = precision
    self._precision_why = why
    self.task = self._make_task(task)
    if optimization is None:
      optimization = optimization_lib.optimization_config(
          train_steps=train_steps)
    self.optimization = optimization
    self.clip_norm = optimization_lib.clip_norm_of(optimization)
    optimizer_type = optimization.optimizer.type
    if lazy_sparse_updates and optimizer_type not in ("adam", "adamw"):
      raise ValueError("lazy_sparse_updates needs the 'adam' or 'adamw' "
                       f"optimizer; the run's is {optimizer_type!r}. Bind "
                       "Trainer.lazy_sparse_updates = False to train with "
                       "it.")
    self.lazy_sparse_updates = bool(lazy_sparse_updates)
    if learning_rate_multipliers and optimizer_type not in ("adam", "adamw"):
      raise ValueError("learning_rate_multipliers needs the 'adam' or "
                       f"'adamw' optimizer; the run's is {optimizer_type!r}.")
    self.learning_rate_multipliers = dict(learning_rate_multipliers or {})
    if frozen_variables is not None:
      try:
        re.compile(frozen_variables)
      except (re.error, TypeError) as e:
        raise ValueError(
            "Trainer.frozen_variables must be a regular expression; "
            f"received {frozen_variables!r} ({e}).") from None
    self.frozen_variables = frozen_variables or None
    self.worker_index, self.num_workers = distribute.worker_info(self.strategy)
    self._stop_requested = False
    #: The step a stop request (SIGTERM, Ctrl-C) ended the run at, before
    #: its last step; None when the run finished or stopped early.
    self.interrupted_at = None
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
  # Building: what Model Garden's Task and Trainer build, plus the checkpoint
  # items of bit-identical resume and the per-replica input a checkpoint can
  # hold.

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
      gelu_lib.use_closed_form_gelu_gradient(self.model)
      self.optimizer, self.learning_rate = optimization_lib.build_optimizer(
          self.optimization)
      if self.lazy_sparse_updates:
        lazy_adam.use_lazy_sparse_updates(self.optimizer)
      if self.learning_rate_multipliers:
        lr_multipliers.use_learning_rate_multipliers(
            self.optimizer, self.learning_rate_multipliers)
      if self.precision == "mixed_float16":
        self.optimizer = tf_keras.mixed_precision.LossScaleOptimizer(
            self.optimizer)
    self.trainable_variables = self._variables_to_train(self.model)
    if not self.trainable_variables:
      raise ValueError(f"Task {self.task.task_name} has no trainable "
                       "variables.")
    for pattern in self.learning_rate_multipliers:
      if not any(re.search(pattern, v.name) for v in self.trainable_variables):
        raise ValueError(
            f"Trainer.learning_rate_multipliers: {pattern!r} matches none of "
            f"the {len(self.trainable_variables)} trainable variables of "
            f"{self.task.task_name} (e.g. "
            f"{[v.name for v in self.trainable_variables[-3:]]}).")
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
    self.task_trainer = task_trainer_lib.TaskTrainer(
        self.task, self.model, self.optimizer, self.learning_rate,
        self.trainable_variables, self.iterator, self.strategy,
        self.precision, self.clip_norm, self.log_every)
    self.evaluator = evaluation.Evaluator(
        self.task, self.model, self.model_dir, best_metric=self.best_metric,
        max_batches=self.eval_max_batches, is_chief=self.is_chief,
        global_step=self.optimizer.iterations) if self.evaluate_every else None
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
  # The run: the run lock, the operative config, the checks before the first
  # step, and the Controller with the package's actions.

  def _write_operative_config(self):
    if not self.is_chief:
      return
    tf.io.gfile.makedirs(self.model_dir)
    path = os.path.join(self.model_dir, OPERATIVE_CONFIG)
    with tf.io.gfile.GFile(path + ".tmp", "w") as f:
      f.write(precision_lib.config_comment(self.precision,
                                           self._precision_why))
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

  def _steps_per_loop(self, end_step):
    """orbit's `steps_per_loop`: loops end on every cadence's multiples.

    So summaries, checkpoints and evaluations fall on the same steps in a
    resumed run as in an uninterrupted one.
    """
    def steps(step):
      boundary = min(end_step, _next_multiple(step, self.log_every),
                     _next_multiple(step, self.checkpoint_every),
                     _next_multiple(step, self.evaluate_every or end_step),
                     step + self.steps_per_loop)
      return max(boundary - step, 1)
    return steps

  def _make_controller(self, end_step):
    """The Controller of this session; restores the latest checkpoint."""
    self.checkpoint_manager = checkpointing.ControllerCheckpointManager(
        self.run_checkpoint, self.optimizer.iterations, self.checkpoint_every,
        # Several workers save together (a save is collective), so only the
        # step cadence, which every worker reaches at the same step, counts.
        every_seconds=(None if self.checkpoint_minutes is None or
                       self.num_workers > 1 else
                       60.0 * self.checkpoint_minutes))
    self.task_trainer.end_step = end_step
    self.task_trainer.reset_window()
    self.progress = actions.ProgressLine(self.optimizer.iterations,
                                         self.train_steps)
    train_actions = [
        actions.DivergenceGuard(self.task_trainer, self.run_checkpoint,
                                self.loss_spike_factor, self.is_chief),
        self.progress,
        actions.StopIfRequested(lambda: self._stop_requested),
    ]
    chief_dir = lambda name: (os.path.join(self.model_dir, name)  # pylint: disable=g-long-lambda
                              if self.is_chief else None)
    return orbit.Controller(
        global_step=self.optimizer.iterations,
        trainer=self.task_trainer,
        evaluator=self.evaluator,
        strategy=self.strategy,
        train_actions=train_actions,
        eval_actions=[self.evaluator.best] if self.evaluator else None,
        steps_per_loop=self._steps_per_loop(end_step),
        checkpoint_manager=self.checkpoint_manager,
        summary_dir=chief_dir("train"),
        eval_summary_dir=chief_dir(evaluation.EVAL_DIR))

  def _train(self, until_step):
    if not checkpointing.has_checkpoint(self.model_dir):
      # A fresh run: fail before the (slow) build if a file is missing.
      self._check_files()
    self.build()
    end_step = self.train_steps if until_step is None else min(
        until_step, self.train_steps)
    controller = self._make_controller(end_step)  # Restores.
    restored = self.checkpoint_manager.restored_step
    if restored is None:
      self._check_files()
      self.task.initialize(self.model)
    self._write_operative_config()
    step = self._step()
    if restored is not None and step != restored:
      raise ValueError(f"Checkpoint ckpt-{restored} holds optimizer step "
                       f"{step}; it was not written by this trainer.")
    early_stopping = actions.EarlyStopping(
        self.evaluator.best, self.early_stopping_patience,
        self.evaluate_every, ceiling=self.best_metric_ceiling) if (
            (self.early_stopping_patience or
             self.best_metric_ceiling is not None) and
            self.evaluator) else None
    if early_stopping and early_stopping.should_stop(step):
      logging.info("Stopped early already (%s); nothing to do.",
                   early_stopping.reason(step))
      return []
    if step >= end_step:
      logging.info("Step %d already reaches step %d; nothing to do.", step,
                   end_step)
      return []
    logging.info("Training %s from step %d to %d, global batch %d, %d "
                 "replica(s), %s.", self.task.task_name, step,
                 self.train_steps, self.task.global_batch_size,
                 self.strategy.num_replicas_in_sync, self.precision)
    start_step, start_time = step, time.time()
    with _orbit_summaries_logged_not_printed():
      return self._train_segments(controller, step, end_step, early_stopping,
                                  start_step, start_time)

  def _train_segments(self, controller, step, end_step, early_stopping,
                      start_step, start_time):
    """Trains from `step` to `end_step`, evaluating; the progress records."""
    try:
      # Controller.train_and_evaluate, in segments that early stopping can
      # end.
      while step < end_step:
        segment_end = min(end_step, _next_multiple(
            step, self.evaluate_every or end_step))
        controller.train(steps=segment_end,
                         checkpoint_at_completion=segment_end == end_step)
        step = self._step()
        if self.evaluator and self._evaluate(controller, step,
                                             early_stopping):
          break
    except actions.StopRequested:
      step = self._step()
      logging.warning("Stop requested at step %d.", step)
      controller.save_checkpoint()
      if step < end_step:
        self.interrupted_at = step
      if self.evaluator and (step % self.evaluate_every == 0 or
                             step == end_step):
        # The evaluation an uninterrupted run makes at this step, so the
        # best checkpoint and the early-stopping count stay the same.
        self._evaluate(controller, step, early_stopping)
    logging.info("Trained steps %d-%d in %s.", start_step, step,
                 actions.format_duration(time.time() - start_time))
    return self.progress.records

  def _evaluate(self, controller, step, early_stopping) -> bool:
    """Evaluates at `step`; whether early stopping ends the run there."""
    controller.evaluate(steps=self.evaluator.eval_steps)
    self.eval_results.append(dict(self.evaluator.last_results, step=step,
                                  is_best=self.evaluator.best.is_best))
    if not (early_stopping and early_stopping.should_stop(step)):
      return False
    logging.info("Early stopping at step %d: %s.", step,
                 early_stopping.reason(step))
    self.stopped_early_at = step
    controller.save_checkpoint()
    if self.is_chief:
      early_stopping.write_record(self.model_dir, step, self.train_steps)
    return True

  # ---------------------------------------------------------------------------
  # Dry run (--dry_run): orbit has none.

  def _variables_to_train(self, model) -> List[tf.Variable]:
    """The task's trainable variables, less `frozen_variables`' matches."""
    variables = list(self.task.trainable_variables(model))
    if not self.frozen_variables:
      return variables
    kept, frozen = [], []
    for v in variables:
      (frozen if re.search(self.frozen_variables, v.name) else kept).append(v)
    if not frozen or not kept:
      raise ValueError(
          f"Trainer.frozen_variables: {self.frozen_variables!r} matches "
          f"{'none' if kept else 'all'} of the {len(variables)} trainable "
          f"variables of {self.task.task_name} (e.g. "
          f"{[v.name for v in variables[:2] + variables[-2:]]}).")
    logging.info(
        "Trainer.frozen_variables %r: %d of %d trainable variables frozen "
        "(%s parameters), e.g. %s.", self.frozen_variables, len(frozen),
        len(variables), f"{sum(v.shape.num_elements() for v in frozen):,}",
        [v.name for v in frozen[:3]])
    return kept

  def dry_run(self) -> str:
    """Validates the config and builds the model; returns the report.

    Runs on the default strategy (no TPU is touched), builds no optimizer
    slots and reads no data. Files the run needs but this machine lacks are
    listed, not fatal.
    """
    tf_keras.utils.set_random_seed(self.seed)
    with _generator_backed_dropout():
      model = self.task.build_model()
    trainable = self._variables_to_train(model)
    lines = [f"Task: {self.task.describe()}", "Parameters:"]
    lines.append(parameter_summary(model, trainable))
    schedule = optimization_lib.build_optimizer(self.optimization)[1]
    marks = sorted({0, self.train_steps // 10, self.train_steps // 2,
                    self.train_steps - 1})
    lines.append(f"Precision: {self.precision}" + (
        f" ({self._precision_why})" if self._precision_why else ""))
    lines.append(
        f"Optimizer: {self.optimization.optimizer.type}"
        f"{' (lazy sparse updates)' if self.lazy_sparse_updates else ''}"
        + "".join(f", learning rate x{m:g} for /{p}/"
                  for p, m in self.learning_rate_multipliers.items()) +
        (f", variables matching /{self.frozen_variables}/ frozen"
         if self.frozen_variables else "") +
        ", "
        f"clip norm {self.clip_norm}, {self.train_steps} steps, learning "
        "rate " +
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


@contextlib.contextmanager
def _orbit_summaries_logged_not_printed():
  """orbit.Controller prints every loop's train and eval summary to stdout.

  Behaviour orbit lacks: a quiet console. orbit's `controller._log` logs a
  line and also prints it, which with `steps_per_loop = 1` (most CPU
  configs) is a line per step beside the package's own progress line. Within
  this context the summaries go to the log at debug level only.
  """
  printed = orbit_controller._log  # pylint: disable=protected-access
  orbit_controller._log = lambda message: logging.debug("%s", message)  # pylint: disable=protected-access
  try:
    yield
  finally:
    orbit_controller._log = printed  # pylint: disable=protected-access


def _next_multiple(step, every):
  return (step // every + 1) * every

