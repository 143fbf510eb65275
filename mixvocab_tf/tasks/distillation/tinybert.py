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

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.distillation import losses


@base_task.register_task("tinybert")
class TinyBertTask(distillation_task.DistillationTask):
  """TinyBERT general distillation: embedding, hidden and attention MSEs.

  Args:
    embedding_weight: weight of the embedding-layer loss.
    hidden_weight: weight of the hidden-state loss.
    attention_weight: weight of the attention loss.
    **kwargs: student, teacher, layer_map, inputs of `DistillationTask`
      (`layer_map` is g).
  """

  projection_names = ("embedding", "hidden")

  def __init__(self,
               embedding_weight: float = 1.0,
               hidden_weight: float = 1.0,
               attention_weight: float = 1.0,
               **kwargs):
    super().__init__(**kwargs)
    self.loss_weights = losses.checked_weights(
        type(self).__name__, {"embedding": embedding_weight,
                              "hidden": hidden_weight,
                              "attention": attention_weight})

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
      loss += self.loss_weights[name] * losses.mean_term(total, count)
      metrics[f"distill/{name}_mse"] = base_task.metric(total, count)
    return loss, metrics

  def describe(self):
    return (f"{super().describe()}; layer map {self.layer_map or 'uniform'}, "
            f"weights {self.loss_weights}")
