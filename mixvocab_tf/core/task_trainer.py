"""A `Task`'s training step as an `orbit.StandardTrainer`.

`orbit.Controller` drives it (see `trainer.Trainer`): each call of `train(n)`
runs `n` steps in one compiled loop, and `train_loop_end` returns what the
Controller writes to TensorBoard. The step is the package's own because its
promises need it:

* each replica's loss is its share of the global-batch objective (see
  `base_task`), so the gradients are all-reduced here, their global norm is
  taken once (logged) and used to clip before the optimizer's update;
* the input is an iterator made before the first step (see
  `trainer.Trainer._make_input_iterator`) so that a checkpoint holds its
  position; orbit's `iter()` of an iterator is the iterator itself;
* the compiled loop stops at the first step whose loss or gradient norm is
  not finite (`bad_step`), which orbit's loops do not check, so the
  divergence guard (`actions.DivergenceGuard`) can name that step;
* outputs are summed over the steps since the last log line and returned as
  means every `log_every` steps (orbit writes every loop's output).
"""

import dataclasses
import time
from typing import Any, Dict, List, Optional

import numpy as np
import orbit
import tensorflow as tf


@dataclasses.dataclass
class Chunk:
  """What one call of the compiled loop returned (host values)."""
  start_step: int
  steps: int
  loss_sum: float
  norm_sum: float
  metrics: Dict[str, np.ndarray]
  #: The optimizer step whose loss or gradient was not finite, or -1.
  bad_step: int
  last_loss: float


@dataclasses.dataclass
class _Window:
  """Sums over the steps since the last log line."""
  steps: int = 0
  loss_sum: float = 0.0
  norm_sum: float = 0.0
  metrics: Dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
  start: float = dataclasses.field(default_factory=time.time)

  def add(self, chunk: Chunk):
    self.steps += chunk.steps
    self.loss_sum += chunk.loss_sum
    self.norm_sum += chunk.norm_sum
    for name, value in chunk.metrics.items():
      self.metrics[name] = self.metrics.get(name, 0.0) + value


class TaskTrainer(orbit.StandardTrainer):
  """Trains `task.compute_loss` of `model` with `optimizer`.

  Args:
    task: a `base_task.Task`.
    model: its model, built in `strategy`'s scope.
    optimizer: the optimizer (a LossScaleOptimizer under mixed_float16).
    learning_rate: the optimizer's schedule (logged).
    trainable_variables: the variables the task trains.
    iterator: the training input iterator (checkpointed by the caller).
    strategy: the distribution strategy.
    precision: the Keras precision policy's name.
    clip_norm: global-norm clipping (None: none).
    log_every: steps between returned summaries.
  """

  def __init__(self, task, model, optimizer, learning_rate,
               trainable_variables: List[tf.Variable], iterator,
               strategy: tf.distribute.Strategy, precision: str,
               clip_norm: Optional[float], log_every: int):
    super().__init__(train_dataset=iterator,
                     options=orbit.StandardTrainerOptions(
                         use_tf_function=True, use_tf_while_loop=True))
    self.task = task
    self.model = model
    self.optimizer = optimizer
    self.learning_rate = learning_rate
    self.variables_to_train = trainable_variables
    self.strategy = strategy
    self.precision = precision
    self.clip_norm = clip_norm
    self.log_every = log_every
    #: Where this session ends: its last step always returns summaries.
    self.end_step = None
    #: The latest `Chunk`, for the actions that check it.
    self.last_chunk: Optional[Chunk] = None
    self._window = _Window()
    self._start_step = None

  @property
  def global_step(self) -> tf.Variable:
    return self.optimizer.iterations

  def step_value(self) -> int:
    return int(self.optimizer.iterations.numpy())

  def reset_window(self):
    self._window = _Window()

  # ---------------------------------------------------------------------------
  # The step.

  def _replica_step(self, features):
    variables = list(self.variables_to_train)
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

  def train_step(self, iterator):
    """One step; returns (loss, gradient norm, metrics, finite)."""
    strategy = self.strategy
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

  def create_train_loop_fn(self):
    """orbit's tf.while_loop, with sums of the outputs and an early exit.

    autograph=False: the loop is written with tf.while_loop, and Keras then
    traces the layers' `call` as written instead of converting each one with
    autograph first, which is most of the tracing time of a BERT.
    """
    train_step = tf.function(self.train_step, autograph=False)

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

    def loop_fn(iterator, num_steps):
      # StandardTrainer.train ignores the loop's value: train_loop_end reads
      # it from here.
      self._outputs = (train_loop(iterator, num_steps), int(num_steps))

    return loop_fn

  # ---------------------------------------------------------------------------
  # Around the loop (eager).

  def train_loop_begin(self):
    self._start_step = self.step_value()

  def train_loop_end(self) -> Dict[str, Any]:
    """Keeps the chunk; every `log_every` steps, the window's means."""
    (loss_sum, norm_sum, metrics, bad_step, last_loss), steps = self._outputs
    self._outputs = None
    self.last_chunk = Chunk(
        start_step=self._start_step, steps=steps, loss_sum=float(loss_sum),
        norm_sum=float(norm_sum),
        metrics=tf.nest.map_structure(lambda t: t.numpy(), metrics),
        bad_step=int(bad_step), last_loss=float(last_loss))
    if self.last_chunk.bad_step >= 0:
      return {}  # The divergence guard stops the run; nothing to log.
    self._window.add(self.last_chunk)
    step = self.step_value()
    if step % self.log_every and step != self.end_step:
      return {}
    window, self._window = self._window, _Window()
    scalars = {"loss": window.loss_sum / max(window.steps, 1),
               "gradient_norm": window.norm_sum / max(window.steps, 1),
               "learning_rate": float(self.learning_rate(step - 1))}
    for name, (total, count) in sorted(window.metrics.items()):
      scalars[name] = float(total / count) if count else float("nan")
    elapsed = time.time() - window.start
    if window.steps and elapsed > 0:
      scalars["examples_per_second"] = (window.steps *
                                        self.task.global_batch_size / elapsed)
    return scalars
