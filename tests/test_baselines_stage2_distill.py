"""Stage II with cross-vocabulary distillation through the trainer, and the
shipped gin configs of the distillation tasks (parse, dry run)."""

import gin
import numpy as np
import pytest
import tensorflow as tf

from mixvocab_testing import distillation_testing
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.distillation import stage2_distill
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

CPU_CONFIGS = ("distilbert_small.gin", "tinybert_small.gin", "pkd_small.gin",
               "stage2_distill_small.gin")
TPU_CONFIGS = ("distilbert_paper.gin", "tinybert_paper.gin", "pkd_paper.gin",
               "stage2_distill_paper.gin")


@pytest.fixture(autouse=True)
def clear_gin():
  gin.clear_config()
  yield
  gin.clear_config()


def test_trains_from_the_stage1_table_and_teacher(tmp_path):
  teacher_dir = distillation_testing.tiny_teacher(str(tmp_path / "teacher"))
  stage1_dir, stage1_teacher = distillation_testing.write_stage1_run(
      str(tmp_path / "stage1"), teacher_dir, 16)
  task = stage2_distill.Stage2DistillTask(
      soft_target_weight=1.0, hidden_weight=1.0, attention_weight=1.0,
      student=student_spec.StudentSpec(
          num_layers=2, hidden_size=16, num_attention_heads=2,
          init_checkpoint=stage1_dir),
      teacher=teacher_spec.TeacherSpec(checkpoint=teacher_dir),
      inputs=distillation_testing.tiny_inputs())
  trainer = trainer_lib.Trainer(
      model_dir=str(tmp_path / "run"), task=task, train_steps=2, log_every=1,
      optimization=optimization.optimization_config(train_steps=2))
  records = trainer.train()
  scalars = records[-1].scalars
  for name in ("distill/kl", "distill/hidden_mse", "distill/attention_mse",
               "student_mlm/loss", "teacher_student_mlm/accuracy"):
    assert np.isfinite(scalars[name]), name
  np.testing.assert_allclose(
      scalars["loss"], scalars["student_mlm/loss"] + scalars["distill/kl"]
      + scalars["distill/hidden_mse"] + scalars["distill/attention_mse"],
      rtol=1e-4)
  # The teacher is the stage I run, frozen.
  np.testing.assert_array_equal(
      trainer.model.teacher.encoder_network.get_student_embedding_table(),
      stage1_teacher.encoder_network.get_student_embedding_table())
  # Fine-tuning reads its student encoder as it reads a stage II one, from
  # the config written beside the checkpoint or from the variables.
  path = tf.train.latest_checkpoint(str(tmp_path / "run"))
  for config in (finetune_task.encoder_config_from_run(path),
                 finetune_task.encoder_config_from_checkpoint(path)):
    assert (config["hidden_size"], config["num_layers"]) == (16, 2)
    assert config["vocab_size"] == len(task.vocab("student"))


@pytest.mark.parametrize("name", CPU_CONFIGS + TPU_CONFIGS)
def test_shipped_config_parses(name):
  # The stage I run, required by all but tinybert's (no default).
  gin_utils.parse([name], ["Trainer.train_steps = 7",
                           "STAGE1_DIR = '/runs/stage1'"])
  assert gin.query_parameter("Trainer.train_steps") == 7
  task = gin.query_parameter("Trainer.task")
  assert task in name


def test_cpu_configs_dry_run_with_a_tiny_teacher(tmp_path):
  teacher_dir = distillation_testing.tiny_teacher(str(tmp_path / "teacher"))
  stage1_dir, _ = distillation_testing.write_stage1_run(
      str(tmp_path / "stage1"), teacher_dir, 16)
  for name in CPU_CONFIGS:
    gin.clear_config()
    task = name[:-len("_small.gin")]
    bindings = [f"TeacherSpec.checkpoint = '{teacher_dir}'",
                "StudentSpec.hidden_size = 16",
                "StudentSpec.num_layers = 2",
                "StudentSpec.num_attention_heads = 2",
                "MlmInputs.seq_length = 32"]
    if task != "tinybert":
      bindings.append(f"STAGE1_DIR = '{stage1_dir}'")
    gin_utils.parse([name], bindings)
    report = trainer_lib.Trainer(model_dir=str(tmp_path / task)).dry_run()
    assert "All files the run needs are present." in report, report
    assert f"Task: {task}" in report
