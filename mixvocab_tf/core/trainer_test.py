"""Tests of the training loop on a toy regression task (fast: no BERT, no text)."""

import pytest
import glob
import json
import os
import socket
import subprocess

import numpy as np
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import base_task
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import optimization
from mixvocab_tf.core import precision as precision_lib
from mixvocab_tf.core import trainer as trainer_lib

_FINGERPRINT = "a" * 64


class _ToyTask(base_task.Task):
  """y = x . w with dropout in the model; NaN targets from `nan_from` on."""

  task_name = "toy"

  def __init__(self, global_batch_size=8, nan_from=None,
               fingerprint=_FINGERPRINT, shuffle=True):
    super().__init__(global_batch_size=global_batch_size)
    self.nan_from = nan_from
    self.fingerprint = fingerprint
    self.shuffle = shuffle

  def build_model(self):
    inputs = tf_keras.Input((4,))
    hidden = tf_keras.layers.Dense(16, activation="relu")(inputs)
    hidden = tf_keras.layers.Dropout(0.3)(hidden)
    return tf_keras.Model(inputs, tf_keras.layers.Dense(1)(hidden))

  def build_inputs(self, input_context=None, training=True):
    rng = np.random.RandomState(0)
    x = rng.randn(256, 4).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    if self.nan_from is not None:
      y[self.nan_from:] = np.nan
    dataset = tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).repeat()
    if self.shuffle:
      dataset = dataset.shuffle(64, seed=0)
    batch_size = (input_context.get_per_replica_batch_size(
        self.global_batch_size) if input_context else self.global_batch_size)
    return dataset.batch(batch_size, drop_remainder=True)

  def compute_loss(self, model, features, training):
    # Losses in float32 under mixed precision, as the real tasks do.
    predictions = tf.cast(model(features["x"], training=training)[:, 0],
                          tf.float32)
    squared = tf.reduce_sum(tf.square(predictions - features["y"]))
    count = tf.cast(tf.shape(predictions)[0], tf.float32)
    return (squared / base_task.global_sum(count),
            {"mse": base_task.metric(squared, count)})

  def vocab_fingerprints(self):
    return {"student": self.fingerprint}


@base_task.register_task("toy_regression")
class _RegisteredToy(_ToyTask):
  """The toy task, found by name as gin files name tasks."""


def _trainer(model_dir, task=None, train_steps=10, **kwargs):
  kwargs.setdefault("log_every", 2)
  kwargs.setdefault("checkpoint_every", 4)
  return trainer_lib.Trainer(
      model_dir=model_dir, task=task or _ToyTask(), train_steps=train_steps,
      optimization=optimization.optimization_config(
          train_steps=train_steps, learning_rate=0.05, warmup_fraction=0.2),
      **kwargs)


def _weights(trainer):
  return [v.numpy() for v in trainer.model.weights]


class TrainerTest(tf.test.TestCase):

  def test_trains_logs_and_checkpoints(self):
    model_dir = self.get_temp_dir()
    trainer = _trainer(model_dir)
    records = trainer.train()
    self.assertEqual([r.step for r in records], [2, 4, 6, 8, 10])
    for name in ("loss", "mse", "learning_rate", "gradient_norm",
                 "examples_per_second"):
      self.assertIn(name, records[-1].scalars)
    # The objective is the mean over the global batch: the metric equals it.
    self.assertAllClose(records[-1].scalars["loss"],
                        records[-1].scalars["mse"], rtol=1e-5)
    self.assertLess(records[-1].scalars["loss"], records[0].scalars["loss"])
    self.assertEqual(trainer.optimizer.iterations.numpy(), 10)
    self.assertEqual(os.path.basename(trainer.run_checkpoint.latest_checkpoint),
                     "ckpt-10")
    self.assertTrue(os.path.isfile(os.path.join(
        model_dir, trainer_lib.OPERATIVE_CONFIG)))
    self.assertNotEmpty(glob.glob(os.path.join(model_dir, "train",
                                               "events.out.tfevents.*")))
    self.assertNotEmpty(trainer.dropout_generators)
    metadata = checkpointing.read_metadata(
        trainer.run_checkpoint.latest_checkpoint)
    self.assertEqual(metadata["task"], "toy")
    self.assertEqual(metadata["student_vocab"], _FINGERPRINT)

  def test_checkpoint_minutes_save_between_the_step_cadence(self):
    timed = _trainer(os.path.join(self.get_temp_dir(), "timed"),
                     checkpoint_every=100, checkpoint_minutes=1e-9)
    timed.train()
    # Every loop (one step each) is past the minutes.
    self.assertEqual([os.path.basename(p) for p in
                      timed.run_checkpoint.manager.checkpoints],
                     ["ckpt-8", "ckpt-9", "ckpt-10"])
    untimed = _trainer(os.path.join(self.get_temp_dir(), "untimed"),
                       checkpoint_every=100, checkpoint_minutes=None)
    untimed.train()
    self.assertEqual([os.path.basename(p) for p in
                      untimed.run_checkpoint.manager.checkpoints],
                     ["ckpt-10"])
    with self.assertRaisesRegex(ValueError, "checkpoint_minutes must be"):
      _trainer(self.get_temp_dir(), checkpoint_minutes=0)

  @pytest.mark.large
  def test_resumed_run_ends_with_the_weights_of_an_uninterrupted_one(self):
    whole = _trainer(os.path.join(self.get_temp_dir(), "whole"))
    whole.train()
    interrupted_dir = os.path.join(self.get_temp_dir(), "interrupted")
    # Stops at 6 and saves; steps 5-6 are after the checkpoint at 4, as for a
    # run killed between checkpoints, whose restart redoes them.
    _trainer(interrupted_dir).train(until_step=6)
    resumed = _trainer(interrupted_dir)
    records = resumed.train()
    self.assertEqual(records[0].step, 8)
    for expected, actual in zip(_weights(whole), _weights(resumed)):
      self.assertAllEqual(expected, actual)

  def test_nonfinite_loss_names_the_step_and_keeps_the_last_checkpoint(self):
    model_dir = self.get_temp_dir()
    # Examples 40.. have NaN targets: step 6 (examples 40-47) is the first bad.
    trainer = _trainer(model_dir, _ToyTask(nan_from=40, shuffle=False),
                       checkpoint_every=2)
    with self.assertRaisesRegex(trainer_lib.NonFiniteLossError,
                                r"step 6 .*ckpt-4"):
      trainer.train()
    self.assertEqual(
        os.path.basename(tf.train.latest_checkpoint(model_dir)), "ckpt-4")
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(model_dir))
    for name in reader.get_variable_to_shape_map():
      if name.startswith("model/") and "kernel" in name:
        self.assertTrue(np.all(np.isfinite(reader.get_tensor(name))), name)

  def test_loss_spike_stops_and_sets_aside_the_checkpoint_that_diverged(self):
    model_dir = self.get_temp_dir()
    trainer = trainer_lib.Trainer(
        model_dir=model_dir, task=_ToyTask(shuffle=False), train_steps=10,
        log_every=1, checkpoint_every=1,
        optimization=optimization.optimization_config(
            train_steps=10, learning_rate=1e6, warmup_fraction=0.0))
    with self.assertRaisesRegex(
        trainer_lib.NonFiniteLossError,
        r"(?s)(Loss spike after step 1|Non-finite).*below 10.0 x max\(1, "
        r"the running average loss\).*ckpt-1 did not pass.*diverged/.*"
        r"latest good checkpoint is none"):
      trainer.train()
    self.assertIsNone(tf.train.latest_checkpoint(model_dir))
    self.assertTrue(os.path.exists(
        os.path.join(model_dir, "diverged", "ckpt-1.index")))
    # The lock is released when the run stops on an error.
    self.assertFalse(os.path.exists(os.path.join(model_dir, "RUN_LOCK")))

  def test_a_live_run_owns_its_directory_and_a_dead_ones_lock_is_taken(self):
    model_dir = self.get_temp_dir()
    sleeper = subprocess.Popen(["sleep", "60"])
    self.addCleanup(sleeper.kill)
    with open(os.path.join(model_dir, "RUN_LOCK"), "w") as f:
      json.dump({"host": socket.gethostname(), "pid": sleeper.pid,
                 "since": "now"}, f)
    with self.assertRaisesRegex(checkpointing.RunDirectoryBusyError,
                                rf"in use by process {sleeper.pid}"):
      _trainer(model_dir, train_steps=2).train()
    self.assertFalse(tf.io.gfile.glob(os.path.join(model_dir, "ckpt-*")))
    sleeper.kill()
    sleeper.wait()
    _trainer(model_dir, train_steps=2).train()  # Takes the dead run's lock.
    self.assertEqual(
        os.path.basename(tf.train.latest_checkpoint(model_dir)), "ckpt-2")
    self.assertFalse(os.path.exists(os.path.join(model_dir, "RUN_LOCK")))

  def test_unwritable_model_dir_fails_before_building(self):
    # A path below a regular file cannot be created, even by root.
    blocker = os.path.join(self.get_temp_dir(), "a_file")
    open(blocker, "w").close()
    trainer = _trainer(os.path.join(blocker, "run"), train_steps=2)
    with self.assertRaisesRegex(PermissionError,
                                r"Cannot create the run directory .*a_file/run"
                                r".*writable --model_dir"):
      trainer.train()
    self.assertFalse(trainer._built)  # pylint: disable=protected-access

  def test_truncated_checkpoint_falls_back_to_the_intact_one_before(self):
    model_dir = self.get_temp_dir()
    _trainer(model_dir, train_steps=8, checkpoint_every=4,
             keep_checkpoints=3).train()
    data = glob.glob(os.path.join(model_dir, "ckpt-8.data-*"))[0]
    with open(data, "r+b") as f:
      f.truncate(os.path.getsize(data) // 2)
    os.makedirs(os.path.join(model_dir, "ckpt-9_temp"))  # A failed save.
    resumed = _trainer(model_dir, train_steps=10, checkpoint_every=4,
                       keep_checkpoints=3)
    with self.assertLogs(level="WARNING") as logs:
      resumed.train()
    text = "\n".join(logs.output)
    self.assertRegex(text, r"(?s)Damaged checkpoint.*ckpt-8.*Resumed from "
                     r"the newest intact one, .*ckpt-4")
    self.assertIn("ckpt-9_temp", text)
    self.assertFalse(os.path.exists(os.path.join(model_dir, "ckpt-9_temp")))
    self.assertTrue(glob.glob(os.path.join(model_dir, "damaged", "ckpt-8.*")))
    self.assertEqual(
        os.path.basename(tf.train.latest_checkpoint(model_dir)), "ckpt-10")
    whole = _trainer(self.get_temp_dir(), train_steps=10)
    whole.train()
    for expected, actual in zip(_weights(whole), _weights(resumed)):
      self.assertAllClose(expected, actual)

  def test_another_model_in_the_directory_is_refused_clearly(self):
    model_dir = self.get_temp_dir()
    _trainer(model_dir, train_steps=2).train()

    class Wider(_ToyTask):

      def build_model(self):
        inputs = tf_keras.Input((4,))
        hidden = tf_keras.layers.Dense(32, activation="relu")(inputs)
        return tf_keras.Model(inputs, tf_keras.layers.Dense(1)(hidden))

    with self.assertRaisesRegex(ValueError,
                                "does not fit this run's model.*fresh "
                                "model_dir"):
      _trainer(model_dir, Wider(), train_steps=4).train()

  def test_resuming_with_another_vocabulary_is_refused(self):
    model_dir = self.get_temp_dir()
    _trainer(model_dir, train_steps=4).train()
    other = _trainer(model_dir, _ToyTask(fingerprint="b" * 64), train_steps=8)
    with self.assertRaisesRegex(checkpointing.VocabularyMismatchError,
                                "different student vocabulary"):
      other.train()

  def test_mixed_precision_trains_with_float32_losses(self):
    self.addCleanup(tf_keras.mixed_precision.set_global_policy, "float32")
    for precision in ("mixed_bfloat16", "mixed_float16"):
      trainer = _trainer(os.path.join(self.get_temp_dir(), precision),
                         train_steps=4, precision=precision)
      records = trainer.train()
      self.assertTrue(np.isfinite(records[-1].scalars["loss"]), precision)
      self.assertEqual(trainer.model.layers[1].compute_dtype,
                       precision.split("_")[1])
      self.assertEqual(trainer.model.layers[1].kernel.dtype, tf.float32)

  def test_bfloat16_if_native_resolves_trains_and_is_recorded(self):
    self.addCleanup(tf_keras.mixed_precision.set_global_policy, "float32")
    expected, _ = precision_lib.resolve(precision_lib.IF_NATIVE, is_tpu=False)
    model_dir = self.get_temp_dir()
    trainer = _trainer(model_dir, train_steps=4,
                       precision=precision_lib.IF_NATIVE)
    self.assertEqual(trainer.precision, expected)
    records = trainer.train()
    self.assertTrue(np.isfinite(records[-1].scalars["loss"]))
    self.assertEqual(trainer.model.layers[1].compute_dtype,
                     expected.replace("mixed_", ""))
    with open(os.path.join(model_dir, trainer_lib.OPERATIVE_CONFIG)) as f:
      self.assertEqual(precision_lib.precision_of_run(f.read()), expected)
    self.assertIn(f"Precision: {expected} (", trainer.dry_run())
    with self.assertRaisesRegex(ValueError, "precision must be one of"):
      _trainer(model_dir, precision="bfloat16")

  def test_stop_request_saves_at_the_next_step_boundary(self):
    model_dir = self.get_temp_dir()
    trainer = _trainer(model_dir)
    trainer.request_stop()  # As the SIGTERM handler of train.py does.
    trainer.train()
    self.assertEqual(os.path.basename(tf.train.latest_checkpoint(model_dir)),
                     "ckpt-1")
    # Not finished: train.py exits non-zero, so no job counts it done.
    self.assertEqual(trainer.interrupted_at, 1)

  def test_dry_run_reports_parameters_and_config(self):
    report = _trainer(self.get_temp_dir()).dry_run()
    # 4*16+16 + 16+1 parameters.
    self.assertRegex(report, r"total\s+97\s+0")
    self.assertIn("Optimizer: lamb", report)

  def test_lazy_sparse_updates_wrap_adam_and_refuse_other_optimizers(self):
    def trainer(optimizer, model_dir):
      return trainer_lib.Trainer(
          model_dir=model_dir, task=_ToyTask(), train_steps=4,
          optimization=optimization.optimization_config(
              train_steps=4, optimizer=optimizer),
          lazy_sparse_updates=True)
    lazy = trainer("adamw", self.get_temp_dir())
    self.assertIn("Optimizer: adamw (lazy sparse updates)", lazy.dry_run())
    lazy.train()
    self.assertEqual(type(lazy.optimizer).__name__, "LazyAdamWeightDecay")
    with self.assertRaisesRegex(ValueError, "needs the 'adam' or 'adamw' "
                                "optimizer; the run's is 'lamb'"):
      trainer("lamb", self.get_temp_dir())

  def test_learning_rate_multipliers_scale_the_matching_layer(self):
    def trainer(model_dir, multipliers, optimizer="adam"):
      return trainer_lib.Trainer(
          model_dir=model_dir, task=_ToyTask(), train_steps=1,
          optimization=optimization.optimization_config(
              train_steps=1, optimizer=optimizer, learning_rate=0.01,
              warmup_fraction=0.0, clip_norm=None),
          learning_rate_multipliers=multipliers)
    moved = {}
    for name, multipliers in (("plain", None), ("scaled", {"bias": 8.0})):
      run = trainer(self.get_temp_dir() + "/" + name, multipliers)
      run.build()
      before = [v.numpy() for v in run.model.trainable_variables]
      run.train()
      moved[name] = [(v.name, np.abs(v.numpy() - b).max()) for v, b in
                     zip(run.model.trainable_variables, before)]
    self.assertIn("learning rate x8 for /bias/", run.dry_run())
    for (_, plain), (name, scaled) in zip(moved["plain"], moved["scaled"]):
      # One Adam step moves each weight by about the rate.
      expected = plain * (8.0 if "bias" in name else 1.0)
      self.assertAllClose(scaled, expected, rtol=1e-3)
    with self.assertRaisesRegex(ValueError, "'kernal' matches none of the 4 "
                                "trainable variables of toy"):
      trainer(self.get_temp_dir() + "/typo", {"kernal": 2.0}).build()
    with self.assertRaisesRegex(ValueError, "learning_rate_multipliers needs "
                                "the 'adam' or 'adamw' optimizer"):
      trainer(self.get_temp_dir() + "/lamb", {"dense_1": 2.0}, "lamb")

  def test_frozen_variables_keep_their_values(self):
    def trainer(model_dir, frozen):
      return trainer_lib.Trainer(
          model_dir=model_dir, task=_ToyTask(), train_steps=2,
          optimization=optimization.optimization_config(
              train_steps=2, optimizer="adam", learning_rate=0.01,
              warmup_fraction=0.0, clip_norm=None),
          frozen_variables=frozen)
    run = trainer(self.get_temp_dir() + "/frozen", "kernel")
    run.build()
    self.assertEqual(sorted(v.name.split("/")[-1]
                            for v in run.trainable_variables),
                     ["bias:0", "bias:0"])
    before = [v.numpy() for v in run.model.trainable_variables]
    run.train()
    for v, b in zip(run.model.trainable_variables, before):
      moved = np.abs(v.numpy() - b).max()
      if "kernel" in v.name:
        self.assertEqual(moved, 0.0, v.name)
      else:
        self.assertGreater(moved, 0.0, v.name)
    report = run.dry_run()
    self.assertIn("variables matching /kernel/ frozen", report)
    self.assertRegex(report, r"total\s+17\s+80\b")  # Trained, frozen.
    for pattern, found in (("kernal", "none"), ("dense", "all")):
      with self.assertRaisesRegex(ValueError, f"{pattern!r} matches {found} "
                                  "of the 4 trainable variables of toy"):
        trainer(self.get_temp_dir() + "/" + pattern, pattern).build()
    with self.assertRaisesRegex(ValueError, "frozen_variables must be a "
                                "regular expression; received '\\('"):
      trainer(self.get_temp_dir() + "/bad", "(")

  def test_unknown_task_name_lists_the_registered_ones(self):
    self.assertIs(base_task.get_task_class("toy_regression"), _RegisteredToy)
    with self.assertRaisesRegex(
        ValueError, r"Unknown task 'toy_regresion'.*Did you mean "
        r"'toy_regression'"):
      trainer_lib.Trainer(model_dir=self.get_temp_dir(),
                          task="toy_regresion", train_steps=1)

  def test_bad_arguments_say_what_was_received(self):
    with self.assertRaisesRegex(ValueError, "train_steps .* received 0"):
      _trainer(self.get_temp_dir(), train_steps=0)
    with self.assertRaisesRegex(ValueError, "precision .* received 'fp8'"):
      _trainer(self.get_temp_dir(), precision="fp8")


if __name__ == "__main__":
  tf.test.main()
