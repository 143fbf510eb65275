"""Tests of float16 checkpoints read back as float32."""

import os

import numpy as np
import tensorflow as tf

from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import half_checkpoints


def _save(directory, dtype=tf.float32):
  """A small trainer-like checkpoint: nested float weights, an int step and
  string metadata, through a manager (a `checkpoint` state file)."""
  model = tf.Module()
  model.dense = tf.Module()
  model.dense.kernel = tf.Variable(
      tf.constant([[0.1, -2.5], [3.0e-4, 7.0]], dtype))
  step = tf.Variable(5, dtype=tf.int64)
  metadata = checkpointing.make_metadata("stage2", {"student": "abc"})
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=model, step=step, metadata=metadata),
      directory, max_to_keep=1, checkpoint_name="ckpt")
  return manager.save(checkpoint_number=1)


def _fresh():
  model = tf.Module()
  model.dense = tf.Module()
  model.dense.kernel = tf.Variable(tf.zeros([2, 2]))
  return model


def test_a_float16_copy_restores_into_float32_variables(tmp_path):
  path = _save(str(tmp_path / "run"))
  half = half_checkpoints.cast_checkpoint(path, str(tmp_path / "half/ckpt-1"),
                                          tf.float16)
  assert half_checkpoints.is_half(half)
  assert not half_checkpoints.is_half(path)
  # The half file stores float16; the step and the metadata are unchanged.
  dtypes = tf.train.load_checkpoint(half).get_variable_to_dtype_map()
  assert tf.float32 not in dtypes.values()
  assert checkpointing.read_metadata(half)["student_vocab"] == "abc"

  copy = half_checkpoints.float32_copy(half, cache_dir=str(tmp_path / "c"))
  model = _fresh()
  step = tf.Variable(0, dtype=tf.int64)
  tf.train.Checkpoint(model=model, step=step).read(
      copy).assert_existing_objects_matched().expect_partial()
  expected = np.array([[0.1, -2.5], [3.0e-4, 7.0]], np.float16).astype(
      np.float32)
  np.testing.assert_array_equal(model.dense.kernel.numpy(), expected)
  assert int(step.numpy()) == 5
  # Made once: a second call returns the same copy.
  assert half_checkpoints.float32_copy(
      half, cache_dir=str(tmp_path / "c")) == copy


def test_resolve_checkpoint_gives_readers_a_float32_copy(tmp_path,
                                                        monkeypatch):
  monkeypatch.setenv(half_checkpoints.CACHE_ENV, str(tmp_path / "cache"))
  path = _save(str(tmp_path / "run"))
  packaged = str(tmp_path / "packaged")
  half_checkpoints.cast_checkpoint(path, os.path.join(packaged, "ckpt-1"),
                                   tf.float16)
  with open(os.path.join(packaged, "checkpoint"), "w") as f:
    f.write('model_checkpoint_path: "ckpt-1"\n')
  with open(os.path.join(packaged, "encoder_config.json"), "w") as f:
    f.write("{}")
  resolved = checkpointing.resolve_checkpoint(packaged)
  assert resolved.startswith(str(tmp_path / "cache"))
  assert not half_checkpoints.is_half(resolved)
  # The files readers look for beside a checkpoint come along.
  assert os.path.isfile(os.path.join(os.path.dirname(resolved),
                                     "encoder_config.json"))
  assert tf.train.latest_checkpoint(os.path.dirname(resolved)) == resolved
  # A float32 checkpoint resolves to itself.
  assert checkpointing.resolve_checkpoint(str(tmp_path / "run")) == path
