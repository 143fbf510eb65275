"""TinyBERT general distillation and PKD through the trainer (tiny teacher,
CPU): each trains its student and the learned maps, and only them."""

import numpy as np
import pytest

from mixvocab_testing import distillation_testing
from mixvocab_tf.tasks.distillation import pkd
from mixvocab_tf.tasks.distillation import tinybert
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

def _student():
  return student_spec.StudentSpec(num_layers=2, hidden_size=16,
                                  num_attention_heads=2)


def _teacher(runs, stage1=False):
  return teacher_spec.TeacherSpec(
      checkpoint=runs["teacher_dir"],
      stage1_checkpoint=runs["stage1_dir"] if stage1 else None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  root = tmp_path_factory.mktemp("tinybert_pkd")
  teacher_dir = distillation_testing.tiny_teacher(str(root / "teacher"))
  stage1_dir, _ = distillation_testing.write_stage1_run(
      str(root / "stage1"), teacher_dir, 16)
  return dict(root=root, teacher_dir=teacher_dir, stage1_dir=stage1_dir)


def _train(model_dir, task, steps=2):
  trainer = trainer_lib.Trainer(
      model_dir=model_dir, task=task, train_steps=steps, log_every=1,
      optimization=optimization.optimization_config(train_steps=steps))
  records = trainer.train()
  return trainer, records


def test_tinybert_distils_a_teacher_without_an_mlm_head(runs):
  # General distillation needs no prediction layer: the pretrained tiny
  # teacher (no head, as MiniLM) is enough.
  task = tinybert.TinyBertTask(student=_student(), teacher=_teacher(runs),
                               inputs=distillation_testing.tiny_inputs())
  trainer, records = _train(str(runs["root"] / "tinybert"), task)
  model = trainer.model
  assert task.layer_map == [1, 2]
  assert sorted(model.projections) == ["embedding", "hidden"]
  scalars = records[-1].scalars
  np.testing.assert_allclose(
      scalars["loss"], scalars["distill/embedding_mse"]
      + scalars["distill/hidden_mse"] + scalars["distill/attention_mse"],
      rtol=1e-4)
  # Only the student and W_e, W_h train; the teacher keeps its weights.
  trained = {id(v) for v in trainer.trainable_variables}
  assert not trained & {id(v) for v in model.teacher.variables}
  assert {id(v) for v in model.projections["embedding"].variables} <= trained
  # The teacher after training is the checkpoint's, as loaded anew.
  table = model.teacher.encoder_network.get_embedding_table()
  fresh = tinybert.TinyBertTask(student=_student(), teacher=_teacher(runs),
                                inputs=distillation_testing.tiny_inputs()
                                ).build_model()
  np.testing.assert_array_equal(
      table.numpy(), fresh.teacher.encoder_network.get_embedding_table())


def test_pkd_trains_on_soft_targets_and_patient_cls_states(runs):
  task = pkd.PkdTask(student=_student(), teacher=_teacher(runs, stage1=True),
                     inputs=distillation_testing.tiny_inputs())
  _, records = _train(str(runs["root"] / "pkd"), task)
  scalars = records[-1].scalars
  np.testing.assert_allclose(
      scalars["loss"], 0.5 * scalars["student_mlm/loss"]
      + 0.5 * scalars["distill/soft_cross_entropy"]
      + 100.0 * scalars["distill/patient"], rtol=1e-4)
  # Mean over 1 intermediate layer and 32 dimensions of values in [0, 4].
  assert 0.0 < scalars["distill/patient"] <= 4.0 / 32


def test_pkd_needs_a_teacher_with_a_trained_head(runs):
  task = pkd.PkdTask(student=_student(), teacher=_teacher(runs),
                     inputs=distillation_testing.tiny_inputs())
  with pytest.raises(ValueError, match="PkdTask.alpha = 0"):
    task.build_model()
  with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
    pkd.PkdTask(alpha=1.5)
