"""What the training loop does between `orbit.Controller` loops, as actions.

`orbit.Controller` calls each train action with the output of every loop and
each eval action with every evaluation's output (Model Garden's
`official/core/actions.py` holds its own). The package's promises that orbit
does not keep (docs/RELIABILITY.md):

* `DivergenceGuard`: a NaN or Inf, or a loss spike, stops the run and sets
  aside the checkpoints that were not followed by a good loss (Model
  Garden's `RecoveryAction` rolls back instead, which would retrain through
  the same divergence);
* `ProgressLine`: a console line with an ETA at each summary;
* `StopIfRequested`: SIGTERM or Ctrl-C ends the run at the next loop's end,
  after which the trainer saves (`SaveCheckpointIfPreempted` reads a TPU
  cluster's preemption notice, not a signal);
* `EarlyStopping`: counted from the best checkpoint's step, so a resumed run
  stops where an uninterrupted one would.
"""

import dataclasses
import datetime
import json
import os
import time
from typing import Callable, Dict, List, Optional

from absl import logging
import tensorflow as tf

from mixvocab_tf.core import metrics_io

#: Where checkpoints whose weights gave a NaN or a loss spike are moved.
DIVERGED_DIR = "diverged"
#: Written when early stopping ends a run: its step, the best step and why.
EARLY_STOPPING_JSON = "early_stopping.json"


class NonFiniteLossError(RuntimeError):
  """The loss or the gradient norm became NaN or Inf."""


class StopRequested(Exception):
  """Raised by `StopIfRequested` to end `orbit.Controller.train` early."""


@dataclasses.dataclass
class LogRecord:
  """What the trainer logged at one step (also returned by `train`)."""
  step: int
  scalars: Dict[str, float]


def format_duration(seconds: float) -> str:
  return str(datetime.timedelta(seconds=int(max(seconds, 0))))


class DivergenceGuard:
  """Stops the run on a non-finite step or a loss spike.

  The reference of the spike check is the running mean of the loops' mean
  losses seen so far in this process; a loop whose mean loss exceeds
  `factor * max(1, reference)` stops the run. The floor of 1 keeps
  fine-tuning losses near 0 from tripping the check on an ordinary hard
  batch.

  Every loop before the bad one passed the checks, so every checkpoint
  before its first step was followed by a good loss; one saved at that step
  itself gave the bad loss and is moved to `diverged/`.

  Args:
    task_trainer: the `task_trainer.TaskTrainer` (its `last_chunk`).
    run_checkpoint: the run's `checkpointing.RunCheckpoint`.
    factor: the spike factor (None: only NaN and Inf stop the run).
    is_chief: only the chief moves checkpoints.
  """

  def __init__(self, task_trainer, run_checkpoint, factor: Optional[float],
               is_chief: bool = True):
    self.task_trainer = task_trainer
    self.run_checkpoint = run_checkpoint
    self.factor = factor
    self.is_chief = is_chief
    self.total, self.count = 0.0, 0

  def __call__(self, unused_output):
    chunk = self.task_trainer.last_chunk
    step = chunk.start_step
    if chunk.bad_step >= 0:
      self._stop(step, f"Non-finite loss or gradient at step "
                 f"{chunk.bad_step} (loss {chunk.last_loss})")
    loss = chunk.loss_sum / chunk.steps
    if self.factor and self.count:
      reference = self.total / self.count
      limit = self.factor * max(1.0, reference)
      if loss > limit:
        self._stop(step, f"Loss spike after step {step}: {loss:.4g}, above "
                   f"{self.factor} x max(1, running average "
                   f"{reference:.4g}) = {limit:.4g}")
    self.total += loss
    self.count += 1

  def _stop(self, step, what):
    moved = (self.run_checkpoint.set_aside_from(step, DIVERGED_DIR)
             if self.is_chief else [])
    good = self.run_checkpoint.latest_checkpoint or "none"
    raise NonFiniteLossError(
        f"{what}. Stopped without saving. A checkpoint counts as good when "
        "the loss measured right after it was finite and below "
        f"{self.factor} x max(1, the running average loss)"
        + (f"; {', '.join(moved)} did not pass and was moved to diverged/"
           if moved else "") +
        f". The latest good checkpoint is {good}; rerunning resumes from it. "
        "Lower the learning rate, check the inputs, or use float32.")


class ProgressLine:
  """Logs a line with the loop's means and an ETA; keeps `LogRecord`s.

  The ETA is timed from the end of the first loop, which traces the step.

  Args:
    global_step: the run's step variable.
    train_steps: the run's last step.
  """

  def __init__(self, global_step: tf.Variable, train_steps: int):
    self.global_step = global_step
    self.train_steps = train_steps
    self.records: List[LogRecord] = []
    self._timed_from = None

  def __call__(self, output):
    step, now = int(self.global_step.numpy()), time.time()
    if self._timed_from is None:
      self._timed_from = (step, now)
    if not output:
      return
    scalars = {k: float(v) for k, v in output.items()}
    timed_steps = step - self._timed_from[0]
    eta = ((self.train_steps - step) * (now - self._timed_from[1]) /
           timed_steps if timed_steps > 0 else float("nan"))
    shown = " | ".join(
        f"{k} {v:.4g}" for k, v in scalars.items()
        if k not in ("learning_rate", "examples_per_second"))
    logging.info(
        "step %d/%d (%.0f%%) | %s | lr %.3g | %.1f ex/s | ETA %s", step,
        self.train_steps, 100.0 * step / self.train_steps, shown,
        scalars["learning_rate"], scalars.get("examples_per_second", 0.0),
        format_duration(eta) if eta == eta else "?")
    self.records.append(LogRecord(step=step, scalars=scalars))


class StopIfRequested:
  """Raises `StopRequested` after a loop once `requested()` is true.

  Args:
    requested: whether a stop was asked for (e.g. by a signal handler).
  """

  def __init__(self, requested: Callable[[], bool]):
    self.requested = requested

  def __call__(self, unused_output):
    if self.requested():
      raise StopRequested()


class EarlyStopping:
  """Stops after `patience` evaluations without a new best, or once the best
  reaches `ceiling`.

  Counted from the best checkpoint's step (`best.best_step`, read back from
  `best/metrics.json` by a resumed run), so a resumed run stops where an
  uninterrupted one would and a stopped run stays stopped when rerun.

  Args:
    best: the run's `evaluation.BestCheckpoint`.
    patience: evaluations without a new best that stop the run (None: no
      limit).
    evaluate_every: steps between evaluations.
    ceiling: the best metric's highest possible value (its lowest for
      `best.best_mode == 'min'`), e.g. 1.0 for an accuracy or an F1. A best
      checkpoint that reaches it is final: only a strictly better score is a
      new best. None: not used.
  """

  def __init__(self, best, patience: Optional[int], evaluate_every: int,
               ceiling: Optional[float] = None):
    self.best = best
    self.patience = patience
    self.evaluate_every = evaluate_every
    self.ceiling = ceiling

  def at_ceiling(self) -> bool:
    value = self.best.best_value
    if self.ceiling is None or value is None:
      return False
    if getattr(self.best, "best_mode", "max") == "min":
      return value <= self.ceiling
    return value >= self.ceiling

  def should_stop(self, step: int) -> bool:
    if self.best.best_step is None:
      return False
    if self.at_ceiling():
      return True
    if self.patience is None:
      return False
    since_best = (step - self.best.best_step) // self.evaluate_every
    return since_best >= self.patience

  def reason(self, step: int) -> str:
    if self.at_ceiling():
      return (f"the best {self.best.best_metric}, {self.best.best_value:.4g} "
              f"at step {self.best.best_step}, reached its bound "
              f"{self.ceiling:g}: no later checkpoint can replace it (kept "
              f"in {self.best.best_dir})")
    return (f"{self.best.best_metric} has not improved for "
            f"{(step - self.best.best_step) // self.evaluate_every} "
            f"evaluations (patience {self.patience}); the best, "
            f"{self.best.best_value:.4g}, is step {self.best.best_step}'s, "
            f"kept in {self.best.best_dir}")

  def write_record(self, model_dir: str, step: int, train_steps: int):
    """Writes `early_stopping.json`: the step, the best step and why."""
    record = {"step": step, "best_step": self.best.best_step,
              "best_metric": self.best.best_metric,
              "best_value": self.best.best_value,
              "patience": self.patience, "ceiling": self.ceiling,
              "evaluate_every": self.evaluate_every,
              "train_steps": train_steps,
              "reason": self.reason(step)}
    # Atomic: a run killed mid-write must not leave a part that the next
    # resume cannot read.
    metrics_io.write_atomically(os.path.join(model_dir, EARLY_STOPPING_JSON),
                                json.dumps(record, indent=2))
