"""Tests of stage II with distillation across vocabularies.

The central check: the teacher reads the student's own batch, so every
cross-vocabulary loss compares the same token positions. A teacher made
identical to the student (same weights, an identity up-projection and W)
must then give zero for every distillation loss, while the same states one
position apart differ.
"""

import pytest
import os

import numpy as np
import tensorflow as tf

from mixvocab_tf.networks import bert_variables
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_testing import distillation_testing
from mixvocab_tf.tasks.pretraining import stage2
from mixvocab_tf.tasks.distillation import stage2_distill

_ALL = dict(soft_target_weight=1.0, embedding_weight=1.0, hidden_weight=1.0,
            attention_weight=1.0)


def _metric(metrics, name):
  total, count = metrics[name].numpy()
  return total / count


def _make_teacher_equal_to_student(model):
  """Copies the student into the teacher's student-vocabulary path."""
  student, teacher = model.student, model.teacher
  student_vars = bert_variables.encoder_variables(
      student.encoder_network, include_word_embeddings=False)
  teacher_vars = bert_variables.encoder_variables(
      teacher.encoder_network, include_word_embeddings=False)
  for name, variable in student_vars.items():
    target = teacher_vars[name]
    # The tiny teacher has fewer positions than the student.
    target.assign(variable[:target.shape[0]] if "position" in name
                  else variable)
  teacher.encoder_network.get_student_embedding_table().assign(
      student.encoder_network.get_embedding_table())
  up = teacher.encoder_network.up_projection
  up.kernel.assign(tf.eye(up.kernel.shape[0]))
  up.bias.assign(tf.zeros_like(up.bias))
  head_vars = bert_variables.masked_lm_variables(student.masked_lm)
  teacher_head = bert_variables.masked_lm_variables(
      teacher.student_masked_lm, prefix="cls/predictions")
  for name, variable in head_vars.items():
    teacher_head[name].assign(variable)
  for layer in model.projections.values():
    layer.kernel.assign(tf.eye(layer.kernel.shape[0]))
    layer.bias.assign(tf.zeros_like(layer.bias))


class Stage2DistillTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "stage2_distill")
    # Teacher and student of the same size, so that one can equal the other.
    cls.teacher_dir = distillation_testing.tiny_teacher(
        os.path.join(root, "teacher"), hidden_size=16)
    cls.stage1_dir, _ = distillation_testing.write_stage1_run(
        os.path.join(root, "stage1"), cls.teacher_dir, 16)

  def _task(self, **kwargs):
    return stage2_distill.Stage2DistillTask(
        student=student_spec.StudentSpec(
            num_layers=2, hidden_size=16, num_attention_heads=2,
            init_checkpoint=self.stage1_dir),
        teacher=teacher_spec.TeacherSpec(checkpoint=self.teacher_dir),
        inputs=distillation_testing.tiny_inputs(), **kwargs)

  @pytest.mark.large
  def test_losses_compare_the_same_token_positions(self):
    task = self._task(**_ALL)
    model = task.build_model()
    task.initialize(model)
    _make_teacher_equal_to_student(model)
    batch = distillation_testing.first_batch(task)
    self.assertGreater(float(tf.reduce_sum(batch["masked_lm_weights"])), 0)
    # Even if the batch tagged its tokens otherwise, the teacher reads them as
    # student tokens.
    batch["input_vocab_ids"] = tf.zeros_like(batch["input_vocab_ids"])
    _, metrics = task.compute_loss(model, batch, training=False)
    for name in ("distill/kl", "distill/embedding_mse", "distill/hidden_mse",
                 "distill/attention_mse"):
      self.assertAllClose(_metric(metrics, name), 0.0, atol=1e-6, msg=name)
    # Soft targets at the student's masked positions: the teacher predicts
    # exactly what the student predicts.
    self.assertAllClose(_metric(metrics, "teacher_student_mlm/accuracy"),
                        _metric(metrics, "student_mlm/accuracy"))
    # The zeros are not trivial: one position apart, the states differ.
    student = model.student(distillation_task.model_features(batch),
                            training=False)
    shifted = tf.roll(student["encoder_outputs"][0], shift=1, axis=1)
    error = losses.mean_squared_error(student["encoder_outputs"][0], shifted)
    self.assertGreater(
        float(losses.masked_sum(error, batch["input_mask"])[0]), 1.0)

  @pytest.mark.large
  def test_loss_is_the_weighted_sum_of_its_terms(self):
    weights = dict(mlm_weight=1.0, soft_target_weight=2.0, hidden_weight=3.0,
                   attention_weight=0.5, embedding_weight=0.0)
    task = self._task(temperature=2.0, **weights)
    model = task.build_model()
    self.assertEqual(sorted(model.projections), ["hidden"])
    batch = distillation_testing.first_batch(task)
    loss, metrics = task.compute_loss(model, batch, training=False)
    self.assertNotIn("distill/embedding_mse", metrics)
    expected = (_metric(metrics, "student_mlm/loss")
                + 2.0 * 4.0 * _metric(metrics, "distill/kl")
                + 3.0 * _metric(metrics, "distill/hidden_mse")
                + 0.5 * _metric(metrics, "distill/attention_mse"))
    self.assertAllClose(loss, expected, rtol=1e-5)
    self.assertGreater(_metric(metrics, "distill/hidden_mse"), 0)

  def test_without_distillation_it_is_stage2(self):
    task = self._task()
    model = task.build_model()
    task.initialize(model)
    self.assertEqual(model.projections, {})
    batch = distillation_testing.first_batch(task)
    loss, _ = task.compute_loss(model, batch, training=False)
    plain, _ = stage2.Stage2Task.compute_loss(task, model.student, batch,
                                              training=False)
    self.assertAllClose(loss, plain)
    # The student's table is stage I's, as in stage II.
    self.assertAllEqual(
        model.student.encoder_network.get_embedding_table(),
        model.teacher.encoder_network.get_student_embedding_table())

  def test_checkpoint_holds_the_student_not_the_teacher(self):
    task = self._task(hidden_weight=1.0)
    model = task.build_model()
    items = task.checkpoint_items(model)
    self.assertEqual(sorted(items), ["distillation_projections", "model",
                                     "student_encoder"])
    self.assertIs(items["model"], model.student)
    saved = {id(v) for v in tf.train.Checkpoint(**items).model.variables}
    self.assertFalse(saved & {id(v) for v in model.teacher.variables})

  def test_bad_weights(self):
    with self.assertRaisesRegex(ValueError, "hidden_weight must be >= 0"):
      self._task(hidden_weight=-1.0)
    with self.assertRaisesRegex(ValueError, "needs a positive weight"):
      self._task(mlm_weight=0.0)
    with self.assertRaisesRegex(ValueError, "temperature must be positive"):
      self._task(temperature=0.0)
    np.testing.assert_equal(self._task().teacher_spec.stage1_checkpoint,
                            self.stage1_dir)


if __name__ == "__main__":
  tf.test.main()
