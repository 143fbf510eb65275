"""Tests of stage II: the student table from stage I, and what is refused."""

import tempfile

import numpy as np
import tensorflow as tf

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.tasks.pretraining import stage2
from mixvocab_tf.core import checkpointing


def _inputs():
  return mlm_inputs.MlmInputs(global_batch_size=4, seq_length=32,
                              max_predictions=5)


class Stage2TaskTest(tf.test.TestCase):

  def _task(self, init_checkpoint, hidden_size=32, **kwargs):
    student = student_spec.StudentSpec(
        num_layers=2, hidden_size=hidden_size, num_attention_heads=2,
        init_checkpoint=init_checkpoint, **kwargs)
    return stage2.Stage2Task(student=student, inputs=_inputs())

  def _stage1_run(self, width=32, fingerprint=None, with_table=True):
    """A stage I model_dir: a student table and the run's metadata."""
    model_dir = tempfile.mkdtemp(dir=self.get_temp_dir())
    size = len(text_lib.load_vocab(self._vocab_path()))
    table = np.random.RandomState(0).randn(size, width).astype(np.float32)
    items = ({stage1.STUDENT_TABLE_KEY: tf.Variable(table)} if with_table
             else {"other": tf.Variable(1.0)})
    fingerprint = fingerprint or text_lib.vocab_fingerprint(
        text_lib.load_vocab(self._vocab_path()))
    checkpointing.RunCheckpoint(model_dir, items, task_name="stage1",
                                vocab_fingerprints={"student": fingerprint}
                               ).save(100)
    return model_dir, table

  def _vocab_path(self):
    from mixvocab_tf import assets  # pylint: disable=g-import-not-at-top
    return assets.default_student_vocab()

  def test_student_table_comes_from_stage1(self):
    model_dir, table = self._stage1_run()
    task = self._task(model_dir)
    model = task.build_model()
    task.initialize(model)
    self.assertAllEqual(model.encoder_network.get_embedding_table(), table)
    self.assertEqual(task.vocab_fingerprints().keys(), {"student"})
    self.assertIn("student_encoder", task.checkpoint_items(model))

  def test_another_student_vocabulary_is_refused(self):
    model_dir, _ = self._stage1_run(fingerprint="0" * 64)
    task = self._task(model_dir)
    model = task.build_model()
    with self.assertRaisesRegex(checkpointing.VocabularyMismatchError,
                                "initialising the stage II student"):
      task.initialize(model)

  def test_wrong_width_or_no_table_is_refused(self):
    model_dir, _ = self._stage1_run(width=16)
    task = self._task(model_dir)
    with self.assertRaisesRegex(ValueError, r"shape \[\d+, 16\].*student_"
                                r"embedding_width"):
      task.initialize(task.build_model())
    model_dir, _ = self._stage1_run(with_table=False)
    task = self._task(model_dir)
    with self.assertRaisesRegex(ValueError, "holds no stage I student table"):
      task.initialize(task.build_model())

  def test_init_checkpoint_is_required_and_checked(self):
    with self.assertRaisesRegex(ValueError,
                                "needs StudentSpec.init_checkpoint"):
      stage2.Stage2Task(student=student_spec.StudentSpec(), inputs=_inputs())
    task = self._task("/nonexistent/stage1")
    self.assertIn("stage I checkpoint", task.missing_files())

  def test_nokd_is_the_same_student_from_scratch(self):
    self.assertIs(base_task.get_task_class("nokd"), nokd.NoKDTask)
    task = nokd.NoKDTask(
        student=student_spec.StudentSpec(num_layers=2, hidden_size=32,
                                         num_attention_heads=2),
        inputs=_inputs())
    student = task.build_model()
    self.assertEqual(student.encoder_network.get_config()["num_layers"], 2)
    self.assertEqual(task.missing_files(), {})


if __name__ == "__main__":
  tf.test.main()
