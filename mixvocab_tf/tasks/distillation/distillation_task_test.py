"""Tests of what the distillation tasks share: scores, layer copies, teachers."""

import os

import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf.networks import bert_variables
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.tasks.distillation import distilbert
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_testing import distillation_testing


def _features(vocab_ids=None):
  ids = tf.constant([[2, 7, 9, 4, 3, 0], [2, 5, 3, 0, 0, 0]], tf.int32)
  mask = tf.cast(ids > 0, tf.int32)
  features = dict(input_word_ids=ids, input_mask=mask,
                  input_type_ids=tf.zeros_like(ids))
  if vocab_ids is not None:
    features["input_vocab_ids"] = tf.constant(vocab_ids, tf.int32)
  return features


def _reference_probabilities(logits, mask):
  bias = (1.0 - tf.cast(mask, tf.float32))[:, None, None, :] * -1e9
  return tf.nn.softmax(logits + bias, axis=-1)


class AttentionLogitsTest(tf.test.TestCase):

  def _check(self, encoder, features):
    outputs = encoder(features, training=False)
    states = distillation_task.hidden_states(outputs)
    for i, layer in enumerate(encoder.transformer_layers):
      logits = distillation_task.attention_logits(layer, states[i])
      self.assertEqual(logits.shape, outputs["attention_scores"][i].shape)
      # The scores are what the layer's softmax normalised.
      self.assertAllClose(
          _reference_probabilities(logits, features["input_mask"]),
          outputs["attention_scores"][i], atol=1e-5)

  def test_student_scores_are_the_pre_softmax_attention(self):
    encoder = networks.PlainBertEncoder(
        vocab_size=20, hidden_size=16, num_layers=2, num_attention_heads=2,
        inner_dim=32, max_sequence_length=8, return_attention_scores=True,
        return_word_embeddings=True)
    self._check(encoder, _features())

  def test_teacher_scores_with_mixed_vocabularies(self):
    encoder = networks.DualVocabBertEncoder(
        teacher_vocab_size=20, student_vocab_size=12,
        student_embedding_width=8, hidden_size=16, num_layers=2,
        num_attention_heads=4, inner_dim=32, max_sequence_length=8,
        return_attention_scores=True, return_word_embeddings=True)
    self._check(encoder, _features([[0, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0]]))

  def test_hidden_states_need_the_embedding_output(self):
    with self.assertRaisesRegex(KeyError, "return_word_embeddings"):
      distillation_task.hidden_states({"encoder_outputs": []})


class ModelFeaturesTest(tf.test.TestCase):

  def test_tags_every_token_and_keeps_only_model_inputs(self):
    features = dict(_features([[0] * 6, [0] * 6]),
                    masked_lm_positions=tf.constant([[1], [1]]),
                    masked_lm_ids=tf.constant([[7], [5]]))
    out = distillation_task.model_features(features, vocab_id=1)
    self.assertAllEqual(out["input_vocab_ids"], tf.ones([2, 6], tf.int32))
    self.assertAllEqual(out["input_word_ids"], features["input_word_ids"])
    self.assertIn("masked_lm_positions", out)
    self.assertNotIn("masked_lm_ids", out)
    out = distillation_task.model_features(features, with_positions=False)
    self.assertNotIn("masked_lm_positions", out)
    self.assertAllEqual(out["input_vocab_ids"], features["input_vocab_ids"])


class CopyTeacherLayersTest(tf.test.TestCase):

  def _models(self, student_hidden=16):
    teacher = models.DualVocabPretrainer(networks.DualVocabBertEncoder(
        teacher_vocab_size=30, student_vocab_size=12,
        student_embedding_width=8, hidden_size=16, num_layers=4,
        num_attention_heads=2, inner_dim=32, max_sequence_length=16,
        inner_activation="gelu"))
    student = models.MLMPretrainer(networks.PlainBertEncoder(
        vocab_size=30, hidden_size=student_hidden, num_layers=2,
        num_attention_heads=2, inner_dim=32, max_sequence_length=16,
        type_vocab_size=2, inner_activation="gelu"))
    return student, teacher

  def test_student_layer_m_is_teacher_layer_g_m(self):
    student, teacher = self._models()
    names = distillation_task.copy_teacher_layers(student, teacher, [2, 4])
    student_vars = bert_variables.encoder_variables(student.encoder_network)
    teacher_vars = bert_variables.encoder_variables(teacher.encoder_network)
    query = "attention/self/query/kernel"
    self.assertAllEqual(student_vars[f"bert/encoder/layer_0/{query}"],
                        teacher_vars[f"bert/encoder/layer_1/{query}"])
    self.assertAllEqual(student_vars[f"bert/encoder/layer_1/{query}"],
                        teacher_vars[f"bert/encoder/layer_3/{query}"])
    self.assertNotAllClose(student_vars[f"bert/encoder/layer_0/{query}"],
                           teacher_vars[f"bert/encoder/layer_0/{query}"])
    self.assertAllEqual(student.encoder_network.get_embedding_table(),
                        teacher.encoder_network.get_embedding_table())
    self.assertAllEqual(student.masked_lm.dense.kernel,
                        teacher.masked_lm.dense.kernel)
    self.assertIn("cls/predictions/output_bias", names)

  def test_other_widths_are_refused(self):
    student, teacher = self._models(student_hidden=8)
    with self.assertRaisesRegex(ValueError, "teacher's width"):
      distillation_task.copy_teacher_layers(student, teacher, [2, 4])


class DistillationTaskTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "distillation_task")
    cls.teacher_dir = distillation_testing.tiny_teacher(
        os.path.join(root, "teacher"))

  def _student(self, **kwargs):
    return student_spec.StudentSpec(num_layers=2, hidden_size=16,
                                    num_attention_heads=2, **kwargs)

  def _teacher(self):
    return teacher_spec.TeacherSpec(checkpoint=self.teacher_dir)

  def test_the_baselines_refuse_a_stage1_table(self):
    with self.assertRaisesRegex(ValueError, "reads the teacher's vocabulary"):
      distilbert.DistilBertTask(
          student=self._student(init_checkpoint="/tmp/stage1"),
          teacher=self._teacher(), inputs=distillation_testing.tiny_inputs())

  def test_encoder_config_rebuilds_the_student(self):
    task = distilbert.DistilBertTask(
        alpha_distill=0.0, student=self._student(), teacher=self._teacher(),
        inputs=distillation_testing.tiny_inputs())
    model = task.build_model()
    configs = task.encoder_configs(model)
    self.assertEqual(list(configs), ["student_encoder"])
    rebuilt = networks.PlainBertEncoder(**configs["student_encoder"])
    self.assertEqual(rebuilt.count_params(),
                     model.student.encoder_network.count_params())

  def test_distilbert_refuses_a_fresh_head_when_it_builds(self):
    task = distilbert.DistilBertTask(
        student=self._student(), teacher=self._teacher(),
        inputs=distillation_testing.tiny_inputs())
    with self.assertRaisesRegex(ValueError, "soft targets would be noise"):
      task.build_model()
    # Without soft targets the same teacher is fine.
    task = distilbert.DistilBertTask(
        alpha_distill=0.0, student=self._student(), teacher=self._teacher(),
        inputs=distillation_testing.tiny_inputs())
    model = task.build_model()
    self.assertEqual(list(model.projections), ["hidden"])
    # The student and the 16 -> 32 map train; the teacher does not.
    trained = {id(v) for v in model.trainable_variables}
    expected = model.student.trainable_variables + (
        model.projections["hidden"].trainable_variables)
    self.assertEqual(trained, {id(v) for v in expected})
    self.assertEqual(model.projections["hidden"].count_params(), 16 * 32 + 32)


if __name__ == "__main__":
  tf.test.main()
