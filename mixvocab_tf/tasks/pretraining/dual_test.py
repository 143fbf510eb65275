"""Tests of dual training: one shared student table, three losses."""

import os

import numpy as np
import tensorflow as tf

from mixvocab_tf import layers
from mixvocab_tf.tasks.pretraining import dual
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_testing import trainer_testing as testing


def _batch(rng, vocab_size, vocab_tag, batch=2, length=16, predictions=3):
  vocab_ids = (rng.rand(batch, length) < 0.5).astype(np.int32) if (
      vocab_tag is None) else np.full((batch, length), vocab_tag, np.int32)
  masked_vocab = vocab_ids[:, :predictions]
  return {
      "input_word_ids": rng.randint(5, 1000, (batch, length)).astype(np.int32),
      "input_mask": np.ones((batch, length), np.int32),
      "input_type_ids": np.zeros((batch, length), np.int32),
      "input_vocab_ids": vocab_ids,
      "masked_lm_positions": np.tile(np.arange(predictions, dtype=np.int32),
                                     (batch, 1)),
      "masked_lm_ids": rng.randint(5, vocab_size,
                                   (batch, predictions)).astype(np.int32),
      "masked_lm_vocab_ids": masked_vocab,
      "masked_lm_weights": np.ones((batch, predictions), np.float32),
  }


class DualTaskTest(tf.test.TestCase):

  def test_student_reads_the_teachers_student_table(self):
    teacher_dir = testing.write_tiny_teacher(
        os.path.join(self.get_temp_dir(), "teacher"))
    task = dual.DualTask(
        teacher_checkpoint=teacher_dir, num_layers=2, hidden_size=16,
        num_attention_heads=2, projection="up", alpha=0.5,
        inputs=mlm_inputs.MlmInputs(global_batch_size=2, seq_length=16,
                                    max_predictions=3))
    model = task.build_model()
    task.initialize(model)
    table = model.teacher.encoder_network.get_student_embedding_table()
    self.assertIs(model.student.encoder_network.get_embedding_table(), table)
    self.assertIsInstance(model.projection, layers.SharedProjUp)
    # The shared table is one variable, trained once.
    self.assertLen([v for v in model.trainable_variables if v is table], 1)

    rng = np.random.RandomState(0)
    features = {"mixed": _batch(rng, 1000, None),
                "student": _batch(rng, 1000, 1)}
    with tf.GradientTape() as tape:
      loss, metrics = task.compute_loss(model, features, training=False)
    projection_loss = metrics["projection_loss"][0]
    teacher_loss = sum(metrics[f"teacher/{v}_mlm/loss"][0]
                       for v in ("teacher", "student"))
    student_loss = metrics["student/student_mlm/loss"][0]
    self.assertAllClose(
        loss, teacher_loss / 6 + student_loss / 6 + 0.5 * projection_loss,
        rtol=1e-5)
    grads = tape.gradient(loss, [table, model.projection.u])
    self.assertNotIn(None, grads)
    items = task.checkpoint_items(model)
    self.assertIs(items[stage1.STUDENT_TABLE_KEY], table)
    self.assertIs(items["student_encoder"], model.student.encoder_network)

  def test_layer_counts_must_match(self):
    teacher_dir = testing.write_tiny_teacher(
        os.path.join(self.get_temp_dir(), "teacher"))
    task = dual.DualTask(teacher_checkpoint=teacher_dir, num_layers=3,
                         hidden_size=16, num_attention_heads=2,
                         inputs=mlm_inputs.MlmInputs(global_batch_size=2,
                                                     seq_length=16,
                                                     max_predictions=3))
    with self.assertRaisesRegex(ValueError, r"received 3 \(student\) and 2"):
      task.build_model()

  def test_bad_projection_says_what_was_received(self):
    with self.assertRaisesRegex(ValueError, "projection .* 'sideways'"):
      dual.DualTask(projection="sideways")


if __name__ == "__main__":
  tf.test.main()
