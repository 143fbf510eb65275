"""DistilBERT: the triple loss, with the teacher's vocabulary (baseline).

Sanh et al., "DistilBERT, a distilled version of BERT" (2019), Section 2: the
student learns from the teacher's soft targets, from masked-LM, and from the
direction of the teacher's last hidden states:

  L = alpha_d * T^2 * KL(softmax(t / T) || softmax(s / T))
      + alpha_mlm * MLM + alpha_cos * (1 - cos(h_s, h_t)),

with T = 2, alpha_d = 5, alpha_mlm = 2, alpha_cos = 1 (the released training
script's defaults). Zhao et al. (EACL 2021), Section 4, compare
mixed-vocabulary students with this baseline, whose student must share the
teacher's vocabulary: the input is segmented with the teacher's vocabulary.

Choices of this implementation:
* soft targets and MLM are taken at the masked positions only (the released
  script's `restrict_ce_to_mask`); the logits of a 30K vocabulary at every
  position would cost more than the rest of a small student's step;
* the cosine loss covers every real token; when the student is narrower than
  the teacher, its states go through a learned linear map to the teacher's
  width first (DistilBERT's student has the teacher's width and needs none);
* when widths, heads and feed-forward widths match, the student starts from
  the teacher's layers g(1), ..., g(M) (every other layer for half the depth,
  as DistilBERT), with the teacher's embeddings and MLM head.

The soft targets need a trained teacher MLM head: use a stage I run of the
teacher (`DistillationTask.teacher_init_checkpoint`) or a checkpoint with a
head; see `distillation_task`.
"""

from typing import Optional, Sequence

from absl import logging
import tensorflow as tf

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task


@base_task.register_task("distilbert")
class DistilBertTask(distillation_task.DistillationTask):
  """DistilBERT's triple loss from a frozen teacher, teacher vocabulary.

  Args:
    temperature: T of the soft targets.
    alpha_distill: weight of T^2 * KL.
    alpha_mlm: weight of the masked-LM cross-entropy.
    alpha_cos: weight of 1 - cos on the last hidden states.
    init_from_teacher: start the student from teacher layers g(m): True
      (required; an error if shapes differ), False, or None (when the shapes
      allow).
    The other arguments are those of `DistillationTask`.
  """

  def __init__(self,
               temperature: float = 2.0,
               alpha_distill: float = 5.0,
               alpha_mlm: float = 2.0,
               alpha_cos: float = 1.0,
               init_from_teacher: Optional[bool] = None,
               student_preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: Optional[float] = None,
               teacher_checkpoint: Optional[str] = None,
               teacher_config: Optional[str] = None,
               teacher_init_checkpoint: Optional[str] = None,
               layer_map: Optional[Sequence[int]] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               teacher_vocab: Optional[str] = None,
               student_vocab: Optional[str] = None):
    super().__init__(
        student_preset=student_preset, num_layers=num_layers,
        hidden_size=hidden_size, num_attention_heads=num_attention_heads,
        dropout_rate=dropout_rate, teacher_checkpoint=teacher_checkpoint,
        teacher_config=teacher_config,
        teacher_init_checkpoint=teacher_init_checkpoint, layer_map=layer_map,
        inputs=inputs, teacher_vocab=teacher_vocab,
        student_vocab=student_vocab)
    if temperature <= 0:
      raise ValueError(f"temperature must be positive; received "
                       f"{temperature}.")
    for name, value in (("alpha_distill", alpha_distill),
                        ("alpha_mlm", alpha_mlm), ("alpha_cos", alpha_cos)):
      if value < 0:
        raise ValueError(f"{name} must be >= 0; received {value}.")
    self.temperature = float(temperature)
    self.alpha_distill = float(alpha_distill)
    self.alpha_mlm = float(alpha_mlm)
    self.alpha_cos = float(alpha_cos)
    self.init_from_teacher = init_from_teacher

  def assemble(self, student, teacher):
    if self.alpha_distill > 0:
      self.teacher_source.require_trained_head(
          "teacher", self.task_name, "DistilBertTask.alpha_distill")
    student_width = distillation_task.encoder_width(student.encoder_network)
    teacher_width = distillation_task.encoder_width(teacher.encoder_network)
    self.projection_names = (("hidden",) if student_width != teacher_width
                             and self.alpha_cos > 0 else ())
    return super().assemble(student, teacher)

  def initialize(self, model):
    if self.init_from_teacher is False:
      return
    try:
      names = distillation_task.copy_teacher_layers(
          model.student, model.teacher, self.layer_map)
    except ValueError as e:
      if self.init_from_teacher:
        raise
      logging.info("Student starts fresh: %s", e)
      return
    logging.info("Student initialised from teacher layers %s (%d weights).",
                 self.layer_map, len(names))

  def compute_loss(self, model, features, training):
    teacher = self.run_teacher(model, features)
    student = self.run_student(model, features, training)
    weights = tf.cast(features["masked_lm_weights"], tf.float32)
    kl_sum, count = losses.masked_sum(
        losses.kl_divergence(teacher["teacher_mlm_logits"],
                             student["mlm_logits"], self.temperature),
        weights)
    mlm_sum, _, correct = mlm_task.masked_lm_sums(
        student["mlm_logits"], features, text_lib.TEACHER_VOCAB_ID)
    cos_sum, tokens = losses.masked_sum(
        losses.cosine_distance(
            distillation_task.project(model, "hidden",
                                      student["sequence_output"]),
            teacher["sequence_output"]),
        features["input_mask"])
    global_count = base_task.global_sum(count)
    loss = (self.alpha_distill * self.temperature**2 *
            tf.math.divide_no_nan(kl_sum, global_count) +
            self.alpha_mlm * tf.math.divide_no_nan(mlm_sum, global_count) +
            self.alpha_cos * distillation_task.mean_term(cos_sum, tokens))
    _, _, teacher_correct = mlm_task.masked_lm_sums(
        teacher["teacher_mlm_logits"], features, text_lib.TEACHER_VOCAB_ID)
    metrics = {
        "distill/kl": base_task.metric(kl_sum, count),
        "distill/cosine_distance": base_task.metric(cos_sum, tokens),
        "student_mlm/loss": base_task.metric(mlm_sum, count),
        "student_mlm/accuracy": base_task.metric(correct, count),
        "teacher_mlm/accuracy": base_task.metric(teacher_correct, count),
    }
    return loss, metrics

  def describe(self):
    return (f"{super().describe()}; T {self.temperature}, alpha_d "
            f"{self.alpha_distill}, alpha_mlm {self.alpha_mlm}, alpha_cos "
            f"{self.alpha_cos}")
