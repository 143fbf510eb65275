"""Tests of what the distillation tasks share: scores, layer copies, teachers."""

import os

import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.networks import bert_variables
from mixvocab_tf.tasks.distillation import distilbert
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.distillation import distillation_testing
from mixvocab_tf.core import checkpointing


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


class TeacherSourceTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "teacher_source")
    cls.teacher_dir = distillation_testing.tiny_teacher(
        os.path.join(root, "teacher"))
    cls.stage1_dir, cls.stage1_teacher = distillation_testing.write_stage1_run(
        os.path.join(root, "stage1"), cls.teacher_dir, 16)

  def _fingerprint(self, which):
    path = (os.path.join(self.teacher_dir, "vocab.txt") if which == "teacher"
            else None)
    from mixvocab_tf import data  # pylint: disable=g-import-not-at-top
    return text_lib.vocab_fingerprint(text_lib.load_vocab(
        path or data.default_student_vocab()))

  def test_pretrained_teacher_without_a_head_gives_no_soft_targets(self):
    source = distillation_task.TeacherSource(self.teacher_dir)
    teacher = source.build(100, 16, {})
    self.assertTrue(source.loaded)
    self.assertFalse(teacher.trainable)
    self.assertEmpty(teacher.trainable_variables)
    with self.assertRaisesRegex(ValueError, "has none .* stage I"):
      source.require_trained_head("teacher", "distilbert",
                                  "DistilBertTask.alpha_distill")

  def test_stage1_run_gives_its_weights_and_trained_heads(self):
    source = distillation_task.TeacherSource(
        self.teacher_dir, stage1_checkpoint=self.stage1_dir)
    teacher = source.build(
        5, 3, {"teacher": self._fingerprint("teacher"),
               "student": self._fingerprint("student")})
    # The table's shape comes from the run, not from the arguments.
    saved = self.stage1_teacher.encoder_network
    self.assertAllEqual(teacher.encoder_network.get_student_embedding_table(),
                        saved.get_student_embedding_table())
    self.assertAllEqual(teacher.student_masked_lm.dense.kernel,
                        self.stage1_teacher.student_masked_lm.dense.kernel)
    self.assertEqual(source.trained_heads, {"teacher": True, "student": True})
    source.require_trained_head("student", "stage2_distill", "x")

  def test_stage1_run_with_another_vocabulary_is_refused(self):
    source = distillation_task.TeacherSource(
        self.teacher_dir, stage1_checkpoint=self.stage1_dir)
    with self.assertRaises(checkpointing.VocabularyMismatchError):
      source.build(5, 3, {"student": "0" * 64})

  def test_missing_teacher_is_listed_and_blocks_training(self):
    source = distillation_task.TeacherSource(
        "/nonexistent/teacher", stage1_checkpoint="/nonexistent/stage1")
    self.assertEqual(sorted(source.missing_files()),
                     ["stage I teacher checkpoint", "teacher checkpoint"])
    with self.assertRaisesRegex(FileNotFoundError, "not loaded"):
      source.require_loaded("distilbert")

  def test_distilbert_refuses_a_fresh_head_when_it_builds(self):
    task = distilbert.DistilBertTask(
        teacher_checkpoint=self.teacher_dir, num_layers=2, hidden_size=16,
        num_attention_heads=2, inputs=distillation_testing.tiny_inputs())
    with self.assertRaisesRegex(ValueError, "soft targets would be noise"):
      task.build_model()
    # Without soft targets the same teacher is fine.
    task = distilbert.DistilBertTask(
        alpha_distill=0.0, teacher_checkpoint=self.teacher_dir, num_layers=2,
        hidden_size=16, num_attention_heads=2,
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
