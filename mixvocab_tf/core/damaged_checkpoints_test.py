"""Tests of failed saves and damaged or diverged checkpoints being set aside.

Each test runs on the local disk and on TensorFlow's ram:// file system,
which stands for the remote ones (gs://): nothing may go through a local path.
"""

import os
import uuid

from absl.testing import parameterized
import tensorflow as tf

from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import damaged_checkpoints

_FILE_SYSTEMS = (("local", False), ("ram", True))


def _run(directory, value=0.0):
  """A run checkpoint of one variable."""
  variable = tf.Variable([value])
  return checkpointing.RunCheckpoint(directory, {"weights": variable},
                                     task_name="stage1",
                                     vocab_fingerprints={}), variable


def _truncate(path):
  """Cuts a file to half its length, as a kill mid-write or a full disk."""
  with tf.io.gfile.GFile(path, "rb") as f:
    data = f.read()
  tf.io.gfile.remove(path)  # ram:// writes after what a file holds.
  with tf.io.gfile.GFile(path, "wb") as f:
    f.write(data[:len(data) // 2])


class DamagedCheckpointsTest(tf.test.TestCase, parameterized.TestCase):

  def _directory(self, on_ram):
    if on_ram:
      return f"ram://{uuid.uuid4().hex}/run"
    return os.path.join(self.get_temp_dir(), uuid.uuid4().hex, "run")

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_leftovers_of_failed_saves_are_removed(self, on_ram):
    directory = self._directory(on_ram)
    self.assertEqual(checkpointing.remove_failed_saves(directory), [])
    run, _ = _run(directory)
    run.save(1)
    tf.io.gfile.makedirs(os.path.join(directory, "ckpt-2_temp"))
    with tf.io.gfile.GFile(os.path.join(directory, "ckpt-2_temp",
                                        "part-00000-of-00001.index"),
                           "w") as f:
      f.write("half a save")
    with tf.io.gfile.GFile(os.path.join(directory, "ckpt-3_temp.index"),
                           "w") as f:
      f.write("half a save")
    with self.assertLogs(level="WARNING") as logs:
      removed = checkpointing.remove_failed_saves(directory)
    self.assertCountEqual([os.path.basename(p) for p in removed],
                          ["ckpt-2_temp", "ckpt-3_temp.index"])
    self.assertIn("ckpt-2_temp", "\n".join(logs.output))
    self.assertCountEqual(tf.io.gfile.listdir(directory),
                          ["checkpoint", "ckpt-1.index",
                           "ckpt-1.data-00000-of-00001"])
    self.assertEqual(checkpointing.resolve_checkpoint(directory),
                     os.path.join(directory, "ckpt-1"))

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_a_damaged_checkpoint_is_set_aside_for_the_intact_one_before(
      self, on_ram):
    directory = self._directory(on_ram)
    run, variable = _run(directory)
    for step in (1, 2):
      variable.assign([float(step)])
      run.save(step)
    _truncate(tf.io.gfile.glob(os.path.join(directory, "ckpt-2.data-*"))[0])
    resumed, variable = _run(directory)
    with self.assertLogs(level="WARNING") as logs:
      self.assertEqual(resumed.restore_latest(), 1)
    self.assertRegex("\n".join(logs.output),
                     r"(?s)Damaged checkpoint.*ckpt-2 .*Resumed from the "
                     r"newest intact one, .*ckpt-1")
    self.assertAllEqual(variable.numpy(), [1.0])
    damaged = os.path.join(directory, checkpointing.DAMAGED_DIR)
    self.assertTrue(tf.io.gfile.exists(os.path.join(damaged, "ckpt-2.index")))
    self.assertEqual(
        tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths,
        [os.path.join(directory, "ckpt-1")])
    self.assertEqual(resumed.save(2), os.path.join(directory, "ckpt-2"))
    self.assertEqual(tf.train.latest_checkpoint(directory),
                     os.path.join(directory, "ckpt-2"))

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_no_intact_checkpoint_says_where_the_damaged_ones_went(self,
                                                                 on_ram):
    directory = self._directory(on_ram)
    run, _ = _run(directory)
    run.save(1)
    _truncate(tf.io.gfile.glob(os.path.join(directory, "ckpt-1.data-*"))[0])
    with self.assertRaisesRegex(FileNotFoundError,
                                r"No checkpoint of .* can be read: .*ckpt-1 "
                                r".*moved to .*damaged"):
      _run(directory)[0].restore_latest()

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_diverged_checkpoints_are_set_aside_from_a_step_on(self, on_ram):
    directory = self._directory(on_ram)
    run, _ = _run(directory)
    for step in (1, 2, 3):
      run.save(step)
    moved = run.set_aside_from(2, "diverged")
    self.assertEqual([os.path.basename(p) for p in moved],
                     ["ckpt-2", "ckpt-3"])
    self.assertEqual(run.latest_checkpoint, os.path.join(directory, "ckpt-1"))
    self.assertCountEqual(
        tf.io.gfile.glob(os.path.join(directory, "diverged", "*.index")),
        [os.path.join(directory, "diverged", f"ckpt-{s}.index")
         for s in (2, 3)])
    self.assertTrue(checkpointing.has_checkpoint(directory))
    run.set_aside_from(1, "diverged")
    self.assertFalse(checkpointing.has_checkpoint(directory))
    self.assertIsNone(tf.train.latest_checkpoint(directory))

  def test_a_damage_error_without_a_message_is_named_by_its_type(self):
    directory = self.get_temp_dir()
    tried = []

    def restore(path):
      tried.append(path)
      if path.endswith("ckpt-2"):
        raise IndexError()  # What the reader raised for a truncated file.

    paths = [os.path.join(directory, f"ckpt-{s}") for s in (2, 1)]
    with self.assertLogs(level="WARNING") as logs:
      self.assertEqual(damaged_checkpoints.restore_newest_intact(
          directory, paths, restore), (paths[1], paths[:1]))
    self.assertEqual(tried, paths)
    self.assertIn("ckpt-2 (IndexError: no message)", "\n".join(logs.output))

  def test_errors_other_than_damage_propagate(self):
    def restore(path):
      raise ValueError(f"{path} is another model's")

    with self.assertRaisesRegex(ValueError, "another model's"):
      damaged_checkpoints.restore_newest_intact(self.get_temp_dir(),
                                                ["ckpt-2", "ckpt-1"], restore)


if __name__ == "__main__":
  tf.test.main()
