"""Tests of TinyBERT task-specific distillation on SNIPS (tiny models)."""

import pytest
import os

import numpy as np
import tensorflow as tf

from mixvocab_testing import distillation_testing
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.distillation import tinybert_snips
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import evaluation


def _metric(metrics, name):
  total, count = metrics[name].numpy()
  return total / count


class TinyBertSnipsTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "tinybert_snips")
    cls.teacher_dir = distillation_testing.tiny_teacher(
        os.path.join(root, "teacher"))
    cls.vocab = os.path.join(cls.teacher_dir, "vocab.txt")
    # A "fine-tuned" teacher: an intent_slot model of the tiny teacher,
    # saved as the trainer saves it (weights untrained: the test checks
    # plumbing and losses, not quality).
    task = intent_slot_task.IntentSlotTask(
        teacher_checkpoint=cls.teacher_dir, seq_length=32,
        global_batch_size=8)
    cls.teacher_model = task.build_model()
    task.initialize(cls.teacher_model)
    cls.teacher_run = os.path.join(root, "teacher_run")
    checkpointing.RunCheckpoint(
        cls.teacher_run, {"model": cls.teacher_model}, task.task_name,
        task.vocab_fingerprints()).save(1)
    task.write_assets(cls.teacher_run)

  def _task(self, **kwargs):
    return tinybert_snips.TinyBertSnipsTask(
        teacher_run=self.teacher_run, teacher_checkpoint=self.teacher_dir,
        vocab=self.vocab, num_layers=2,
        hidden_size=16, num_attention_heads=2, seq_length=32,
        global_batch_size=8, eval_batch_size=16, **kwargs)

  @pytest.mark.large
  def test_loss_is_prediction_plus_intermediate_terms(self):
    task = self._task(hidden_weight=1.0, attention_weight=0.5,
                      temperature=2.0)
    model = task.build_model()
    task.initialize(model)
    # The teacher is the fine-tuned run, frozen.
    self.assertAllEqual(model.teacher.intent_classifier.kernel,
                        self.teacher_model.intent_classifier.kernel)
    self.assertEmpty(model.teacher.trainable_variables)
    self.assertEqual(task.layer_map, [1, 2])
    batch = next(iter(task.build_inputs(training=True)))
    loss, metrics = task.compute_loss(model, batch, training=False)
    expected = (_metric(metrics, "distill/intent_soft_ce")
                + _metric(metrics, "distill/slot_soft_ce")
                + _metric(metrics, "distill/hidden_mse")
                + 0.5 * _metric(metrics, "distill/attention_mse"))
    self.assertAllClose(loss, expected, rtol=1e-5)
    # Soft cross-entropy is at least the teacher's entropy, so at most
    # log(classes) below: here positive.
    self.assertGreater(_metric(metrics, "distill/intent_soft_ce"), 0.0)
    # The checkpoint holds the student and W_h, not the teacher.
    items = task.checkpoint_items(model)
    self.assertIs(items["model"], model.student)
    self.assertEqual(sorted(items), ["distillation_projections", "model"])
    # Evaluation is intent_slot's, on the student.
    results = evaluation.evaluate(task, model, max_batches=1)
    self.assertEqual(results["num_examples"], 16)
    self.assertBetween(results["slot_f1"], 0.0, 1.0)

  @pytest.mark.large
  def test_a_student_equal_to_the_teacher_only_pays_the_entropy(self):
    task = tinybert_snips.TinyBertSnipsTask(
        teacher_run=self.teacher_run, teacher_checkpoint=self.teacher_dir,
        vocab=self.vocab, num_layers=2,
        hidden_size=32, num_attention_heads=2, seq_length=32,
        global_batch_size=8)
    model = task.build_model()
    for target, source in zip(model.student.variables,
                              model.teacher.variables):
      if target.shape != source.shape:  # Positions: the student has more.
        source = tf.concat([source, target[source.shape[0]:]], axis=0)
      target.assign(source)
    batch = next(iter(task.build_inputs(training=True)))
    _, metrics = task.compute_loss(model, batch, training=False)
    teacher = tinybert_snips.joint_forward(model.teacher, batch, False)
    probs = tf.nn.softmax(teacher["intent_logits"])
    entropy = -tf.reduce_mean(tf.reduce_sum(probs * tf.math.log(probs), -1))
    self.assertAllClose(_metric(metrics, "distill/intent_soft_ce"), entropy,
                        rtol=1e-4)

  def test_teacher_run_is_required(self):
    with self.assertRaisesRegex(ValueError, "teacher_run is required"):
      tinybert_snips.TinyBertSnipsTask(vocab=self.vocab)
    task = tinybert_snips.TinyBertSnipsTask(
        teacher_run=os.path.join(self.teacher_run, "nothing"),
        labels_file=os.path.join(self.teacher_run, "snips_labels.json"),
        vocab=self.vocab)
    self.assertIn("fine-tuned teacher", task.missing_files())
    np.testing.assert_equal(task.teacher_loaded, False)


if __name__ == "__main__":
  tf.test.main()
