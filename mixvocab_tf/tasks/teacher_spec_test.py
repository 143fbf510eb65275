"""Tests of TeacherSpec: where a teacher comes from, and how it is loaded."""

import json
import os
import shutil

import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import checkpointing
from mixvocab_tf.tasks import teacher_spec
from mixvocab_testing import distillation_testing


def _fingerprint(path):
  return text_lib.vocab_fingerprint(text_lib.load_vocab(path))


class TeacherSpecTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = os.path.join(tf.compat.v1.test.get_temp_dir(), "teacher_spec")
    cls.root = root
    cls.teacher_dir = distillation_testing.tiny_teacher(
        os.path.join(root, "teacher"))
    cls.stage1_dir, cls.stage1_teacher = distillation_testing.write_stage1_run(
        os.path.join(root, "stage1"), cls.teacher_dir, 16)
    cls.fingerprints = {
        "teacher": _fingerprint(os.path.join(cls.teacher_dir, "vocab.txt")),
        "student": _fingerprint(assets.default_student_vocab())}

  def test_vocab_is_beside_the_checkpoint(self):
    spec = teacher_spec.TeacherSpec(checkpoint=self.teacher_dir)
    self.assertEqual(spec.vocab_path,
                     os.path.join(self.teacher_dir, "vocab.txt"))
    self.assertEqual(teacher_spec.vocab_beside("/b/bert_model.ckpt"),
                     "/b/vocab.txt")

  def test_pretrained_teacher_without_a_head_gives_no_soft_targets(self):
    spec = teacher_spec.TeacherSpec(checkpoint=self.teacher_dir)
    teacher = spec.build(100, 16, {})
    self.assertTrue(spec.loaded)
    self.assertFalse(teacher.trainable)
    self.assertEmpty(teacher.trainable_variables)
    with self.assertRaisesRegex(ValueError, "has none .* stage I"):
      spec.require_trained_head("teacher", "distilbert",
                                "DistilBertTask.alpha_distill")

  def test_stage1_run_gives_its_weights_and_trained_heads(self):
    spec = teacher_spec.TeacherSpec(checkpoint=self.teacher_dir,
                                    stage1_checkpoint=self.stage1_dir)
    teacher = spec.build(5, 3, self.fingerprints)
    # The table's shape comes from the run, not from the arguments.
    saved = self.stage1_teacher.encoder_network
    self.assertAllEqual(teacher.encoder_network.get_student_embedding_table(),
                        saved.get_student_embedding_table())
    self.assertAllEqual(teacher.student_masked_lm.dense.kernel,
                        self.stage1_teacher.student_masked_lm.dense.kernel)
    self.assertEqual(spec.trained_heads, {"teacher": True, "student": True})
    spec.require_trained_head("student", "stage2_distill", "x")

  def test_stage1_run_with_another_vocabulary_is_refused(self):
    spec = teacher_spec.TeacherSpec(checkpoint=self.teacher_dir,
                                    stage1_checkpoint=self.stage1_dir)
    with self.assertRaises(checkpointing.VocabularyMismatchError):
      spec.build(5, 3, {"student": "0" * 64})

  def test_missing_teacher_is_listed_and_blocks_training(self):
    spec = teacher_spec.TeacherSpec(checkpoint="/nonexistent/teacher",
                                    stage1_checkpoint="/nonexistent/stage1")
    self.assertEqual(sorted(spec.missing_files()),
                     ["stage I teacher checkpoint", "teacher checkpoint"])
    with self.assertRaisesRegex(FileNotFoundError, "not loaded"):
      spec.require_loaded("distilbert")
    with self.assertRaisesRegex(FileNotFoundError,
                                "not found: /nonexistent/teacher"):
      spec.load_pretrained(None)

  def test_stage1_encoder_config_replaces_the_pretrained_checkpoint(self):
    # A stage I run that wrote its teacher's config needs neither the
    # pretrained checkpoint nor its config file: sizes come from the JSON.
    stage1_dir = os.path.join(self.root, "stage1_with_config")
    shutil.copytree(self.stage1_dir, stage1_dir, dirs_exist_ok=True)
    config = self.stage1_teacher.encoder_network.get_config()
    checkpointing.write_encoder_configs(
        stage1_dir, {teacher_spec.TEACHER_ENCODER_KEY: config})
    spec = teacher_spec.TeacherSpec(checkpoint="/nonexistent/teacher",
                                    stage1_checkpoint=stage1_dir)
    self.assertEqual(spec.missing_files(), {})
    kwargs, source = spec.encoder_config()
    self.assertIn("encoder_config.json", source)
    self.assertEqual((kwargs["vocab_size"], kwargs["hidden_size"],
                      kwargs["num_layers"]),
                     (config["teacher_vocab_size"], 32, 2))
    self.assertEqual(spec.student_table_shape((1, 1)),
                     [config["student_vocab_size"], 16])
    teacher = spec.build(1, 1, self.fingerprints)
    self.assertTrue(spec.loaded)
    self.assertAllEqual(teacher.encoder_network.get_embedding_table(),
                        self.stage1_teacher.encoder_network
                        .get_embedding_table())

  def test_without_checkpoint_or_config_the_dims_are_bert_large(self):
    spec = teacher_spec.TeacherSpec(checkpoint="/nonexistent")
    kwargs, source = spec.encoder_config()
    self.assertIn("built-in BERT-LARGE", source)
    self.assertEqual((kwargs["num_layers"], kwargs["hidden_size"]), (24, 1024))

  def test_a_config_file_gives_the_dims_for_a_dry_run(self):
    path = os.path.join(self.root, "bert_config.json")
    with open(os.path.join(self.teacher_dir, "config.json")) as f:
      config = json.load(f)
    with open(path, "w") as f:
      json.dump(config, f)
    spec = teacher_spec.TeacherSpec(checkpoint="/nonexistent", config=path)
    teacher = spec.build_architecture(10, 8)
    self.assertIsInstance(teacher.encoder_network,
                          networks.DualVocabBertEncoder)
    self.assertEqual(teacher.encoder_network.get_config()["hidden_size"], 32)

  def test_pretrained_weights_load_into_a_plain_encoder(self):
    # Fine-tuning the teacher reads the same checkpoint into a plain encoder.
    spec = teacher_spec.TeacherSpec(checkpoint=self.teacher_dir)
    encoder = networks.PlainBertEncoder(**spec.encoder_config()[0])
    self.assertFalse(spec.load_pretrained(encoder))
    teacher = spec.build(10, 8, {})
    self.assertAllEqual(encoder.get_embedding_table(),
                        teacher.encoder_network.get_embedding_table())


if __name__ == "__main__":
  tf.test.main()
