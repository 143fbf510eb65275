"""Tests of the stage I task: building the teacher, loading it, what it saves."""

import pytest
import json
import os

import numpy as np
import tensorflow as tf

from mixvocab_tf import networks
from mixvocab_tf.core import checkpointing
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_testing import trainer_testing as testing


class Stage1TaskTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.teacher_dir = testing.write_tiny_teacher(
        os.path.join(tf.compat.v1.test.get_temp_dir(), "teacher"))

  def _task(self, **kwargs):
    kwargs.setdefault("teacher_checkpoint", self.teacher_dir)
    return stage1.Stage1Task(
        student_embedding_width=16,
        inputs=mlm_inputs.MlmInputs(global_batch_size=4, seq_length=32,
                                    max_predictions=5,
                                    max_teacher_predictions=3),
        **kwargs)

  def test_teacher_is_loaded_and_the_student_side_is_new(self):
    task = self._task()
    model = task.build_model()
    self.assertIsInstance(model.encoder_network, networks.DualVocabBertEncoder)
    task.initialize(model)
    from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
    weights = safetensors_numpy.load_file(
        os.path.join(self.teacher_dir, "model.safetensors"))
    self.assertAllClose(model.encoder_network.get_embedding_table(),
                        weights["embeddings.word_embeddings.weight"])
    self.assertEqual(
        model.encoder_network.get_student_embedding_table().shape.as_list(),
        [len(task.vocab("student")), 16])
    items = task.checkpoint_items(model)
    self.assertIs(items[stage1.STUDENT_TABLE_KEY],
                  model.encoder_network.get_student_embedding_table())
    self.assertIn(stage1.UP_PROJECTION_KEY, items)
    self.assertEqual(set(task.vocab_fingerprints()), {"teacher", "student"})

  def test_encoder_config_lets_later_stages_rebuild_the_teacher(self):
    task = self._task()
    model = task.build_model()
    config = task.encoder_configs(model)[teacher_spec.TEACHER_ENCODER_KEY]
    # Through JSON, as the trainer writes it beside the checkpoints.
    directory = self.get_temp_dir()
    checkpointing.write_encoder_configs(
        directory, {teacher_spec.TEACHER_ENCODER_KEY: config})
    read = checkpointing.read_encoder_config(directory,
                                             teacher_spec.TEACHER_ENCODER_KEY)
    rebuilt = networks.DualVocabBertEncoder(**read)
    self.assertEqual(rebuilt.count_params(),
                     model.encoder_network.count_params())
    self.assertEqual(read["student_embedding_width"], 16)

  def test_missing_teacher_is_reported_and_refused(self):
    task = self._task(teacher_checkpoint="/nonexistent/teacher",
                      teacher_config=os.path.join(self.teacher_dir,
                                                  "config.json"),
                      teacher_vocab=os.path.join(self.teacher_dir,
                                                 "vocab.txt"))
    self.assertIn("teacher checkpoint", task.missing_files())
    model = task.build_model()  # Dims from the config file.
    with self.assertRaisesRegex(FileNotFoundError,
                                "Teacher checkpoint not found: /nonexistent"):
      task.initialize(model)

  def test_without_checkpoint_or_config_the_dims_are_bert_large(self):
    kwargs, source = stage1.teacher_encoder_config("/nonexistent", None)
    self.assertIn("built-in BERT-LARGE", source)
    self.assertEqual((kwargs["num_layers"], kwargs["hidden_size"],
                      kwargs["num_attention_heads"], kwargs["inner_dim"],
                      kwargs["vocab_size"]), (24, 1024, 16, 4096, 30522))

  def test_config_file_gives_the_dimensions_without_the_weights(self):
    config_path = os.path.join(self.get_temp_dir(), "bert_config.json")
    with open(config_path, "w") as f:
      json.dump(dict(stage1.BERT_LARGE_CONFIG, num_hidden_layers=3,
                     hidden_size=64, num_attention_heads=2,
                     intermediate_size=128), f)
    kwargs, source = stage1.teacher_encoder_config("/nonexistent", config_path)
    self.assertEqual(source, config_path)
    self.assertEqual((kwargs["num_layers"], kwargs["hidden_size"]), (3, 64))
    # google's "gelu" is the tanh approximation.
    self.assertEqual(kwargs["inner_activation"], "Text>gelu")

  def test_vocabulary_that_does_not_fit_the_teacher_is_refused(self):
    vocab_path = os.path.join(self.get_temp_dir(), "vocab.txt")
    with open(os.path.join(self.teacher_dir, "vocab.txt")) as f:
      tokens = f.read().split("\n")[:-1]
    with open(vocab_path, "w") as f:
      f.write("\n".join(tokens[:-1]) + "\n")
    task = self._task(teacher_vocab=vocab_path)
    with self.assertRaisesRegex(ValueError, r"has 30521 tokens but the teacher"):
      task.build_model()

  def test_a_frozen_teacher_trains_only_the_student_side_and_the_heads(self):
    task = self._task(train_teacher=False)
    model = task.build_model()
    encoder = model.encoder_network
    trained = {id(v) for v in task.trainable_variables(model)}
    self.assertIn(id(encoder.get_student_embedding_table()), trained)
    for v in encoder.up_projection.trainable_variables:
      self.assertIn(id(v), trained)
    self.assertNotIn(id(encoder.get_embedding_table()), trained)
    for v in encoder.bert_encoder.trainable_variables:
      self.assertNotIn(id(v), trained)
    # Both MLM heads (new: the teacher checkpoint has none) train.
    heads = [v for v in model.trainable_variables if v.name.startswith("cls/")]
    self.assertNotEmpty(heads)
    for v in heads:
      self.assertIn(id(v), trained)
    self.assertIn("teacher frozen", task.describe())
    everything = self._task().trainable_variables(task.build_model())
    self.assertLen(everything, len(model.trainable_variables))

  @pytest.mark.large
  def test_loss_is_finite_on_a_real_batch(self):
    task = self._task()
    model = task.build_model()
    features = next(iter(task.build_inputs()))
    loss, metrics = task.compute_loss(model, features, training=True)
    self.assertTrue(np.isfinite(loss.numpy()))
    self.assertGreater(metrics["teacher_mlm/loss"][1]
                       + metrics["student_mlm/loss"][1], 0)


if __name__ == "__main__":
  tf.test.main()
