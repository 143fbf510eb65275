"""Tests of the distillation losses on small cases computed by hand."""

import math

import numpy as np
import tensorflow as tf

from mixvocab_tf.tasks.distillation import losses

LN2 = math.log(2.0)
LN3 = math.log(3.0)


class SoftTargetTest(tf.test.TestCase):

  def test_kl_and_cross_entropy_on_a_two_class_case(self):
    # Teacher [0, ln 3] -> p = (1/4, 3/4); student [0, 0] -> q = (1/2, 1/2).
    teacher = tf.constant([[0.0, LN3]])
    student = tf.constant([[0.0, 0.0]])
    # KL = 1/4 ln(1/2) + 3/4 ln(3/2); CE = -(1/4 + 3/4) ln(1/2) = ln 2.
    expected_kl = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    self.assertAllClose(losses.kl_divergence(teacher, student), [expected_kl])
    self.assertAllClose(losses.soft_cross_entropy(teacher, student), [LN2])
    # CE - KL is the teacher's entropy.
    entropy = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    self.assertAllClose(LN2 - expected_kl, entropy)

  def test_temperature_divides_the_logits(self):
    # At T = 2, [0, 2 ln 3] is the distribution (1/4, 3/4) of the case above.
    teacher = tf.constant([[0.0, 2 * LN3]])
    student = tf.constant([[4.0, 4.0]])
    expected_kl = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    self.assertAllClose(
        losses.kl_divergence(teacher, student, temperature=2.0), [expected_kl])
    self.assertAllClose(
        losses.soft_cross_entropy(teacher, student, temperature=2.0), [LN2])

  def test_identical_logits_give_zero_kl_and_keep_leading_axes(self):
    logits = tf.constant([[[1.0, 2.0, 3.0]], [[0.5, 0.5, -1.0]]])
    kl = losses.kl_divergence(logits, logits, temperature=3.0)
    self.assertEqual(kl.shape, [2, 1])
    self.assertAllClose(kl, np.zeros([2, 1]), atol=1e-6)

  def test_no_gradient_flows_to_the_teacher(self):
    teacher = tf.Variable([[0.0, 1.0]])
    student = tf.Variable([[1.0, 0.0]])
    with tf.GradientTape(persistent=True) as tape:
      kl = losses.kl_divergence(teacher, student)
      ce = losses.soft_cross_entropy(teacher, student)
    self.assertIsNone(tape.gradient(kl, teacher))
    self.assertIsNone(tape.gradient(ce, teacher))
    # d CE / d s = q - p = softmax([1, 0]) - softmax([0, 1]).
    e = math.e
    q = np.array([e / (1 + e), 1 / (1 + e)])
    self.assertAllClose(tape.gradient(ce, student), [q - q[::-1]])

  def test_bad_temperature(self):
    with self.assertRaisesRegex(ValueError, "temperature .* received 0"):
      losses.kl_divergence(tf.zeros([1, 2]), tf.zeros([1, 2]), temperature=0)


class HiddenStateTest(tf.test.TestCase):

  def test_cosine_distance(self):
    student = tf.constant([[1.0, 0.0], [2.0, 2.0], [0.0, -3.0]])
    teacher = tf.constant([[1.0, 1.0], [5.0, 5.0], [0.0, 1.0]])
    self.assertAllClose(losses.cosine_distance(student, teacher),
                        [1 - 1 / math.sqrt(2), 0.0, 2.0], atol=1e-6)

  def test_mean_squared_error_averages_the_feature_axis(self):
    student = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    teacher = tf.constant([[1.0, 0.0, 3.0, 0.0]])
    # (0 + 4 + 0 + 16) / 4.
    self.assertAllClose(losses.mean_squared_error(student, teacher), [5.0])

  def test_normalized_squared_error(self):
    # [3, 4] / 5 = [0.6, 0.8] and [0, 2] / 2 = [0, 1]: 0.36 + 0.04.
    student = tf.constant([[3.0, 4.0], [1.0, 0.0]])
    teacher = tf.constant([[0.0, 2.0], [-7.0, 0.0]])
    self.assertAllClose(losses.normalized_squared_error(student, teacher),
                        [0.4, 4.0])

  def test_masked_sum(self):
    total, count = losses.masked_sum([2.0, 3.0, 10.0], [1, 1, 0])
    self.assertAllClose([total, count], [5.0, 2.0])


class AttentionTest(tf.test.TestCase):

  def test_error_counts_only_pairs_of_real_tokens(self):
    # One example, one head, 3 positions of which the last is padding.
    student = tf.constant([[[[1.0, 2.0, 9.0],
                             [0.0, 1.0, 9.0],
                             [9.0, 9.0, 9.0]]]])
    teacher = tf.constant([[[[0.0, 2.0, 0.0],
                             [2.0, 1.0, 0.0],
                             [0.0, 0.0, 0.0]]]])
    total, count = losses.attention_score_error(student, teacher,
                                                tf.constant([[1, 1, 0]]))
    # Real pairs: (1-0)^2 + 0 + (0-2)^2 + 0 = 5 over 4 pairs.
    self.assertAllClose([total, count], [5.0, 4.0])

  def test_error_is_per_head(self):
    student = tf.zeros([1, 2, 2, 2])
    teacher = tf.concat([tf.ones([1, 1, 2, 2]), 3.0 * tf.ones([1, 1, 2, 2])],
                        axis=1)
    total, count = losses.attention_score_error(student, teacher,
                                                tf.ones([1, 2], tf.int32))
    self.assertAllClose(total / count, (1.0 + 9.0) / 2)

  def test_group_heads_averages_consecutive_heads(self):
    scores = tf.reshape(tf.range(6, dtype=tf.float32), [1, 6, 1, 1])
    grouped = losses.group_heads(scores, 2)
    self.assertAllClose(tf.reshape(grouped, [-1]), [1.0, 4.0])
    self.assertIs(losses.group_heads(scores, 6), scores)
    with self.assertRaisesRegex(ValueError, "multiple .* received 6 and 4"):
      losses.group_heads(scores, 4)


class LayerMapTest(tf.test.TestCase):

  def test_uniform(self):
    self.assertEqual(losses.uniform_layer_map(4, 12), [3, 6, 9, 12])
    self.assertEqual(losses.uniform_layer_map(6, 6), [1, 2, 3, 4, 5, 6])
    self.assertEqual(losses.uniform_layer_map(3, 4), [1, 2, 4])
    self.assertEqual(losses.uniform_layer_map(6, 12), [2, 4, 6, 8, 10, 12])

  def test_explicit_map_is_validated(self):
    self.assertEqual(losses.uniform_layer_map(2, 6, [5, 6]), [5, 6])
    with self.assertRaisesRegex(ValueError, r"increasing .* received \[6, 5\]"):
      losses.uniform_layer_map(2, 6, [6, 5])
    with self.assertRaisesRegex(ValueError, r"received \[1, 7\]"):
      losses.uniform_layer_map(2, 6, [1, 7])
    with self.assertRaisesRegex(ValueError, "received 4 and 2"):
      losses.uniform_layer_map(4, 2)


if __name__ == "__main__":
  tf.test.main()
