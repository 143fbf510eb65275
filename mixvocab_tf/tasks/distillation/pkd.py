"""Patient knowledge distillation (PKD) with the teacher's vocabulary (baseline).

Sun et al., "Patient Knowledge Distillation for BERT Model Compression"
(EMNLP 2019), Section 3: besides hard labels and the teacher's soft targets
the student learns from the teacher's intermediate layers, through the
normalised [CLS] states of mapped layers:

  L = (1 - alpha) * L_CE + alpha * L_DS + beta * L_PT,
  L_DS = -sum_k softmax(t / T)_k log softmax(s / T)_k          (Eq. 3)
  L_PT = sum_{m < M} || h_s^m / ||h_s^m|| - h_t^g(m) / ||h_t^g(m)|| ||^2  (Eq. 5)

with L_PT, as in PKD's released code, a mean over the M - 1 layers and the
d dimensions instead of a sum (`F.mse_loss` of the normalised states), which
is the scale its range of beta (10 to 1000) assumes.

PKD-Skip maps student layer m to teacher layer g(m) = m * N / M (the uniform
map; give `layer_map` for PKD-Last); the last student layer is left to L_DS.
PKD distils a fine-tuned teacher on a task; as a pretraining baseline of Zhao
et al. (EACL 2021), Section 4, the hard labels are the masked tokens and L_DS
the teacher's MLM soft targets at those positions, over the teacher's
vocabulary. Defaults T = 5, alpha = 0.5, beta = 100 are from PKD's search
grid. When the student is narrower than the teacher its [CLS] states go
through a learned linear map to the teacher's width first (PKD's student has
the teacher's width).

The soft targets need a trained teacher MLM head (a stage I run of the
teacher, or a checkpoint with a head; see `distillation_task`).
"""

import tensorflow as tf

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task


@base_task.register_task("pkd")
class PkdTask(distillation_task.DistillationTask):
  """PKD: hard MLM labels, soft targets, patient [CLS] loss.

  Args:
    temperature: T of the soft targets.
    alpha: weight of the soft targets (1 - alpha: of the hard labels).
    beta: weight of the patient loss.
    **kwargs: student, teacher, layer_map, inputs of `DistillationTask`
      (`layer_map` gives g(1..M); g(M) is unused).
  """

  def __init__(self,
               temperature: float = 5.0,
               alpha: float = 0.5,
               beta: float = 100.0,
               **kwargs):
    super().__init__(**kwargs)
    self.temperature = losses.positive_temperature(temperature)
    if not 0.0 <= alpha <= 1.0:
      raise ValueError(f"alpha must be in [0, 1]; received {alpha}.")
    if beta < 0:
      raise ValueError(f"beta must be >= 0; received {beta}.")
    self.alpha = float(alpha)
    self.beta = float(beta)

  def assemble(self, student, teacher):
    if self.alpha > 0:
      self.teacher_spec.require_trained_head("teacher", self.task_name,
                                               "PkdTask.alpha")
    student_width = distillation_task.encoder_width(student.encoder_network)
    teacher_width = distillation_task.encoder_width(teacher.encoder_network)
    self.projection_names = (("hidden",) if student_width != teacher_width
                             and self.beta > 0 else ())
    return super().assemble(student, teacher)

  def compute_loss(self, model, features, training):
    teacher = self.run_teacher(model, features)
    student = self.run_student(model, features, training)
    soft_sum, mlm_sum, correct, count = self.masked_lm_sums(
        teacher, student, features, losses.soft_cross_entropy,
        self.temperature)
    student_states = student["encoder_outputs"]
    teacher_states = teacher["encoder_outputs"]
    patient_sum = tf.constant(0.0)
    examples = tf.cast(tf.shape(features["input_word_ids"])[0], tf.float32)
    # Intermediate layers only: the last one is distilled through L_DS.
    pairs = list(enumerate(self.layer_map[:-1], start=1))
    for m, g in pairs:
      cls_student = distillation_task.project(
          model, "hidden", student_states[m - 1][:, 0, :])
      patient_sum += tf.reduce_sum(losses.normalized_squared_error(
          cls_student, teacher_states[g - 1][:, 0, :]))
    # A mean over layers and dimensions per example (see the docstring).
    patient_sum /= float(max(len(pairs), 1) * distillation_task.encoder_width(
        model.teacher.encoder_network))
    global_count = base_task.global_sum(count)
    loss = ((1.0 - self.alpha) * tf.math.divide_no_nan(mlm_sum, global_count)
            + self.alpha * tf.math.divide_no_nan(soft_sum, global_count)
            + self.beta * losses.mean_term(patient_sum, examples))
    metrics = {
        "distill/soft_cross_entropy": base_task.metric(soft_sum, count),
        "distill/patient": base_task.metric(patient_sum, examples),
        "student_mlm/loss": base_task.metric(mlm_sum, count),
        "student_mlm/accuracy": base_task.metric(correct, count),
    }
    return loss, metrics

  def describe(self):
    return (f"{super().describe()}; T {self.temperature}, alpha {self.alpha},"
            f" beta {self.beta}, layer map {self.layer_map or 'uniform'}")
