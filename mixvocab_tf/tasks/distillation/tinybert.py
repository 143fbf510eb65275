"""TinyBERT general distillation with the teacher's vocabulary (baseline).

Jiao et al., "TinyBERT: Distilling BERT for Natural Language Understanding"
(Findings of EMNLP 2020), Section 3.1: the student imitates the teacher layer
by layer, through a layer map g(m) (uniform by default: g(m) = m * N / M):

* embedding layer (Eq. 9): MSE(E_s W_e, E_t);
* hidden states (Eq. 8): sum over m of MSE(H_s^m W_h, H_t^g(m));
* attention (Eq. 7): sum over m of the MSE of the unnormalised attention
  scores of student layer m and teacher layer g(m), averaged over heads.

W_e and W_h are learned linear maps from the student's width to the
teacher's (W_h shared by the layers). General distillation uses no
prediction layer, so the teacher needs no MLM head and the default teacher
(MiniLM) serves as it is. Zhao et al. (EACL 2021), Section 4, compare with
this baseline, whose student reads the teacher's vocabulary.

Choices of this implementation (see `distillation_task.intermediate_losses`):
padding is left out of every mean; a teacher with a multiple of the student's
heads (12 and 4 here) gives one target per student head by averaging groups
of its heads; the input is the pipeline's masked-LM batch (teacher and
student read the same masked text), not unmasked text.

Task-specific distillation (Section 3.2) adds the prediction-layer loss,
`losses.soft_cross_entropy` (T = 1) between the logits of a
fine-tuned teacher and the student's classifier, on the task's data; it
belongs with the fine-tuning tasks, which own the classifiers.
"""

from typing import Optional, Sequence

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.pretraining import mlm_inputs


@base_task.register_task("tinybert")
class TinyBertTask(distillation_task.DistillationTask):
  """TinyBERT general distillation: embedding, hidden and attention MSEs.

  Args:
    embedding_weight: weight of the embedding-layer loss.
    hidden_weight: weight of the hidden-state loss.
    attention_weight: weight of the attention loss.
    The other arguments are those of `DistillationTask` (`layer_map` is g).
  """

  projection_names = ("embedding", "hidden")

  def __init__(self,
               embedding_weight: float = 1.0,
               hidden_weight: float = 1.0,
               attention_weight: float = 1.0,
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
    self.loss_weights = {"embedding": float(embedding_weight),
                    "hidden": float(hidden_weight),
                    "attention": float(attention_weight)}
    for name, value in self.loss_weights.items():
      if value < 0:
        raise ValueError(f"{name}_weight must be >= 0; received {value}.")
    if not any(self.loss_weights.values()):
      raise ValueError("TinyBertTask needs at least one positive weight; "
                       f"received {self.loss_weights}.")

  def compute_loss(self, model, features, training):
    # No MLM head is evaluated: general distillation has no prediction layer.
    teacher = self.run_teacher(model, features, with_positions=False)
    student = self.run_student(model, features, training,
                               with_positions=False)
    terms = distillation_task.intermediate_losses(
        model, student, teacher, features["input_mask"], self.layer_map,
        **{name: weight > 0 for name, weight in self.loss_weights.items()})
    loss = 0.0
    metrics = {}
    for name, (total, count) in terms.items():
      loss += self.loss_weights[name] * distillation_task.mean_term(total, count)
      metrics[f"distill/{name}_mse"] = base_task.metric(total, count)
    return loss, metrics

  def describe(self):
    return (f"{super().describe()}; layer map {self.layer_map or 'uniform'}, "
            f"weights {self.loss_weights}")
