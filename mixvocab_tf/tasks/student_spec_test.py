"""Tests of StudentSpec and the stage I student table it starts from."""

import os
import tempfile

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import checkpointing
from mixvocab_tf.tasks import student_spec


def _fingerprint():
  return text_lib.vocab_fingerprint(
      text_lib.load_vocab(assets.default_student_vocab()))


class StudentSpecTest(tf.test.TestCase):

  def test_preset_and_overrides(self):
    spec = student_spec.StudentSpec(preset="L6-H96", num_layers=2,
                                    dropout_rate=0.0)
    config = spec.encoder_config(seq_length=1024, return_word_embeddings=True)
    self.assertEqual((config["num_layers"], config["hidden_size"],
                      config["num_attention_heads"]), (2, 96, 4))
    self.assertEqual((config["output_dropout"], config["attention_dropout"]),
                     (0.0, 0.0))
    self.assertEqual(config["max_sequence_length"], 1024)
    self.assertTrue(config["return_word_embeddings"])
    self.assertEqual(spec.encoder_config(seq_length=64)["max_sequence_length"],
                     512)
    self.assertEqual(spec.vocab_path, assets.default_student_vocab())

  def test_bad_sizes_are_refused_when_configured(self):
    with self.assertRaisesRegex(ValueError, "preset must be one of"):
      student_spec.StudentSpec(preset="L6-H7")
    with self.assertRaisesRegex(ValueError, "hidden_size must be given"):
      student_spec.StudentSpec(preset=None, num_layers=2)

  def test_build_gives_a_student_of_the_config(self):
    spec = student_spec.StudentSpec(preset=None, num_layers=2, hidden_size=16,
                                    num_attention_heads=2)
    student = spec.build(spec.encoder_config(seq_length=32), vocab_size=50)
    encoder = student.encoder_network
    self.assertEqual(encoder.get_embedding_table().shape, (50, 16))
    self.assertLen(encoder.transformer_layers, 2)
    self.assertEqual(spec.describe(encoder.get_config()),
                     "student  2 x 16")
    # Without init_checkpoint there is nothing to load.
    self.assertIsNone(spec.initialize(student, _fingerprint()))
    self.assertEqual(spec.missing_files(), {})


class StudentTableTest(tf.test.TestCase):

  def _stage1_run(self, width=16, with_table=True, fingerprint=None):
    """A stage I model_dir: the table under its stable name, the metadata."""
    model_dir = tempfile.mkdtemp(dir=self.get_temp_dir())
    size = len(text_lib.load_vocab(assets.default_student_vocab()))
    table = np.random.RandomState(0).randn(size, width).astype(np.float32)
    items = ({student_spec.STUDENT_TABLE_KEY: tf.Variable(table)}
             if with_table else {"other": tf.Variable(1.0)})
    checkpointing.RunCheckpoint(
        model_dir, items, task_name="stage1",
        vocab_fingerprints={"student": fingerprint or _fingerprint()}
    ).save(1)
    return model_dir, table

  def _spec(self, init_checkpoint, hidden_size=16):
    return student_spec.StudentSpec(
        preset=None, num_layers=1, hidden_size=hidden_size,
        num_attention_heads=2, init_checkpoint=init_checkpoint)

  def _student(self, spec):
    size = len(text_lib.load_vocab(spec.vocab_path))
    return spec.build(spec.encoder_config(seq_length=32), size)

  def test_initialize_reads_the_stage1_table(self):
    model_dir, table = self._stage1_run()
    spec = self._spec(model_dir)
    student = self._student(spec)
    path = spec.initialize(student, _fingerprint())
    self.assertEqual(path, os.path.join(model_dir, "ckpt-1"))
    self.assertAllEqual(student.encoder_network.get_embedding_table(), table)
    self.assertEqual(student_spec.student_table_shape(path),
                     list(table.shape))

  def test_a_checkpoint_without_a_student_table(self):
    model_dir, _ = self._stage1_run(with_table=False)
    spec = self._spec(model_dir)
    with self.assertRaisesRegex(ValueError, "holds no stage I student table"):
      spec.initialize(self._student(spec), _fingerprint())

  def test_another_width_or_vocabulary_is_refused(self):
    model_dir, _ = self._stage1_run(width=8)
    spec = self._spec(model_dir)
    with self.assertRaisesRegex(ValueError, "student_embedding_width"):
      spec.initialize(self._student(spec), _fingerprint())
    model_dir, _ = self._stage1_run(fingerprint="0" * 64)
    spec = self._spec(model_dir)
    with self.assertRaises(checkpointing.VocabularyMismatchError):
      spec.initialize(self._student(spec), _fingerprint())

  def test_a_missing_run_is_listed(self):
    spec = self._spec("/nonexistent/stage1")
    self.assertIn("stage I checkpoint", spec.missing_files())
    self.assertIn("student table from /nonexistent/stage1",
                  spec.describe(spec.encoder_config(seq_length=32)))


if __name__ == "__main__":
  tf.test.main()
