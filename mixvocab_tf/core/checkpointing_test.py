"""Tests of run checkpoints: metadata, vocabulary checks, multi-worker steps."""

import os
import uuid

import tensorflow as tf
import tf_keras

from mixvocab_tf.core import checkpointing

_A, _B = "a" * 64, "b" * 64


def _save(model_dir, step, fingerprints, task="stage1", worker_index=0,
          num_workers=1):
  run = checkpointing.RunCheckpoint(
      model_dir, {"weights": tf.Variable([1.0, 2.0])}, task_name=task,
      vocab_fingerprints=fingerprints, worker_index=worker_index,
      num_workers=num_workers)
  return run.save(step)


class CheckpointingTest(tf.test.TestCase):

  def test_metadata_is_readable_without_a_model(self):
    path = _save(self.get_temp_dir(), 7, {"teacher": _A, "student": _B})
    self.assertEqual(checkpointing.read_metadata(path),
                     {"task": "stage1", "teacher_vocab": _A,
                      "student_vocab": _B})
    self.assertEqual(checkpointing.resolve_checkpoint(self.get_temp_dir()),
                     path)
    self.assertEqual(checkpointing.resolve_checkpoint(path + ".index"), path)

  def test_mismatched_vocabulary_is_refused_with_both_fingerprints(self):
    path = _save(self.get_temp_dir(), 1, {"student": _A})
    checkpointing.check_vocab_fingerprints(path, {"student": _A}, "testing")
    with self.assertRaisesRegex(
        checkpointing.VocabularyMismatchError,
        r"Refusing testing .*different student vocabulary \(sha256 a{16}\.\.\.\)"
        r".*\(sha256 b{16}\.\.\.\)"):
      checkpointing.check_vocab_fingerprints(path, {"student": _B}, "testing")

  def test_restore_checks_vocabulary_and_task(self):
    model_dir = self.get_temp_dir()
    _save(model_dir, 3, {"student": _A})
    variable = tf.Variable([0.0, 0.0])
    run = checkpointing.RunCheckpoint(model_dir, {"weights": variable},
                                      task_name="stage1",
                                      vocab_fingerprints={"student": _A})
    self.assertEqual(run.restore_latest(), 3)
    self.assertAllEqual(variable.numpy(), [1.0, 2.0])
    run = checkpointing.RunCheckpoint(model_dir, {"weights": variable},
                                      task_name="stage2",
                                      vocab_fingerprints={"student": _A})
    with self.assertRaisesRegex(ValueError, "written by task 'stage1'"):
      run.restore_latest()

  def test_a_changed_input_pipeline_is_refused_with_a_clear_error(self):
    model_dir = self.get_temp_dir()

    def run(dataset):
      iterator = iter(dataset)
      next(iterator)
      return checkpointing.RunCheckpoint(
          model_dir, {"weights": tf.Variable([1.0]), "iterator": iterator},
          task_name="stage1", vocab_fingerprints={"student": _A})

    run(tf.data.Dataset.range(10).shuffle(10, seed=0).repeat()).save(1)
    self.assertEqual(run(tf.data.Dataset.range(10).shuffle(
        10, seed=0).repeat()).restore_latest(), 1)
    changed = tf.data.Dataset.range(10).shuffle(10, seed=0).map(
        lambda i: i + 1).repeat()
    with self.assertRaisesRegex(ValueError, "input pipeline that differs"):
      run(changed).restore_latest()

  def test_missing_checkpoints_say_where_they_looked(self):
    with self.assertRaisesRegex(FileNotFoundError, "holds no checkpoint"):
      checkpointing.resolve_checkpoint(self.get_temp_dir(), "stage I run")
    with self.assertRaisesRegex(FileNotFoundError, "not found: /nonexistent"):
      checkpointing.resolve_checkpoint("/nonexistent/ckpt-1")

  def test_the_controller_manager_also_saves_when_its_minutes_are_up(self):
    now = [0.0]
    run = checkpointing.RunCheckpoint(
        self.get_temp_dir(), {"weights": tf.Variable([1.0])}, task_name="toy",
        vocab_fingerprints={"student": _A})
    step = tf.Variable(0, dtype=tf.int64)
    manager = checkpointing.ControllerCheckpointManager(
        run, step, every=100, every_seconds=60, clock=lambda: now[0])
    saved = []
    for step_value, time_value in ((7, 10), (8, 61), (9, 62), (100, 63),
                                   (130, 100), (150, 124)):
      step.assign(step_value)
      now[0] = time_value
      if manager.save(check_interval=True):
        saved.append(step_value)
    # 8: 61 s after the start; 100: the cadence; 150: 61 s after 100's save.
    self.assertEqual(saved, [8, 100, 150])
    step.assign(151)
    self.assertIsNone(checkpointing.ControllerCheckpointManager(
        run, step, every=100).save(check_interval=True))

  def test_workers_resume_from_the_newest_step_all_of_them_saved(self):
    model_dir = self.get_temp_dir()
    for step in (10, 20):
      _save(model_dir, step, {}, worker_index=0, num_workers=2)
    _save(model_dir, 10, {}, worker_index=1, num_workers=2)
    self.assertTrue(os.path.isdir(os.path.join(model_dir, "worker_1")))
    run = checkpointing.RunCheckpoint(
        model_dir, {"weights": tf.Variable([0.0, 0.0])}, task_name="stage1",
        vocab_fingerprints={}, worker_index=1, num_workers=2)
    self.assertEqual(run.latest_common_step(), 10)


class EncoderConfigTest(tf.test.TestCase):

  def test_written_beside_the_checkpoints_and_read_back(self):
    model_dir = self.get_temp_dir()
    # Keras configs hold tracking wrappers; the file holds plain JSON.
    layer = tf_keras.layers.Dense(
        3, kernel_initializer=tf_keras.initializers.TruncatedNormal(
            stddev=0.02))
    config = {"hidden_size": 3, "initializer": layer.get_config()[
        "kernel_initializer"], "sizes": (1, 2)}
    run = checkpointing.RunCheckpoint(
        model_dir, {"weights": tf.Variable([1.0])}, task_name="stage2",
        vocab_fingerprints={}, encoder_configs={"student_encoder": config})
    self.assertFalse(os.path.exists(
        os.path.join(model_dir, checkpointing.ENCODER_CONFIG_FILE)))
    path = run.save(1)
    read = checkpointing.read_encoder_config(path, "student_encoder")
    self.assertEqual(read["hidden_size"], 3)
    self.assertEqual(read["sizes"], [1, 2])
    self.assertEqual(read["initializer"]["config"]["stddev"], 0.02)
    self.assertEqual(
        checkpointing.read_encoder_config(model_dir, "student_encoder"), read)
    self.assertIsNone(checkpointing.read_encoder_config(path, "teacher"))

  def test_a_run_directory_on_another_file_system(self):
    # ram:// stands for gs://: nothing may go through a local path.
    model_dir = f"ram://{uuid.uuid4().hex}/run"
    run = checkpointing.RunCheckpoint(
        model_dir, {"weights": tf.Variable([1.0])}, task_name="stage2",
        vocab_fingerprints={"student": _A},
        encoder_configs={"student_encoder": {"hidden_size": 3}})
    self.assertFalse(checkpointing.has_checkpoint(model_dir))
    path = run.save(5)
    self.assertTrue(checkpointing.has_checkpoint(model_dir))
    self.assertEqual(checkpointing.resolve_checkpoint(model_dir), path)
    self.assertEqual(checkpointing.read_metadata(path),
                     {"task": "stage2", "teacher_vocab": "",
                      "student_vocab": _A})
    checkpointing.check_vocab_fingerprints(path, {"student": _A}, "testing")
    for where in (model_dir, path):
      self.assertEqual(
          checkpointing.read_encoder_config(where, "student_encoder"),
          {"hidden_size": 3})
    self.assertCountEqual(tf.io.gfile.listdir(model_dir),
                          ["checkpoint", "ckpt-5.index",
                           "ckpt-5.data-00000-of-00001",
                           checkpointing.ENCODER_CONFIG_FILE])
    variable = tf.Variable([0.0])
    resumed = checkpointing.RunCheckpoint(
        model_dir, {"weights": variable}, task_name="stage2",
        vocab_fingerprints={"student": _A})
    self.assertEqual(resumed.restore_latest(), 5)
    self.assertAllEqual(variable.numpy(), [1.0])

  def test_absent_for_runs_that_wrote_none(self):
    path = _save(self.get_temp_dir(), 1, {})
    self.assertIsNone(checkpointing.read_encoder_config(path,
                                                        "student_encoder"))


if __name__ == "__main__":
  tf.test.main()
