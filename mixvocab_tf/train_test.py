"""Tests of the trainer binary's gin surface: every shipped config parses."""

import os

import gin
import tensorflow as tf

from mixvocab_tf import train  # Registers the tasks' and jobs' configurables.
from mixvocab_tf.core import gin_utils

_PRETRAINING_CONFIGS = ("stage1_cpu.gin", "stage2_cpu.gin", "nokd_cpu.gin",
                        "dual_cpu.gin", "stage1_tpu.gin", "stage2_tpu.gin",
                        "stage1_gpu.gin", "stage2_gpu.gin")


class ShippedConfigsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)
    # Later tests start `python -m mixvocab_tf.train` in the current
    # directory: left in a temporary one, they would run another installed
    # copy of the package instead of this checkout.
    self.addCleanup(os.chdir, os.getcwd())

  def test_shipped_configs_parse_by_bare_name_from_any_directory(self):
    os.chdir(self.get_temp_dir())
    for name in _PRETRAINING_CONFIGS:
      gin.clear_config()
      gin_utils.parse([name], ["Trainer.train_steps = 7"])
      self.assertEqual(gin.query_parameter("Trainer.train_steps"), 7)
    self.assertIn("stage1_tpu.gin", gin_utils.shipped_configs())

  def test_bare_names_and_includes_log_no_errors(self):
    os.chdir(self.get_temp_dir())
    # stage1_cpu.gin includes pretraining_base.gin by bare name.
    with self.assertNoLogs(level="ERROR"):
      gin_utils.parse(["stage1_cpu.gin"], [])

  def test_pretraining_configs_have_a_header_with_command_and_result(self):
    directory = os.path.join(os.path.dirname(gin_utils.__file__), "..",
                             "gin_configs")
    for name in _PRETRAINING_CONFIGS:
      with open(os.path.join(directory, name)) as f:
        header = f.read().split("\n\n")[0]
      self.assertIn("python -m mixvocab_tf.train", header, name)
      self.assertIn("Runs on:", header, name)
      self.assertIn("Expect", header, name)

  def test_unknown_task_names_suggest_the_registered_ones(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                r"(?s)'Stage1Tsk'.*Did you mean: Stage1Task"):
      gin_utils.parse([], ["Stage1Tsk.student_embedding_width = 3"])
    self.assertIn("stage1", train.base_task.registered_tasks())


if __name__ == "__main__":
  tf.test.main()
