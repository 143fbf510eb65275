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
stage II. It is a `DistillationTask` whose student reads the student
vocabulary (`student_reads = 'student'`) and starts from the stage I table
(`StudentSpec.init_checkpoint`, required as for stage II); the teacher is the
stage I run given by `TeacherSpec.stage1_checkpoint`, by default the one that
gives the student its table.
"""

import tensorflow as tf

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.pretraining import mlm_task

_INTERMEDIATE = ("embedding", "hidden", "attention")


@base_task.register_task("stage2_distill")
class Stage2DistillTask(distillation_task.DistillationTask):
  """Stage II (Eq. 2) plus distillation from the stage I teacher.

  Args:
    mlm_weight: weight of the student's masked-LM loss (Eq. 2).
    soft_target_weight: weight of T^2 * KL(teacher || student) of the
      student-vocabulary softmaxes at the masked positions.
    temperature: T of the soft targets.
    embedding_weight: weight of the embedding-layer MSE (TinyBERT Eq. 9).
    hidden_weight: weight of the hidden-state MSE (Eq. 8).
    attention_weight: weight of the attention-score MSE (Eq. 7).
    **kwargs: student, teacher, layer_map, inputs of `DistillationTask`.
      The student's `init_checkpoint`, the stage I run whose student table
      initialises it, is required. The teacher's pretrained checkpoint gives
      the architecture when the stage I run wrote no `encoder_config.json`;
      its `stage1_checkpoint` (default: the student's `init_checkpoint`)
      gives the weights.
  """

  input_mode = "student"
  loss_vocab_ids = (text_lib.STUDENT_VOCAB_ID,)
  student_reads = "student"

  def __init__(self,
               mlm_weight: float = 1.0,
               soft_target_weight: float = 0.0,
               temperature: float = 1.0,
               embedding_weight: float = 0.0,
               hidden_weight: float = 0.0,
               attention_weight: float = 0.0,
               **kwargs):
    super().__init__(**kwargs)
    if not self.student_spec.init_checkpoint:
      raise ValueError(
          "Stage2DistillTask needs StudentSpec.init_checkpoint: the stage I "
          "model_dir (or checkpoint) whose student table initialises the "
          "student; received None.")
    if not self.teacher_spec.stage1_checkpoint:
      self.teacher_spec.stage1_checkpoint = self.student_spec.init_checkpoint
    self.loss_weights = losses.checked_weights(
        type(self).__name__, {"mlm": mlm_weight,
                              "soft_target": soft_target_weight,
                              "embedding": embedding_weight,
                              "hidden": hidden_weight,
                              "attention": attention_weight})
    self.temperature = losses.positive_temperature(temperature)
    self.projection_names = tuple(
        name for name in ("embedding", "hidden") if self._uses(name))

  @property
  def init_checkpoint(self):
    return self.student_spec.init_checkpoint

  @property
  def hidden_size(self):
    return self.encoder_config["hidden_size"]

  def _uses(self, name):
    return self.loss_weights[name] > 0

  def assemble(self, student, teacher):
    if self._uses("soft_target"):
      self.teacher_spec.require_trained_head(
          "student", self.task_name, "Stage2DistillTask.soft_target_weight")
    return super().assemble(student, teacher)

  def compute_loss(self, model, features, training):
    soft = self._uses("soft_target")
    intermediate = [n for n in _INTERMEDIATE if self._uses(n)]
    student = self.run_student(model, features, training)
    logits = {"student_mlm_logits": student["mlm_logits"]}
    mlm_loss, metrics = mlm_task.mlm_loss(logits, features,
                                          self.loss_vocab_ids)
    loss = self.loss_weights["mlm"] * mlm_loss
    if not soft and not intermediate:
      return loss, metrics
    # The same ids, masks and masked positions as the student's, every token
    # read through the teacher's student table.
    teacher = self.run_teacher(model, features, with_positions=soft)
    if soft:
      weights = tf.cast(features["masked_lm_weights"], tf.float32)
      kl_sum, count = losses.masked_sum(
          losses.kl_divergence(teacher["student_mlm_logits"],
                               student["mlm_logits"], self.temperature),
          weights)
      loss += (self.loss_weights["soft_target"] * self.temperature**2 *
               losses.mean_term(kl_sum, count))
      _, _, teacher_correct = mlm_task.masked_lm_sums(
          teacher["student_mlm_logits"], features, text_lib.STUDENT_VOCAB_ID)
      metrics["distill/kl"] = base_task.metric(kl_sum, count)
      metrics["teacher_student_mlm/accuracy"] = base_task.metric(
          teacher_correct, count)
    if intermediate:
      terms = distillation_task.intermediate_losses(
          model, student, teacher, features["input_mask"], self.layer_map,
          **{n: n in intermediate for n in _INTERMEDIATE})
      for name, (total, count) in terms.items():
        loss += self.loss_weights[name] * losses.mean_term(total, count)
        metrics[f"distill/{name}_mse"] = base_task.metric(total, count)
    return loss, metrics

  def describe(self):
    used = {k: v for k, v in self.loss_weights.items() if v}
    return (f"{super().describe()}; losses {used}, T {self.temperature}")
