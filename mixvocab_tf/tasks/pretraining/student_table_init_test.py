"""Tests of stage I's warm start of the student table from the teacher's."""

import pytest
import os

import numpy as np
import tensorflow as tf

from mixvocab_tf import layers
from mixvocab_testing import trainer_testing as testing
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.tasks.pretraining import student_table_init

TEACHER_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "play", "jazz",
                  "j", "##a", "##zz", "##y", "x"]


class TeacherRowsTest(tf.test.TestCase):

  def test_shared_tokens_take_their_row_and_others_their_pieces_mean(self):
    table = np.arange(len(TEACHER_TOKENS) * 3, dtype=np.float32).reshape(-1, 3)
    student = ["[PAD]", "play", "##a", "jay", "##jazz", "%"]
    rows, shared = student_table_init.teacher_rows_of_student_tokens(
        table, TEACHER_TOKENS, student)
    index = {t: i for i, t in enumerate(TEACHER_TOKENS)}
    self.assertEqual(shared, 3)
    for i in (0, 1, 2):
      self.assertAllEqual(rows[i], table[index[student[i]]])
    # "jay" -> j ##a ##y; "##jazz" is cut as the word "jazz", a teacher token.
    self.assertAllClose(
        rows[3], table[[index["j"], index["##a"], index["##y"]]].mean(0))
    self.assertAllEqual(rows[4], table[index["jazz"]])
    # "%" has no piece but [UNK]: the mean of the table.
    self.assertAllClose(rows[5], table.mean(0))

  def test_a_table_of_another_size_is_refused(self):
    with self.assertRaisesRegex(ValueError, "12 tokens"):
      student_table_init.teacher_rows_of_student_tokens(
          np.zeros((5, 3)), TEACHER_TOKENS, ["play"])


class FactorizedTableTest(tf.test.TestCase):

  def test_full_width_reproduces_the_rows(self):
    rows = np.random.default_rng(0).normal(size=(40, 8))
    table, kernel, bias = student_table_init.factorized_student_table(rows, 8)
    self.assertAllClose(table @ kernel + bias, rows, atol=1e-5)
    self.assertAllClose(kernel @ kernel.T, np.eye(8), atol=1e-5)
    self.assertAllClose(table.mean(0), np.zeros(8), atol=1e-5)

  def test_narrow_width_is_the_best_low_rank_approximation(self):
    rng = np.random.default_rng(1)
    # Rank 3 plus small noise: a width-3 table keeps nearly all of it.
    rows = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 10)) + 0.01 * (
        rng.normal(size=(50, 10)))
    table, kernel, bias = student_table_init.factorized_student_table(rows, 3)
    self.assertEqual(table.shape, (50, 3))
    self.assertEqual(kernel.shape, (3, 10))
    error = np.linalg.norm(table @ kernel + bias - rows)
    self.assertLess(error, 0.02 * np.linalg.norm(rows - rows.mean(0)))
    # No other rank-3 affine map does better than the SVD's (Eckart-Young):
    # a random one is far worse.
    other = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 10)) + bias
    self.assertGreater(np.linalg.norm(other - rows), 10 * error)

  def test_width_wider_than_the_teacher_is_refused(self):
    with self.assertRaisesRegex(ValueError, r"width must be in \[1, 4\]"):
      student_table_init.factorized_student_table(np.zeros((6, 4)), 5)

  def test_fewer_tokens_than_width(self):
    rows = np.random.default_rng(2).normal(size=(3, 6))
    table, kernel, bias = student_table_init.factorized_student_table(rows, 5)
    self.assertAllClose(table @ kernel + bias, rows, atol=1e-5)


class Stage1WarmStartTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.teacher_dir = testing.write_tiny_teacher(
        os.path.join(tf.compat.v1.test.get_temp_dir(), "teacher"))

  def _task(self, width, init):
    return stage1.Stage1Task(
        teacher_checkpoint=self.teacher_dir, student_embedding_width=width,
        student_table_init=init,
        inputs=mlm_inputs.MlmInputs(global_batch_size=4, seq_length=32,
                                    max_predictions=5,
                                    max_teacher_predictions=3))

  def _embed_both_ways(self, task, model, tokens):
    """Each token embedded as a teacher token and as a student token."""
    teacher_ids = [task.vocab("teacher").index(t) for t in tokens]
    student_ids = [task.vocab("student").index(t) for t in tokens]
    embedding = model.encoder_network.embedding_layer
    as_teacher = embedding(dict(
        input_word_ids=tf.constant([teacher_ids]),
        input_vocab_ids=tf.zeros([1, len(tokens)], tf.int32)))
    as_student = embedding(dict(
        input_word_ids=tf.constant([student_ids]),
        input_vocab_ids=tf.fill([1, len(tokens)], layers.STUDENT_VOCAB_ID)))
    return as_teacher.numpy(), as_student.numpy()

  def test_at_the_teachers_width_a_shared_token_reads_the_teachers_row(self):
    width = testing.TINY_HIDDEN
    task = self._task(width, "teacher")
    model = task.build_model()
    task.initialize(model)
    tokens = ["play", "the", "##s", "music"]
    as_teacher, as_student = self._embed_both_ways(task, model, tokens)
    self.assertAllClose(as_student, as_teacher, atol=1e-4)

  @pytest.mark.large
  def test_random_init_does_not_and_narrow_init_comes_close(self):
    errors = {}
    for init in ("random", "teacher"):
      task = self._task(testing.TINY_HIDDEN // 2, init)
      model = task.build_model()
      task.initialize(model)
      teacher_vocab = set(task.vocab("teacher"))
      tokens = [t for t in task.vocab("student") if t in teacher_vocab][:500]
      as_teacher, as_student = self._embed_both_ways(task, model, tokens)
      errors[init] = np.linalg.norm(as_student - as_teacher)
    # The tiny teacher's rows are random, so half the width keeps about
    # half their variance (a trained teacher's much more).
    self.assertLess(errors["teacher"], 0.8 * errors["random"])

  def test_unknown_init_is_refused(self):
    with self.assertRaisesRegex(ValueError, "'random', 'teacher'.*'svd'"):
      self._task(16, "svd")


if __name__ == "__main__":
  tf.test.main()
