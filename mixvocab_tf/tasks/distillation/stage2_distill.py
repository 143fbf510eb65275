"""Stage II with distillation across vocabularies: the teacher reads the student's
segmentation.

Zhao et al. (EACL 2021), Section 3, train the stage II student with masked-LM
alone (Eq. 2; `stage2.py`), because the teacher and the student segment text
differently and their token positions do not line up. After stage I they do:
the teacher embeds student-vocabulary tokens with its student table and the
up-projection, and has a softmax over the student vocabulary. Fed the
student's own batch (every token tagged as a student token), the teacher
produces, at exactly the student's positions,

* soft targets over the student vocabulary at the masked positions (its
  student-vocabulary MLM head): T^2 * KL, as DistilBERT's loss;
* hidden states and unnormalised attention scores per layer, and the
  embedding-layer output: TinyBERT's MSE losses (`distillation_task.
  intermediate_losses`; learned maps W_e, W_h to the teacher's width, layer
  map g(m), a teacher with 3x the student's heads averaged per group).

Each is an option (a weight, 0 by default); with all of them 0 this task is
stage II. The teacher is the stage I run that gives the student its table
(`init_checkpoint`, or another through `teacher_init_checkpoint`); its
architecture comes from the pretrained teacher it started from.
"""

from typing import Optional, Sequence

import tensorflow as tf

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task
from mixvocab_tf.tasks.pretraining import stage2
from mixvocab_tf.tasks.pretraining import student_mlm_task


@base_task.register_task("stage2_distill")
class Stage2DistillTask(stage2.Stage2Task):
  """Stage II (Eq. 2) plus distillation from the stage I teacher.

  Args:
    init_checkpoint: the stage I run whose student table initialises the
      student (and, by default, the teacher).
    mlm_weight: weight of the student's masked-LM loss (Eq. 2).
    soft_target_weight: weight of T^2 * KL(teacher || student) of the
      student-vocabulary softmaxes at the masked positions.
    temperature: T of the soft targets.
    embedding_weight: weight of the embedding-layer MSE (TinyBERT Eq. 9).
    hidden_weight: weight of the hidden-state MSE (Eq. 8).
    attention_weight: weight of the attention-score MSE (Eq. 7).
    layer_map: g(1..M), 1-based teacher layers per student layer (default:
      uniform).
    teacher_checkpoint: the pretrained teacher stage I started from (its
      architecture; default: the package's default teacher).
    teacher_config: its config file, for dry runs without it.
    teacher_init_checkpoint: the stage I run used as the teacher (default:
      `init_checkpoint`).
    student_preset, num_layers, hidden_size, num_attention_heads,
    dropout_rate, inputs, student_vocab, teacher_vocab: as for `Stage2Task`.
  """

  def __init__(self,
               init_checkpoint: Optional[str] = None,
               mlm_weight: float = 1.0,
               soft_target_weight: float = 0.0,
               temperature: float = 1.0,
               embedding_weight: float = 0.0,
               hidden_weight: float = 0.0,
               attention_weight: float = 0.0,
               layer_map: Optional[Sequence[int]] = None,
               teacher_checkpoint: Optional[str] = None,
               teacher_config: Optional[str] = None,
               teacher_init_checkpoint: Optional[str] = None,
               student_preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: Optional[float] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               student_vocab: Optional[str] = None,
               teacher_vocab: Optional[str] = None):
    super().__init__(
        init_checkpoint=init_checkpoint, student_preset=student_preset,
        num_layers=num_layers, hidden_size=hidden_size,
        num_attention_heads=num_attention_heads, dropout_rate=dropout_rate,
        inputs=inputs, student_vocab=student_vocab,
        teacher_vocab=teacher_vocab)
    self.loss_weights = {"mlm": float(mlm_weight),
                         "soft_target": float(soft_target_weight),
                         "embedding": float(embedding_weight),
                         "hidden": float(hidden_weight),
                         "attention": float(attention_weight)}
    for name, value in self.loss_weights.items():
      if value < 0:
        raise ValueError(f"{name}_weight must be >= 0; received {value}.")
    if not any(self.loss_weights.values()):
      raise ValueError("Stage2DistillTask needs a positive weight; received "
                       f"{self.loss_weights}.")
    if temperature <= 0:
      raise ValueError(f"temperature must be positive; received "
                       f"{temperature}.")
    self.temperature = float(temperature)
    self.teacher_source = distillation_task.TeacherSource(
        teacher_checkpoint, teacher_config,
        teacher_init_checkpoint or init_checkpoint)
    self.requested_layer_map = None if layer_map is None else list(layer_map)
    self.layer_map = None
    # The embedding-layer output is the first layer's input (attention).
    self.encoder_config["return_word_embeddings"] = True

  def _uses(self, name):
    return self.loss_weights[name] > 0

  def build_model(self):
    student = self.build_student()
    fingerprint = self.vocab_fingerprints()["student"]
    teacher = self.teacher_source.build(
        student_vocab_size=len(self.vocab("student")),
        student_embedding_width=self.hidden_size,
        vocab_fingerprints={"student": fingerprint})
    if self._uses("soft_target"):
      self.teacher_source.require_trained_head(
          "student", self.task_name, "Stage2DistillTask.soft_target_weight")
    self.layer_map = losses.uniform_layer_map(
        self.encoder_config["num_layers"],
        teacher.encoder_network.get_config()["num_layers"],
        self.requested_layer_map)
    names = [name for name in ("embedding", "hidden") if self._uses(name)]
    return distillation_task.DistillationModel(
        student, teacher, distillation_task.make_projections(
            names, self.hidden_size,
            distillation_task.encoder_width(teacher.encoder_network)))

  def initialize(self, model):
    stage2.load_student_table(
        self.init_checkpoint,
        model.student.encoder_network.get_embedding_table(),
        self.vocab_fingerprints()["student"])

  def checkpoint_items(self, model):
    # Called by the trainer when it trains, not by the dry run.
    self.teacher_source.require_loaded(self.task_name)
    items = {"model": model.student,
             student_mlm_task.STUDENT_ENCODER_KEY:
                 model.student.encoder_network}
    if model.projections:
      items["distillation_projections"] = model.projections
    return items

  def missing_files(self):
    missing = dict(super().missing_files())
    missing.update(self.teacher_source.missing_files())
    return missing

  def compute_loss(self, model, features, training):
    soft = self._uses("soft_target")
    intermediate = [n for n in ("embedding", "hidden", "attention")
                    if self._uses(n)]
    student = model.student(distillation_task.model_features(features),
                            training=training)
    logits = {"student_mlm_logits": student["mlm_logits"]}
    mlm_loss, metrics = mlm_task.mlm_loss(logits, features,
                                          self.loss_vocab_ids)
    loss = self.loss_weights["mlm"] * mlm_loss
    if not soft and not intermediate:
      return loss, metrics
    # The same ids, masks and masked positions as the student's, every token
    # read through the teacher's student table.
    teacher = model.teacher(
        distillation_task.model_features(
            features, with_positions=soft,
            vocab_id=text_lib.STUDENT_VOCAB_ID), training=False)
    if soft:
      weights = tf.cast(features["masked_lm_weights"], tf.float32)
      kl_sum, count = losses.masked_sum(
          losses.kl_divergence(teacher["student_mlm_logits"],
                               student["mlm_logits"], self.temperature),
          weights)
      loss += (self.loss_weights["soft_target"] * self.temperature**2 *
               distillation_task.mean_term(kl_sum, count))
      _, _, teacher_correct = mlm_task.masked_lm_sums(
          teacher["student_mlm_logits"], features, text_lib.STUDENT_VOCAB_ID)
      metrics["distill/kl"] = base_task.metric(kl_sum, count)
      metrics["teacher_student_mlm/accuracy"] = base_task.metric(
          teacher_correct, count)
    if intermediate:
      terms = distillation_task.intermediate_losses(
          model, student, teacher, features["input_mask"], self.layer_map,
          **{n: n in intermediate for n in ("embedding", "hidden",
                                            "attention")})
      for name, (total, count) in terms.items():
        loss += self.loss_weights[name] * distillation_task.mean_term(
            total, count)
        metrics[f"distill/{name}_mse"] = base_task.metric(total, count)
    return loss, metrics

  def describe(self):
    used = {k: v for k, v in self.loss_weights.items() if v}
    return (f"{super().describe()}; losses {used}, T {self.temperature}, "
            f"{self.teacher_source.describe()}")
