"""Tests of the per-vocabulary masked-LM loss (Eq. 1 and Eq. 2)."""

import numpy as np
import tensorflow as tf

from mixvocab_tf.tasks.pretraining import mlm_task


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


class MlmLossTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    rng = np.random.RandomState(0)
    # Batch 2, 3 masked slots; teacher vocabulary 50, student vocabulary 10.
    self.teacher_logits = rng.randn(2, 3, 50).astype(np.float32)
    self.student_logits = rng.randn(2, 3, 10).astype(np.float32)
    self.features = {
        # Teacher ids up to 40 are out of the student softmax's range.
        "masked_lm_ids": np.array([[40, 3, 7], [9, 0, 0]], np.int32),
        "masked_lm_vocab_ids": np.array([[0, 1, 0], [1, 0, 0]], np.int32),
        "masked_lm_weights": np.array([[1, 1, 1], [1, 0, 0]], np.float32),
    }

  def _expected(self):
    ids = self.features["masked_lm_ids"]
    vocab = self.features["masked_lm_vocab_ids"]
    weights = self.features["masked_lm_weights"]
    sums = {0: [0.0, 0.0, 0.0], 1: [0.0, 0.0, 0.0]}
    for b in range(2):
      for p in range(3):
        if not weights[b, p]:
          continue
        logits = (self.teacher_logits if vocab[b, p] == 0
                  else self.student_logits)[b, p]
        entry = sums[vocab[b, p]]
        entry[0] -= _log_softmax(logits)[ids[b, p]]
        entry[1] += 1
        entry[2] += float(np.argmax(logits) == ids[b, p])
    return sums

  def test_each_token_is_scored_by_its_own_vocabulary(self):
    expected = self._expected()
    for vocab_id, logits in ((0, self.teacher_logits),
                             (1, self.student_logits)):
      loss_sum, count, correct = mlm_task.masked_lm_sums(
          logits, self.features, vocab_id)
      self.assertAllClose([loss_sum, count, correct], expected[vocab_id],
                          rtol=1e-5)

  def test_eq1_sums_both_vocabularies_over_all_masked_tokens(self):
    expected = self._expected()
    loss, metrics = mlm_task.mlm_loss(
        {"teacher_mlm_logits": self.teacher_logits,
         "student_mlm_logits": self.student_logits}, self.features)
    self.assertAllClose(loss, (expected[0][0] + expected[1][0]) / 4,
                        rtol=1e-5)
    self.assertAllClose(metrics["teacher_mlm/loss"],
                        [expected[0][0], 2.0], rtol=1e-5)
    self.assertAllClose(metrics["student_mlm/accuracy"],
                        [expected[1][2], 2.0], rtol=1e-5)

  def test_missing_head_is_a_clear_error(self):
    with self.assertRaisesRegex(KeyError, "no 'teacher_mlm_logits' output"):
      mlm_task.mlm_loss({"student_mlm_logits": self.student_logits},
                        self.features)


if __name__ == "__main__":
  tf.test.main()
