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
teacher (`TeacherSpec.stage1_checkpoint`) or a checkpoint with a head; see
`distillation_task`.
"""

from typing import Optional

from absl import logging
import tensorflow as tf

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task
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
    **kwargs: student, teacher, layer_map, inputs of `DistillationTask`.
  """

  def __init__(self,
               temperature: float = 2.0,
               alpha_distill: float = 5.0,
               alpha_mlm: float = 2.0,
               alpha_cos: float = 1.0,
               init_from_teacher: Optional[bool] = None,
               **kwargs):
    super().__init__(**kwargs)
    self.temperature = losses.positive_temperature(temperature)
    alphas = losses.checked_weights(
        type(self).__name__, {"alpha_distill": alpha_distill,
                              "alpha_mlm": alpha_mlm, "alpha_cos": alpha_cos},
        suffix="", require_positive=False)
    self.alpha_distill = alphas["alpha_distill"]
    self.alpha_mlm = alphas["alpha_mlm"]
    self.alpha_cos = alphas["alpha_cos"]
    self.init_from_teacher = init_from_teacher

  def assemble(self, student, teacher):
    if self.alpha_distill > 0:
      self.teacher_spec.require_trained_head(
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
    kl_sum, mlm_sum, correct, count = self.masked_lm_sums(
        teacher, student, features, losses.kl_divergence, self.temperature)
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
            self.alpha_cos * losses.mean_term(cos_sum, tokens))
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
