"""A training run whose model_dir is on TensorFlow's ram:// file system.

ram:// stands for the remote file systems (gs://) a TPU run writes to: the
lock, checkpoints, summaries, evaluation files and the operative config must
all go through `tf.io.gfile`, and the run must resume from there.
"""

import os
import uuid

import tensorflow as tf

from mixvocab_tf.core import evaluation
from mixvocab_tf.core import run_lock
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.core import trainer_test


class TrainerOnRamTest(tf.test.TestCase):

  def test_trains_and_resumes_in_a_ram_model_dir(self):
    model_dir = f"ram://{uuid.uuid4().hex}/run"

    def trainer():
      return trainer_test._trainer(  # pylint: disable=protected-access
          model_dir, train_steps=4, evaluate_every=2, eval_max_batches=2,
          best_metric="mse")

    trainer().train(until_step=2)
    self.assertEqual(tf.train.latest_checkpoint(model_dir),
                     os.path.join(model_dir, "ckpt-2"))
    # What a resumed run reads back from best/metrics.json.
    self.assertEqual(evaluation.Evaluator(
        trainer_test._ToyTask(), None, model_dir,  # pylint: disable=protected-access
        best_metric="mse").best_step, 2)
    resumed = trainer()
    self.assertEqual([r.step for r in resumed.train()], [4])
    self.assertEqual(tf.train.latest_checkpoint(model_dir),
                     os.path.join(model_dir, "ckpt-4"))
    best = f"ckpt-{resumed.evaluator.best_step}.index"
    for name in (trainer_lib.OPERATIVE_CONFIG, "checkpoint",
                 evaluation.METRICS_JSON,
                 os.path.join(evaluation.BEST_DIR, evaluation.METRICS_JSON),
                 os.path.join(evaluation.BEST_DIR, best)):
      self.assertTrue(tf.io.gfile.exists(os.path.join(model_dir, name)), name)
    with tf.io.gfile.GFile(os.path.join(model_dir, evaluation.EVAL_DIR,
                                        evaluation.HISTORY_JSONL)) as f:
      self.assertLen(f.read().splitlines(), 2)
    self.assertNotEmpty(tf.io.gfile.glob(
        os.path.join(model_dir, "train", "events.out.tfevents.*")))
    self.assertFalse(tf.io.gfile.exists(
        os.path.join(model_dir, run_lock.LOCK_FILE)))


if __name__ == "__main__":
  tf.test.main()
