"""Tests of the training step as an orbit.StandardTrainer."""

import numpy as np
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import base_task
from mixvocab_tf.core import task_trainer


class _Linear(base_task.Task):
  """y = x . w; NaN targets from example `nan_from` on."""

  task_name = "linear"

  def __init__(self, nan_from=None):
    super().__init__(global_batch_size=4)
    self.nan_from = nan_from

  def build_model(self):
    inputs = tf_keras.Input((2,))
    return tf_keras.Model(inputs, tf_keras.layers.Dense(1)(inputs))

  def build_inputs(self, input_context=None, training=True):
    x = np.arange(80, dtype=np.float32).reshape(40, 2) / 40.0
    y = x.sum(-1)
    if self.nan_from is not None:
      y[self.nan_from:] = np.nan
    return tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(4)

  def compute_loss(self, model, features, training):
    error = model(features["x"], training=training)[:, 0] - features["y"]
    total = tf.reduce_sum(tf.square(error))
    count = tf.cast(tf.shape(error)[0], tf.float32)
    return total / base_task.global_sum(count), {
        "mse": base_task.metric(total, count)}


def _task_trainer(task, log_every=4):
  model = task.build_model()
  schedule = tf_keras.optimizers.schedules.PolynomialDecay(0.01, 100)
  optimizer = tf_keras.optimizers.SGD(schedule)
  return task_trainer.TaskTrainer(
      task, model, optimizer, schedule, model.trainable_variables,
      iter(task.build_inputs()), tf.distribute.get_strategy(), "float32",
      clip_norm=1.0, log_every=log_every)


class TaskTrainerTest(tf.test.TestCase):

  def test_returns_the_window_means_every_log_every_steps(self):
    trainer = _task_trainer(_Linear())
    self.assertEqual(trainer.train(tf.constant(2)), {})
    self.assertEqual(trainer.last_chunk.steps, 2)
    output = trainer.train(tf.constant(2))
    self.assertEqual(int(trainer.global_step.numpy()), 4)
    for name in ("loss", "gradient_norm", "learning_rate", "mse",
                 "examples_per_second"):
      self.assertIn(name, output)
    # The objective is the mean over the batch: the metric equals it.
    self.assertAllClose(output["loss"], output["mse"], rtol=1e-5)

  def test_the_loop_stops_at_the_first_nonfinite_step(self):
    # Examples 8.. have NaN targets: step 3 is the first bad one.
    trainer = _task_trainer(_Linear(nan_from=8))
    self.assertEqual(trainer.train(tf.constant(6)), {})
    self.assertEqual(trainer.last_chunk.bad_step, 3)
    self.assertEqual(int(trainer.global_step.numpy()), 3)


if __name__ == "__main__":
  tf.test.main()
