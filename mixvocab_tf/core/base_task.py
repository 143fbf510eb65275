"""The Task interface that the trainer runs, and the registry of tasks by name.

A task says *what* is trained (model, inputs, loss, metrics, what goes into the
checkpoint, where initial weights come from); `mixvocab_tf.core.Trainer`
says *how* (strategy, optimizer, loop, checkpoints, summaries). The split is
the one of `official.core.base_task.Task`, with gin instead of dataclass
configs: a task class is registered under a short name (`stage1`, `stage2`,
...) and gin configures its constructor, so adding a task is one module with a
registered class plus one gin file:

```python
@base_task.register_task("my_task")
class MyTask(base_task.Task):
  def build_model(self): ...
  def build_inputs(self, input_context=None, training=True): ...
  def compute_loss(self, model, features, training): ...
```

and in the gin file `Trainer.task = "my_task"` and `MyTask.some_arg = ...`.

Losses are scaled to the *global* batch: each replica returns its share
(a sum over its examples divided by a global count, see `global_sum`), so the
sum over replicas is the objective of the whole batch, independent of the
number of replicas and of how many masked tokens each one holds.
"""

import abc
import re
from typing import Any, Dict, Mapping, Optional, Tuple

import gin
import tensorflow as tf
import tf_keras

_TASKS: Dict[str, type] = {}
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def register_task(name):
  """Class decorator: registers a `Task` subclass under `name` and with gin.

  Gin knows the class by its Python name (e.g. `Stage1Task.teacher_dir = ...`)
  and the trainer by the short name (`Trainer.task = "stage1"`).

  Args:
    name: lower_snake_case task name, unique.

  Returns:
    The decorator.
  """
  if not _NAME_RE.match(name):
    raise ValueError(f"Task names are lower_snake_case; received {name!r}.")

  def decorator(cls):
    if not (isinstance(cls, type) and issubclass(cls, Task)):
      raise TypeError(f"register_task({name!r}) expects a Task subclass; "
                      f"received {cls!r}.")
    if name in _TASKS and _TASKS[name] is not cls:
      raise ValueError(f"Task name {name!r} is already registered by "
                       f"{_TASKS[name].__module__}.{_TASKS[name].__name__}.")
    cls.task_name = name
    # Gin wraps the constructor; the class object keeps its identity so that
    # isinstance and subclassing keep working.
    configurable = gin.configurable(cls, module="mixvocab_tf.tasks")
    _TASKS[name] = configurable
    return configurable

  return decorator


#: Old task name -> current name, for run directories and exports written
#: before a task was renamed (they record the old name).
def registered_tasks():
  """Sorted names of the registered tasks (those imported so far)."""
  return sorted(_TASKS)


def get_task_class(name):
  """The task class registered as `name`; a clear error if there is none.

  Tasks register themselves when their module is imported; `import
  mixvocab_tf.tasks` (as `train.py` does) registers the built-in ones.
  """
  if name not in _TASKS:
    import difflib  # pylint: disable=g-import-not-at-top
    close = difflib.get_close_matches(str(name), list(_TASKS), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    if not _TASKS:
      hint += (" No task is registered yet: import mixvocab_tf.tasks (or the "
               "module of your own task) first.")
    raise ValueError(f"Unknown task {name!r}; the registered tasks are "
                     f"{sorted(_TASKS)}.{hint}")
  return _TASKS[name]


def global_sum(value):
  """Sum of `value` over all replicas, from inside a replica function.

  Under the default strategy this is the identity. Tasks divide their summed
  per-example losses by `global_sum(count)` so that the replicas' losses add up
  to the mean over the global batch.
  """
  context = tf.distribute.get_replica_context()
  if context is None:  # Cross-replica context: already global.
    return value
  return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def metric(total, count):
  """A metric value as the pair (sum, count); the trainer reports sum / count.

  Sums and counts are added over replicas and steps before the division, so a
  logged mean weighs every token or example equally.
  """
  return tf.stack([tf.cast(total, tf.float32), tf.cast(count, tf.float32)])


class Task(abc.ABC):
  """What to train: model, inputs, loss, metrics, checkpoint contents.

  The trainer calls, in this order: `build_model` (inside the strategy's
  scope), `build_inputs` (once per input pipeline, with its
  `tf.distribute.InputContext`), `initialize` (only when no checkpoint of this
  run exists: loads pretrained or earlier-stage weights), then
  `compute_loss` in every step, inside the replica function.

  Attributes:
    task_name: the registered name (set by `register_task`).
    global_batch_size: examples per step over all replicas.
  """

  task_name: str = "task"

  def __init__(self, global_batch_size: int = 32):
    if int(global_batch_size) <= 0:
      raise ValueError("global_batch_size must be a positive integer; "
                       f"received {global_batch_size!r}.")
    self.global_batch_size = int(global_batch_size)

  # ---------------------------------------------------------------------------
  # Model.

  @abc.abstractmethod
  def build_model(self) -> tf_keras.Model:
    """Builds the model (with its weights); called in `strategy.scope()`."""

  def initialize(self, model: tf_keras.Model) -> None:
    """Loads initial weights (pretrained teacher, earlier stage) into `model`.

    Called once, before the first step of a run that does not resume from a
    checkpoint of its own. Raise a clear error for a missing or mismatched
    init checkpoint.
    """
    del model

  def trainable_variables(self, model: tf_keras.Model):
    """The variables the optimizer updates (a frozen teacher stays out)."""
    return model.trainable_variables

  def checkpoint_items(self, model: tf_keras.Model) -> Dict[str, Any]:
    """Trackables saved in this task's checkpoints, by name.

    Later stages and fine-tuning read these names (e.g. `student_encoder`), so
    keep them stable. A frozen teacher is not listed: it is not the
    student's.
    """
    return {"model": model}

  def encoder_configs(self, model: tf_keras.Model) -> Dict[str, Dict[str, Any]]:
    """{name: config} of the encoders a later stage rebuilds from this run.

    The trainer writes them as `encoder_config.json` beside every checkpoint
    under the names of `checkpoint_items` (e.g.
    `student_encoder`), so that stage II or fine-tuning builds the encoder
    from its config instead of inferring sizes from variable shapes.
    Default: none.
    """
    del model
    return {}

  def vocab_fingerprints(self) -> Dict[str, str]:
    """{'teacher'|'student': sha256} of the vocabularies this task reads.

    The trainer records them in every checkpoint and refuses to resume with
    different ones.
    """
    return {}

  # ---------------------------------------------------------------------------
  # Inputs.

  @abc.abstractmethod
  def build_inputs(self,
                   input_context: Optional[tf.distribute.InputContext] = None,
                   training: bool = True) -> tf.data.Dataset:
    """The dataset of one input pipeline: per-replica batches of features.

    Args:
      input_context: the pipeline's `tf.distribute.InputContext` (None: one
        pipeline); use `get_per_replica_batch_size(global_batch_size)` and
        shard by `input_pipeline_id`.
      training: training data (repeats forever) or evaluation data (one pass).
    """

  def missing_files(self) -> Mapping[str, str]:
    """{what: problem} for every file this task needs that is not there.

    Inputs, vocabularies, the teacher and init checkpoints. Training stops on
    the first one with a clear error; the dry run lists them all instead of
    failing, because a TPU config may name buckets that this machine cannot
    read.
    """
    return {}

  # ---------------------------------------------------------------------------
  # Loss, training and evaluation.

  @abc.abstractmethod
  def compute_loss(self, model: tf_keras.Model, features: Mapping[str, Any],
                   training: bool) -> Tuple[tf.Tensor, Dict[str, tf.Tensor]]:
    """The loss of one replica's batch and its metrics; runs in a replica.

    Args:
      model: the model from `build_model`.
      features: one per-replica batch from `build_inputs`.
      training: whether dropout is on.

    Returns:
      (loss, metrics): `loss` is this replica's share of the global objective
      (float32 scalar; the replicas' losses add up to it, see `global_sum`);
      `metrics` maps names (e.g. "teacher_mlm/loss") to `metric(sum, count)`
      pairs summed over this replica's examples.
    """

  def validation_step(self, model, features) -> Dict[str, tf.Tensor]:
    """Evaluation outputs of one batch; default: the loss's metric pairs.

    Fine-tuning tasks whose metrics need all predictions (F1) return
    predictions here and override `aggregate_logs` / `reduce_aggregated_logs`.
    """
    _, metrics = self.compute_loss(model, features, training=False)
    return metrics

  def aggregate_logs(self, state, step_outputs):
    """Folds one batch's `validation_step` outputs (NumPy) into `state`."""
    state = dict(state or {})
    for name, value in step_outputs.items():
      state[name] = state.get(name, 0.0) + value
    return state

  def reduce_aggregated_logs(self, state) -> Dict[str, float]:
    """The evaluation metrics from the aggregated state."""
    return {name: float(value[0] / value[1]) if value[1] else float("nan")
            for name, value in (state or {}).items()}

  # ---------------------------------------------------------------------------
  # Reporting.

  def describe(self) -> str:
    """A line or two for the log and the dry run: what this task trains."""
    return f"{self.task_name}: global batch {self.global_batch_size}"
