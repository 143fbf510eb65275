"""Tests of the actions the Controller calls between loops."""

import json
import os
import types

from absl import logging
import tensorflow as tf

from mixvocab_tf.core import actions
from mixvocab_tf.core import task_trainer


class _RunCheckpoint:
  """Records what the guard sets aside."""

  def __init__(self):
    self.set_aside = []
    self.latest_checkpoint = "/run/ckpt-2"

  def set_aside_from(self, step, subdir):
    self.set_aside.append((step, subdir))
    return [f"/run/ckpt-{step}"]


def _chunk(start, loss, bad_step=-1):
  return task_trainer.Chunk(start_step=start, steps=2, loss_sum=2 * loss,
                            norm_sum=0.0, metrics={}, bad_step=bad_step,
                            last_loss=loss)


class DivergenceGuardTest(tf.test.TestCase):

  def test_a_spike_stops_and_sets_aside_from_the_loops_first_step(self):
    trainer = types.SimpleNamespace(last_chunk=_chunk(0, 2.0))
    run_checkpoint = _RunCheckpoint()
    guard = actions.DivergenceGuard(trainer, run_checkpoint, factor=10.0)
    guard({})
    trainer.last_chunk = _chunk(2, 19.0)  # Below 10 x max(1, 2).
    guard({})
    trainer.last_chunk = _chunk(4, 200.0)
    with self.assertRaisesRegex(actions.NonFiniteLossError,
                                r"Loss spike after step 4.*ckpt-4 did not "
                                r"pass.*latest good checkpoint is "
                                r"/run/ckpt-2"):
      guard({})
    self.assertEqual(run_checkpoint.set_aside, [(4, actions.DIVERGED_DIR)])

  def test_a_nonfinite_step_is_named(self):
    trainer = types.SimpleNamespace(
        last_chunk=_chunk(6, float("nan"), bad_step=7))
    guard = actions.DivergenceGuard(trainer, _RunCheckpoint(), factor=None)
    with self.assertRaisesRegex(actions.NonFiniteLossError, "at step 7"):
      guard({})


class EarlyStoppingTest(tf.test.TestCase):

  def test_counts_evaluations_from_the_best_step(self):
    best = types.SimpleNamespace(best_step=None, best_metric="f1",
                                 best_value=0.5, best_dir="/run/best")
    stopping = actions.EarlyStopping(best, patience=2, evaluate_every=10)
    self.assertFalse(stopping.should_stop(100))
    best.best_step = 40
    self.assertFalse(stopping.should_stop(50))
    self.assertTrue(stopping.should_stop(60))
    model_dir = self.get_temp_dir()
    stopping.write_record(model_dir, 60, train_steps=100)
    with open(os.path.join(model_dir, actions.EARLY_STOPPING_JSON)) as f:
      record = json.load(f)
    self.assertEqual((record["step"], record["best_step"]), (60, 40))
    self.assertIn("not improved for 2 evaluations", record["reason"])


  def test_a_best_at_the_ceiling_stops_the_run(self):
    best = types.SimpleNamespace(best_step=None, best_metric="accuracy",
                                 best_value=None, best_dir="/run/best",
                                 best_mode="max")
    stopping = actions.EarlyStopping(best, patience=None, evaluate_every=10,
                                     ceiling=1.0)
    self.assertFalse(stopping.should_stop(10))
    best.best_step, best.best_value = 10, 0.99
    self.assertFalse(stopping.should_stop(1000))  # No patience: never.
    best.best_step, best.best_value = 20, 1.0
    self.assertTrue(stopping.should_stop(20))
    self.assertIn("reached its bound 1", stopping.reason(20))
    best.best_mode, best.best_value = "min", 0.5
    stopping.ceiling = 0.0
    self.assertFalse(stopping.should_stop(20))


class ProgressAndStopTest(tf.test.TestCase):

  def test_progress_line_keeps_a_record_per_summary(self):
    step = tf.Variable(0, dtype=tf.int64)
    progress = actions.ProgressLine(step, train_steps=10)
    step.assign(2)
    progress({})
    step.assign(4)
    # The line is absl's INFO: pinned here, as a test run earlier in the same
    # process (e.g. on a pytest-xdist worker) may have left absl at WARNING.
    self.addCleanup(logging.set_verbosity, logging.get_verbosity())
    logging.set_verbosity(logging.INFO)
    with self.assertLogs(level="INFO") as logs:
      progress({"loss": 1.5, "learning_rate": 0.1})
    self.assertRegex("\n".join(logs.output), r"step 4/10 \(40%\).*ETA")
    self.assertEqual([r.step for r in progress.records], [4])

  def test_stop_if_requested(self):
    requested = [False]
    stop = actions.StopIfRequested(lambda: requested[0])
    stop({})
    requested[0] = True
    with self.assertRaises(actions.StopRequested):
      stop({})


if __name__ == "__main__":
  tf.test.main()
