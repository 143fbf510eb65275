"""What the trainer keeps of its loop from before orbit.Controller drove it.

A run directory written by the trainer before orbit resumes after it.

`testdata/run_before_orbit` was written by the package's own training loop
(commit 54f7938, before `orbit.Controller` drove it): the toy task of
`trainer_test`, `train(until_step=4)` of an 8-step run with evaluations and a
best checkpoint. The checkpoint items (model, optimizer, dropout generators,
input position, metadata) keep their names, so it resumes as it would have.
"""

import pytest
import contextlib
import io
import json
import os
import shutil

import tensorflow as tf

from mixvocab_tf.core import evaluation
from mixvocab_tf.core import trainer_test

_RUN_BEFORE_ORBIT = os.path.join(os.path.dirname(__file__), "testdata",
                                 "run_before_orbit")


def _trainer(model_dir):
  return trainer_test._trainer(  # pylint: disable=protected-access
      model_dir, train_steps=8, evaluate_every=2, eval_max_batches=2,
      best_metric="mse", checkpoint_every=2, keep_checkpoints=2)


class RunDirectoryBeforeOrbitTest(tf.test.TestCase):

  def test_resumes_and_ends_with_the_weights_of_an_uninterrupted_run(self):
    model_dir = os.path.join(self.get_temp_dir(), "run")
    shutil.copytree(_RUN_BEFORE_ORBIT, model_dir)
    resumed = _trainer(model_dir)
    records = resumed.train()
    self.assertEqual([r.step for r in records], [6, 8])
    self.assertEqual(os.path.basename(tf.train.latest_checkpoint(model_dir)),
                     "ckpt-8")
    # The best of the earlier part competes with the new evaluations.
    self.assertEqual([r["step"] for r in resumed.eval_results], [6, 8])
    with open(os.path.join(model_dir, evaluation.EVAL_DIR,
                           evaluation.HISTORY_JSONL)) as f:
      self.assertEqual([json.loads(line)["step"] for line in f], [2, 4, 6, 8])
    whole = _trainer(os.path.join(self.get_temp_dir(), "whole"))
    whole.train()
    # Close, not bit-equal: the run's first 4 steps were computed on the
    # machine that made the test data, and another CPU's kernels round
    # differently (3e-8 apart on an AMD EPYC without AVX-512). Bit-exact
    # resume on one machine is tests/test_train_resume.py's.
    for expected, actual in zip(trainer_test._weights(whole),  # pylint: disable=protected-access
                                trainer_test._weights(resumed)):  # pylint: disable=protected-access
      self.assertAllClose(expected, actual, rtol=1e-5, atol=1e-6)


class StopRequestTest(tf.test.TestCase):

  @pytest.mark.large
  def test_a_stop_at_an_evaluation_step_still_evaluates_there(self):
    model_dir = self.get_temp_dir()

    def trainer():
      return trainer_test._trainer(  # pylint: disable=protected-access
          model_dir, train_steps=4, evaluate_every=2, eval_max_batches=2,
          best_metric="mse", checkpoint_every=2, log_every=2,
          steps_per_loop=2)

    stopped = trainer()
    stopped.request_stop()  # As the SIGTERM handler of train.py does.
    stopped.train()
    self.assertEqual(os.path.basename(tf.train.latest_checkpoint(model_dir)),
                     "ckpt-2")
    self.assertEqual([r["step"] for r in stopped.eval_results], [2])
    resumed = trainer()
    resumed.train()
    self.assertEqual([r["step"] for r in resumed.eval_results], [4])
    with open(os.path.join(model_dir, evaluation.EVAL_DIR,
                           evaluation.HISTORY_JSONL)) as f:
      self.assertEqual([json.loads(line)["step"] for line in f], [2, 4])


if __name__ == "__main__":
  tf.test.main()


class QuietConsoleTest(tf.test.TestCase):

  def test_orbit_summaries_are_not_printed(self):
    # orbit.Controller prints "train | step: ..." and "eval | step: ..." to
    # stdout after every loop; the package's console shows its own progress
    # line instead.
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
      _trainer(os.path.join(self.get_temp_dir(), "quiet")).train()
    self.assertNotIn("| step:", printed.getvalue())
