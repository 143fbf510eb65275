"""DistilBERT through the trainer: trains, checkpoints the student only, resumes
with the teacher reloaded, and leaves an encoder that fine-tuning can read
(tiny teacher and stage I run, CPU)."""

import os

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.tasks.distillation import distilbert
from mixvocab_testing import distillation_testing
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large


def _trainer(model_dir, task, train_steps):
  return trainer_lib.Trainer(
      model_dir=model_dir, task=task, train_steps=train_steps, log_every=1,
      checkpoint_every=2, optimization=optimization.optimization_config(
          train_steps=train_steps))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  root = tmp_path_factory.mktemp("distilbert")
  teacher_dir = distillation_testing.tiny_teacher(str(root / "teacher"))
  stage1_dir, stage1_teacher = distillation_testing.write_stage1_run(
      str(root / "stage1"), teacher_dir, 16)
  return dict(root=root, teacher_dir=teacher_dir, stage1_dir=stage1_dir,
              stage1_teacher=stage1_teacher)


def _task(runs, **kwargs):
  return distilbert.DistilBertTask(
      student=student_spec.StudentSpec(num_layers=2, hidden_size=16,
                                       num_attention_heads=2),
      teacher=_teacher(runs), inputs=distillation_testing.tiny_inputs(),
      **kwargs)


def _teacher(runs):
  return teacher_spec.TeacherSpec(checkpoint=runs["teacher_dir"],
                                  stage1_checkpoint=runs["stage1_dir"])


def test_trains_resumes_and_saves_a_student_for_fine_tuning(runs):
  model_dir = str(runs["root"] / "run")
  records = _trainer(model_dir, _task(runs), 1).train()
  scalars = records[-1].scalars
  # One step per record, one replica: the loss is the triple loss of the
  # logged terms.
  expected = (5.0 * 4.0 * scalars["distill/kl"]
              + 2.0 * scalars["student_mlm/loss"]
              + 1.0 * scalars["distill/cosine_distance"])
  np.testing.assert_allclose(scalars["loss"], expected, rtol=1e-4)
  assert 0.0 < scalars["distill/cosine_distance"] < 2.0

  # The checkpoint holds the student (30,522 x 16 table) and the 16 -> 32
  # map, not the frozen teacher (30,522 x 32 table).
  path = tf.train.latest_checkpoint(model_dir)
  shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
  tables = sorted({tuple(s) for s in shapes.values()
                   if len(s) == 2 and s[0] == 30522})
  assert tables == [(30522, 16)]
  assert any(k.startswith("distillation_projections/") for k in shapes)

  # A resumed run loads the teacher again (it is not in the checkpoint).
  resumed = _trainer(model_dir, _task(runs), 2)
  records = resumed.train()
  assert [r.step for r in records] == [2]
  np.testing.assert_array_equal(
      resumed.model.teacher.masked_lm.dense.kernel.numpy(),
      runs["stage1_teacher"].masked_lm.dense.kernel.numpy())

  # Fine-tuning reads the student encoder with the teacher's vocabulary,
  # from the config written beside the checkpoint or from the variables.
  path = tf.train.latest_checkpoint(model_dir)
  for config in (finetune_task.encoder_config_from_run(path),
                 finetune_task.encoder_config_from_checkpoint(path)):
    assert (config["vocab_size"], config["hidden_size"],
            config["num_layers"]) == (30522, 16, 2)


def test_same_width_student_starts_from_teacher_layer_g_m(runs):
  # Teacher: 2 layers x 32; a 1-layer student of width 32 takes layer g(1) = 2.
  task = distilbert.DistilBertTask(
      init_from_teacher=True,
      student=student_spec.StudentSpec(num_layers=1, hidden_size=32,
                                       num_attention_heads=2),
      teacher=_teacher(runs), inputs=distillation_testing.tiny_inputs())
  model = task.build_model()
  assert task.layer_map == [2] and not model.projections
  task.initialize(model)
  student, teacher = model.student.encoder_network, model.teacher.encoder_network
  np.testing.assert_array_equal(
      student.transformer_layers[0]._output_dense.kernel.numpy(),  # pylint: disable=protected-access
      teacher.transformer_layers[1]._output_dense.kernel.numpy())  # pylint: disable=protected-access
  np.testing.assert_array_equal(student.get_embedding_table().numpy(),
                                teacher.get_embedding_table().numpy())
  # The tiny teacher has 64 positions, the student 512: the first 64 match.
  student_positions = student._position_embedding_layer._position_embeddings  # pylint: disable=protected-access
  teacher_positions = teacher.bert_encoder._position_embedding_layer._position_embeddings  # pylint: disable=protected-access
  np.testing.assert_array_equal(student_positions.numpy()[:64],
                                teacher_positions.numpy())
