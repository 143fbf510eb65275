"""Tests for the held-out masked-word curve's checkpoint listing."""

import os

import tensorflow as tf

from mixvocab_tf.jobs import mlm_curve


def _save_checkpoints(run_dir, steps):
  step = tf.Variable(0)
  manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step),
                                       run_dir, max_to_keep=None,
                                       checkpoint_name="ckpt")
  for value in steps:
    step.assign(value)
    manager.save(checkpoint_number=value)


def test_checkpoints_of_a_relative_run_directory(tmp_path, monkeypatch):
  # The scaling job passes run directories relative to the working directory.
  monkeypatch.chdir(tmp_path)
  _save_checkpoints(os.path.join("runs", "stage2_b1"), [37, 75, 300])
  found = mlm_curve.checkpoint_steps(os.path.join("runs", "stage2_b1"))
  assert [step for step, _ in found] == [37, 75, 300]
  for _, prefix in found:
    assert os.path.exists(prefix + ".index"), prefix


def test_checkpoints_of_an_absolute_run_directory(tmp_path):
  run_dir = str(tmp_path / "nokd_b1")
  _save_checkpoints(run_dir, [10, 20])
  found = mlm_curve.checkpoint_steps(run_dir)
  assert [prefix for _, prefix in found] == [
      os.path.join(run_dir, "ckpt-10"), os.path.join(run_dir, "ckpt-20")]
