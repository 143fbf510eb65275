"""Tests of gin parsing: the search path and the error messages."""

import gin
import tensorflow as tf

from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import trainer  # pylint: disable=unused-import

class GinUtilsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)

  def test_misspelt_parameter_suggests_the_right_one(self):
    with self.assertRaisesRegex(
        gin_utils.GinConfigError,
        r"(?s)'Trainer' doesn't have a parameter named 'train_stepz'.*"
        r"Did you mean: train_steps"):
      gin_utils.parse([], ["Trainer.train_stepz = 3"])

  def test_unknown_configurable_suggests_close_names(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                r"(?s)'Trainr'.*Did you mean: Trainer"):
      gin_utils.parse([], ["Trainr.train_steps = 3"])

  def test_missing_file_lists_the_shipped_configs(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                r"not found: 'stage9.gin'.*stage1_cpu.gin"):
      gin_utils.parse(["stage9.gin"], [])

  def test_syntax_error_is_a_config_error(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                "Bad gin configuration"):
      gin_utils.parse([], ["Trainer.train_steps = ("])


if __name__ == "__main__":
  tf.test.main()
