"""Tests of the trainer binary's gin surface: every shipped config parses,
given the values its header says are required, and not without them."""

import os
import re

import gin
import tensorflow as tf

from mixvocab_tf import train  # Registers the tasks' and jobs' configurables.
from mixvocab_tf.core import base_task
from mixvocab_tf.core import gin_utils

_PRETRAINING_CONFIGS = ("stage1_small.gin", "stage2_small.gin",
                        "nokd_small.gin", "dual_small.gin", "stage1_paper.gin",
                        "stage2_paper.gin", "stage1_paper_gpu.gin",
                        "stage2_paper_gpu.gin")

#: What the stage II configs require (stage2_small.gin's STAGE1_DIR).
_STAGE1 = "STAGE1_DIR = '/runs/stage1'"


def _config_text(name):
  with open(gin_utils.find_config(name), encoding="utf-8") as f:
    return f.read()


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
      gin_utils.parse([name], ["Trainer.train_steps = 7", _STAGE1])
      self.assertEqual(gin.query_parameter("Trainer.train_steps"), 7)
    self.assertIn("stage1_paper.gin", gin_utils.shipped_configs())

  def test_bare_names_and_includes_log_no_errors(self):
    os.chdir(self.get_temp_dir())
    # stage1_small.gin includes pretraining_base.gin by bare name.
    with self.assertNoLogs(level="ERROR"):
      gin_utils.parse(["stage1_small.gin"], [])

  def test_every_shipped_config_parses_given_its_required_values(self):
    os.chdir(self.get_temp_dir())
    required = {}
    for name in gin_utils.shipped_configs():
      gin.clear_config()
      gin_utils.parse([name], [], require_all=False)
      required[name] = gin_utils.unbound_required()
      header = _config_text(name).split("\n\n")[0]
      for macro in required[name]:
        # Listed in the header, as t5x's gin files list theirs.
        self.assertIn("Required to be set:", header, name)
        self.assertIn(macro, header, name)
      gin.clear_config()
      gin_utils.parse([name], [f"{m} = '/given'" for m in required[name]])
      for macro in required[name]:
        self.assertEqual(gin.query_parameter(f"{macro}/gin.macro.value"),
                         "/given")
      if not required[name]:
        continue
      gin.clear_config()
      with self.assertRaisesRegex(
          gin_utils.GinConfigError,
          f"{required[name][0]} .*required.* add "
          f"--gin_bindings=\"{required[name][0]} = '...'\""):
        gin_utils.parse([name], [])
    # The stage I run of the stage II and distillation configs, the dataset
    # of the own-data job: no placeholder path that might exist.
    for name in ("stage2_small.gin", "stage2_distill_small.gin",
                 "pkd_small.gin", "distilbert_small.gin"):
      self.assertEqual(required[name], ["STAGE1_DIR"], name)
    for name in ("distill_snips_small.gin", "distill_glue_small.gin"):
      self.assertEqual(required[name], ["TEACHER_RUN"], name)
    self.assertEqual(required["own_data.gin"], ["DATA_DIR"])
    self.assertEqual(required["quickstart.gin"], [])

  def test_pretraining_configs_have_a_header_with_command_and_result(self):
    for name in _PRETRAINING_CONFIGS:
      header = _config_text(name).split("\n\n")[0]
      self.assertIn("python -m mixvocab_tf.train", header, name)
      self.assertIn("Runs on:", header, name)
      self.assertIn("Expect", header, name)

  def test_every_runnable_config_names_itself_in_its_command(self):
    for name in gin_utils.shipped_configs():
      folder = os.path.basename(os.path.dirname(gin_utils.find_config(name)))
      if folder == "base":  # Include-only fragments, not run on their own.
        continue
      header = _config_text(name).split("\n\n")[0]
      self.assertIn(f"--gin_file={name}", header, name)

  def test_no_config_names_an_old_config_name(self):
    for name in gin_utils.shipped_configs():
      text = _config_text(name)
      for old in gin_utils.RENAMED_CONFIGS:
        self.assertNotRegex(text, rf"(^|[^\w]){re.escape(old)}", name)

  def test_unknown_task_names_suggest_the_registered_ones(self):
    with self.assertRaisesRegex(gin_utils.GinConfigError,
                                r"(?s)'Stage1Tsk'.*Did you mean: Stage1Task"):
      gin_utils.parse([], ["Stage1Tsk.student_embedding_width = 3"])
    self.assertIn("stage1", base_task.registered_tasks())


if __name__ == "__main__":
  tf.test.main()
