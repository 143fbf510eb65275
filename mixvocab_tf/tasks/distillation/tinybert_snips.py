"""TinyBERT task-specific distillation on SNIPS from a fine-tuned teacher.

Jiao et al., "TinyBERT" (Findings of EMNLP 2020), Section 3.2: after general
distillation (`tinybert.py`) the student is distilled again on the task's
data from a teacher fine-tuned on that task. The prediction-layer loss
(Eq. 10) is the soft cross-entropy between the teacher's and the student's
logits at temperature T (T = 1 in the paper); TinyBERT first distils the
intermediate layers (the losses of `distillation_task.intermediate_losses`)
and then the prediction layer, two runs of this task with different weights.

For SNIPS the prediction layer has two outputs (`models.JointIntentSlotModel`):
the intent logits, a soft cross-entropy per query, and the slot logits, a
soft cross-entropy per word's first WordPiece (the positions the fine-tuning
loss and the evaluation use). Both are means over the global batch, added:

  L = prediction_weight * (CE_intent + CE_slot)
      + hard_label_weight * (the fine-tuning loss of `intent_slot`)
      + the weighted intermediate losses.

The teacher is a `intent_slot` run of the teacher (`TEACHER = 'default'`),
the student a general-distillation run (`tinybert`) read as fine-tuning reads
any student (`init_checkpoint`); both use the teacher's vocabulary, and the
student takes the teacher run's label vocabularies (its snips_labels.json).
Evaluation and the best checkpoint are those of `intent_slot`; the teacher
is kept out of the checkpoints (but counted in the parameters of the
evaluator's markdown row, which counts the whole training model).
"""

import os
from typing import Optional, Sequence

import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.distillation import distillation_task
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.core import checkpointing

def joint_forward(model, features, training):
  """`JointIntentSlotModel` outputs plus its encoder's (states, scores...)."""
  inputs = {k: features[k] for k in joint_intent_slot_model.INPUT_NAMES}
  outputs = dict(model.encoder_network(inputs, training=training))
  pooled = model.intent_dropout(outputs["pooled_output"], training=training)
  sequence = model.slot_dropout(outputs["sequence_output"], training=training)
  outputs["intent_logits"] = model.intent_classifier(pooled)
  outputs["slot_logits"] = model.slot_classifier(sequence)
  return outputs


@base_task.register_task("tinybert_snips")
class TinyBertSnipsTask(intent_slot_task.IntentSlotTask):
  """Task-specific distillation on SNIPS (TinyBERT Section 3.2).

  Args:
    teacher_run: a `intent_slot` run of the teacher (model_dir, its
      `best/` or a checkpoint).
    teacher_checkpoint: the pretrained teacher that run fine-tuned (its
      architecture; default: the package's default teacher).
    prediction_weight: weight of the prediction-layer soft cross-entropy.
    temperature: T of the soft cross-entropy.
    hard_label_weight: weight of the ordinary fine-tuning loss (0 in TinyBERT).
    embedding_weight, hidden_weight, attention_weight: weights of TinyBERT's
      intermediate losses (its first task-specific step).
    layer_map: g(1..M), 1-based teacher layers (default: uniform).
    **kwargs: the arguments of `IntentSlotTask` (the student's
      `init_checkpoint`, `vocab`: the teacher's vocab.txt, batch, ...).
  """

  def __init__(self,
               teacher_run: Optional[str] = None,
               teacher_checkpoint: Optional[str] = None,
               prediction_weight: float = 1.0,
               temperature: float = 1.0,
               hard_label_weight: float = 0.0,
               embedding_weight: float = 0.0,
               hidden_weight: float = 0.0,
               attention_weight: float = 0.0,
               layer_map: Optional[Sequence[int]] = None,
               **kwargs):
    if not teacher_run:
      raise ValueError("TinyBertSnipsTask.teacher_run is required: a "
                       "intent_slot run of the teacher.")
    labels = os.path.join(_run_dir(teacher_run), intent_slot_task.LABELS_FILE)
    if kwargs.get("labels_file") is None and tf.io.gfile.exists(labels):
      # The teacher's label ids (otherwise both build them from the train
      # split, in the same order).
      kwargs["labels_file"] = labels
    # Not FinetuneTask's teacher_checkpoint: the student is what fine-tunes.
    super().__init__(**kwargs)
    self.teacher_run = teacher_run
    self.teacher_checkpoint_dir = (teacher_checkpoint or
                                   assets.default_teacher_dir())
    self.loss_weights = {"prediction": float(prediction_weight),
                         "hard_label": float(hard_label_weight),
                         "embedding": float(embedding_weight),
                         "hidden": float(hidden_weight),
                         "attention": float(attention_weight)}
    for name, value in self.loss_weights.items():
      if value < 0:
        raise ValueError(f"{name}_weight must be >= 0; received {value}.")
    if not any(self.loss_weights.values()):
      raise ValueError("TinyBertSnipsTask needs a positive weight; received "
                       f"{self.loss_weights}.")
    if temperature <= 0:
      raise ValueError(f"temperature must be positive; received "
                       f"{temperature}.")
    self.temperature = float(temperature)
    self.requested_layer_map = None if layer_map is None else list(layer_map)
    self.layer_map = None
    self.teacher_loaded = False

  def _intermediate(self):
    return [n for n in ("embedding", "hidden", "attention")
            if self.loss_weights[n] > 0]

  def _teacher_path(self):
    return checkpointing.resolve_checkpoint(self.teacher_run,
                                            what="fine-tuned teacher run")

  def missing_files(self):
    missing = dict(super().missing_files())
    if not tf.io.gfile.exists(self.teacher_checkpoint_dir):
      missing["teacher checkpoint"] = (
          f"not found: {self.teacher_checkpoint_dir}")
    try:
      self._teacher_path()
    except FileNotFoundError as e:
      missing["fine-tuned teacher"] = str(e)
    return missing

  def build_teacher(self):
    """The fine-tuned teacher `JointIntentSlotModel`, frozen, loaded."""
    try:
      path = self._teacher_path()
    except FileNotFoundError:
      path = None  # Dry run without the run: the architecture only.
    config = dict(
        teacher_loader.read_bert_config(self.teacher_checkpoint_dir)[1])
    config["return_word_embeddings"] = True
    teacher = models.JointIntentSlotModel(
        networks.PlainBertEncoder(**config),
        num_intents=self.labels.num_intents, num_slots=self.labels.num_slots,
        name="teacher")
    teacher.trainable = False
    if path is not None:
      # A teacher run records the vocabulary as the teacher's, a student run
      # as the student's; either must be the one this task tokenizes with.
      fingerprint = self.vocab_fingerprints()[self.vocab_role]
      checkpointing.check_vocab_fingerprints(
          path, {"teacher": fingerprint, "student": fingerprint},
          purpose="loading the fine-tuned teacher")
      status = tf.train.Checkpoint(model=teacher).read(path)
      status.assert_existing_objects_matched().expect_partial()
      self.teacher_loaded = True
    return teacher

  def build_model(self):
    encoder = self.build_encoder()
    config = dict(encoder.get_config(), return_word_embeddings=True)
    student = models.JointIntentSlotModel(
        networks.PlainBertEncoder(**config),
        num_intents=self.labels.num_intents, num_slots=self.labels.num_slots,
        dropout_rate=self.dropout_rate)
    teacher = self.build_teacher()
    self.layer_map = losses.uniform_layer_map(
        config["num_layers"],
        teacher.encoder_network.get_config()["num_layers"],
        self.requested_layer_map)
    names = [n for n in ("embedding", "hidden") if n in self._intermediate()]
    return distillation_task.DistillationModel(
        student, teacher, distillation_task.make_projections(
            names, config["hidden_size"],
            distillation_task.encoder_width(teacher.encoder_network)))

  def initialize(self, model):
    super().initialize(model.student)

  def checkpoint_items(self, model):
    if not self.teacher_loaded:
      raise FileNotFoundError(
          f"Task {self.task_name} cannot train: the fine-tuned teacher "
          f"{self.teacher_run} was not found.")
    items = {"model": model.student}
    if model.projections:
      items["distillation_projections"] = model.projections
    return items

  def compute_loss(self, model, features, training):
    student = joint_forward(model.student, features, training)
    hard, metrics = intent_slot_task.joint_intent_slot_loss(student, features)
    loss = self.loss_weights["hard_label"] * hard
    teacher = joint_forward(model.teacher, features, training=False)
    if self.loss_weights["prediction"]:
      queries = tf.ones_like(features["intent_id"], tf.float32)
      intent_sum, count = losses.masked_sum(losses.soft_cross_entropy(
          teacher["intent_logits"], student["intent_logits"],
          self.temperature), queries)
      slot_sum, pieces = losses.masked_sum(losses.soft_cross_entropy(
          teacher["slot_logits"], student["slot_logits"], self.temperature),
                                           features["slot_weights"])
      loss += self.loss_weights["prediction"] * (
          distillation_task.mean_term(intent_sum, count) +
          distillation_task.mean_term(slot_sum, pieces))
      metrics["distill/intent_soft_ce"] = base_task.metric(intent_sum, count)
      metrics["distill/slot_soft_ce"] = base_task.metric(slot_sum, pieces)
    intermediate = self._intermediate()
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
    return (f"{super().describe()}; TinyBERT task-specific distillation from "
            f"{self.teacher_run}, losses {used}, T {self.temperature}")


def _run_dir(path):
  """The directory of a run, of its `best/`, or of a checkpoint prefix."""
  path = os.fspath(path)
  if path.endswith(".index"):
    path = path[:-len(".index")]
  if not tf.io.gfile.isdir(path):
    path = os.path.dirname(path)
  return path
