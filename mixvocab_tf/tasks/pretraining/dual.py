"""Dual training: teacher and student trained together, tied by projections.

The earlier version of the paper (Zhao et al., "Extreme Language Model
Compression with Optimal Subwords and Shared Projections", arXiv:1909.11687)
trains both models at once: the teacher with masked-LM on mixed-vocabulary
text (as in stage I, Eq. 1) and the student with masked-LM on student-only
text (Eq. 2), the student's word table being the very table that the teacher
reads student tokens with. A shared-projection loss (one pair U, V for all
layers) pulls each student layer's weights towards the projected teacher
layer's ("down": U^T W_t V vs W_s) or the reverse ("up"), weighted by alpha:

  loss = L_teacher(mixed) + L_student(student) + alpha * L_projection.

The student needs as many layers as the teacher (layer i is paired with layer
i) and the same inner_dim / hidden ratio.
"""

from typing import Optional

import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks as nlp_networks

from mixvocab_tf import layers
from mixvocab_tf import models
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.tasks.pretraining import student_mlm_task

PROJECTIONS = ("down", "up")


class _DualModel(tf_keras.Model):
  """Holds the teacher, the student and the shared projection; not callable."""

  def __init__(self, teacher, student, projection, **kwargs):
    super().__init__(**kwargs)
    self.teacher = teacher
    self.student = student
    self.projection = projection

  def call(self, inputs, training=None):
    raise NotImplementedError("Call the .teacher or the .student model.")


@base_task.register_task("dual")
class DualTask(mlm_task.MlmTask):
  """Teacher (mixed input) and student (student input) with shared projections.

  Args:
    teacher_checkpoint, teacher_config: the pretrained teacher, as for
      `Stage1Task`.
    student_preset, num_layers, hidden_size, num_attention_heads: the
      student, as for `StudentMlmTask`; its layers must match the teacher's.
    dropout_rate: dropout of both models (None: their own).
    alpha: weight of the projection loss.
    projection: "down" (teacher weights projected to the student's shape) or
      "up" (student weights projected to the teacher's).
    inputs: what to read (`MlmInputs`); the teacher's stream is mixed, the
      student's stream is student-only, with its own seed.
    teacher_vocab, student_vocab: as for `Stage1Task`.
  """

  input_mode = "mixed"

  def __init__(self,
               teacher_checkpoint: Optional[str] = None,
               teacher_config: Optional[str] = None,
               student_preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: Optional[float] = None,
               alpha: float = 1.0,
               projection: str = "down",
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               teacher_vocab: Optional[str] = None,
               student_vocab: Optional[str] = None):
    if projection not in PROJECTIONS:
      raise ValueError(f"projection must be one of {PROJECTIONS}; received "
                       f"{projection!r}.")
    if alpha < 0:
      raise ValueError(f"alpha must be non-negative; received {alpha!r}.")
    # The teacher half is a stage I task (same model, inputs, init); the
    # student half a student MLM task on the same inputs.
    self.stage1 = stage1.Stage1Task(
        teacher_checkpoint=teacher_checkpoint, teacher_config=teacher_config,
        student_embedding_width=1, dropout_rate=dropout_rate, inputs=inputs,
        teacher_vocab=teacher_vocab, student_vocab=student_vocab)
    # Every argument explicit: the student's table is the teacher's, never
    # a stage I table bound through `StudentSpec.init_checkpoint`.
    self.student_task = student_mlm_task.StudentMlmTask(
        student=student_spec.StudentSpec(
            preset=student_preset, num_layers=num_layers,
            hidden_size=hidden_size, num_attention_heads=num_attention_heads,
            dropout_rate=dropout_rate, vocab=student_vocab,
            init_checkpoint=None),
        inputs=self.stage1.inputs)
    self.stage1.student_embedding_width = self.student_task.hidden_size
    super().__init__(inputs=self.stage1.inputs,
                     teacher_vocab=self.stage1.teacher_vocab_path,
                     student_vocab=student_vocab)
    self.alpha = float(alpha)
    self.projection = projection

  def build_model(self):
    teacher = self.stage1.build_model()
    config = dict(self.student_task.encoder_config)
    config["vocab_size"] = len(self.vocab("student"))
    teacher_layers = teacher.encoder_network.get_config()["num_layers"]
    if config["num_layers"] != teacher_layers:
      raise ValueError(
          "Dual training pairs student layer i with teacher layer i and needs "
          f"as many layers; received {config['num_layers']} (student) and "
          f"{teacher_layers} (teacher). Set DualTask.num_layers.")
    # The student reads its words with the teacher's student table: the same
    # layer, so the same variable. (A BertEncoderV2, which accepts an
    # embedding layer; PlainBertEncoder owns its own.)
    embedding = teacher.encoder_network.embedding_layer
    config["embedding_layer"] = embedding.student_embedding_layer
    student = models.MLMPretrainer(
        nlp_networks.BertEncoderV2(**config),
        name="student")
    teacher_hidden = teacher.encoder_network.get_config()["hidden_size"]
    projection_cls = (layers.SharedProjDown if self.projection == "down"
                      else layers.SharedProjUp)
    projection = projection_cls(teacher_hidden_size=teacher_hidden,
                                student_hidden_size=config["hidden_size"],
                                name="shared_projection")
    projection.build(None)
    return _DualModel(teacher, student, projection, name="dual")

  def initialize(self, model):
    self.stage1.initialize(model.teacher)

  def build_inputs(self, input_context=None, training=True):
    mixed = self._dataset(
        self.inputs.pipeline_config("mixed", repeat=training), input_context)
    student = self._dataset(
        self.inputs.pipeline_config("student", repeat=training,
                                    seed_offset=1), input_context)
    return tf.data.Dataset.zip((mixed, student)).map(
        lambda m, s: {"mixed": m, "student": s})

  def compute_loss(self, model, features, training):
    teacher_loss, teacher_metrics = mlm_task.mlm_loss(
        model.teacher(features["mixed"], training=training), features["mixed"])
    student_outputs = model.student(features["student"], training=training)
    student_loss, student_metrics = mlm_task.mlm_loss(
        {"student_mlm_logits": student_outputs["mlm_logits"]},
        features["student"], (text_lib.STUDENT_VOCAB_ID,))
    projection_loss = models.shared_projection_loss(
        model.teacher.encoder_network, model.student.encoder_network,
        model.projection)
    # One value for the whole batch: each replica adds its share.
    context = tf.distribute.get_replica_context()
    replicas = context.num_replicas_in_sync if context else 1
    loss = (teacher_loss + student_loss +
            self.alpha * tf.cast(projection_loss, tf.float32) / replicas)
    metrics = {f"teacher/{k}": v for k, v in teacher_metrics.items()}
    metrics.update({f"student/{k}": v for k, v in student_metrics.items()})
    metrics["projection_loss"] = base_task.metric(
        tf.cast(projection_loss, tf.float32) / replicas, 1.0 / replicas)
    return loss, metrics

  def checkpoint_items(self, model):
    items = {"model": model,
             student_mlm_task.STUDENT_ENCODER_KEY: model.student.encoder_network}
    items.update({k: v for k, v in self.stage1.checkpoint_items(
        model.teacher).items() if k != "model"})
    return items

  def encoder_configs(self, model):
    # The student's embedding layer is the teacher's table (not a config
    # value): only the teacher is described; fine-tuning a dual student
    # reads its sizes from the checkpoint.
    return self.stage1.encoder_configs(model.teacher)

  def missing_files(self):
    return self.stage1.missing_files()

  def describe(self):
    config = self.student_task.encoder_config
    return (f"{self.stage1.describe()}; student {config['num_layers']} x "
            f"{config['hidden_size']} on student input, projection "
            f"{self.projection}, alpha {self.alpha}").replace(
                "stage1:", "dual:", 1)
