"""Tests for reading google-research/bert checkpoints into the common form."""

import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.models.teacher_formats import google_research

_CONFIG = testing_utils.tiny_bert_config()  # vocab 100, hidden 32, 2 layers.


class GoogleResearchTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.params = testing_utils.random_bert_params(_CONFIG, seed=0)

  def _new_dir(self):
    return tempfile.mkdtemp(dir=self.get_temp_dir())

  def _write(self, extra_variables=None):
    directory = self._new_dir()
    prefix = testing_utils.write_google_checkpoint(
        directory, self.params, _CONFIG, extra_variables=extra_variables)
    return directory, prefix

  def test_reads_model_weights_without_slots_or_nsp(self):
    # Real google checkpoints also hold optimizer slots and the NSP head.
    directory, prefix = self._write(extra_variables={
        "bert/embeddings/word_embeddings/adam_m": np.ones((100, 32)),
        "bert/pooler/dense/kernel/Adam": np.ones((32, 32)),
        "bert/pooler/dense/kernel/Adam_1": np.ones((32, 32)),
        "cls/seq_relationship/output_bias": np.zeros(2),
        "global_step": np.array(7, np.int64)})
    expected = testing_utils.google_variables(self.params)
    for path in (directory, prefix):
      checkpoint = google_research.read_checkpoint(path)
      self.assertEqual(checkpoint.format, "google")
      self.assertEqual(checkpoint.path, path)
      self.assertCountEqual(checkpoint.weights, expected)
      for name, value in expected.items():
        self.assertEqual(checkpoint.weights[name].dtype, np.float32)
        np.testing.assert_array_equal(checkpoint.weights[name], value,
                                      err_msg=name)
    self.assertEqual(checkpoint.encoder_config["num_layers"], 2)
    # google-research/bert's "gelu" is the tanh approximation.
    self.assertEqual(checkpoint.encoder_config["inner_activation"],
                     "Text>gelu")
    config = google_research.read_config(directory)
    self.assertEqual(config["inner_activation"], "Text>gelu")
    self.assertEqual(config["hidden_size"], 32)

  def test_checkpoint_prefix_of_each_layout(self):
    directory, prefix = self._write()
    self.assertEqual(google_research.checkpoint_prefix(directory), prefix)
    self.assertEqual(google_research.checkpoint_prefix(prefix), prefix)
    # A re-saved checkpoint under another name, without a `checkpoint` file.
    renamed = self._new_dir()
    for name in os.listdir(directory):
      if name == "checkpoint":
        continue
      shutil.copy(os.path.join(directory, name),
                  os.path.join(renamed, name.replace("bert_model", "model")))
    self.assertEqual(google_research.checkpoint_prefix(renamed),
                     os.path.join(renamed, "model.ckpt"))
    with self.assertRaisesRegex(ValueError, "No TF checkpoint found"):
      google_research.checkpoint_prefix(self._new_dir())

  def test_is_checkpoint(self):
    directory, prefix = self._write()
    self.assertTrue(google_research.is_checkpoint(directory))
    self.assertTrue(google_research.is_checkpoint(prefix))
    os.remove(os.path.join(directory, "bert_config.json"))
    self.assertFalse(google_research.is_checkpoint(directory))
    self.assertFalse(google_research.is_checkpoint(prefix))

  def test_bert_large_config(self):
    config = google_research.encoder_config(
        google_research.BERT_LARGE_CONFIG, "built-in BERT-LARGE")
    self.assertEqual(
        (config["num_layers"], config["hidden_size"],
         config["num_attention_heads"], config["inner_dim"],
         config["vocab_size"], config["inner_activation"]),
        (24, 1024, 16, 4096, 30522, "Text>gelu"))


if __name__ == "__main__":
  tf.test.main()
