"""Masked-LM pretraining over two vocabularies: inputs and the loss of Eq. 1.

The base of the pretraining tasks of Zhao et al., "Extremely Small BERT Models
from Mixed-Vocabulary Training" (EACL 2021), Section 3. A masked token carries
the vocabulary it was segmented with (`masked_lm_vocab_ids`: 0 teacher, 1
student) and its id in that vocabulary; the model predicts it with the softmax
of that vocabulary (`teacher_mlm_logits` or `student_mlm_logits`, one row per
masked position). Eq. 1 adds the cross-entropies of the teacher-vocabulary
tokens under the teacher softmax and of the student-vocabulary tokens under
the student softmax; Eq. 2 (stage II) is the special case with only student
tokens. The sum is divided by the number of masked tokens in the global batch,
so the objective is the mean cross-entropy per masked token, whatever the
number of replicas.

Subclasses build the model and choose the input mode ("mixed" for stage I,
"student" for stage II); this module reads the text
(`mixvocab_tf.text.pretraining_dataset`) and computes the loss and metrics.
"""

import os
from typing import Dict, Optional

import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import text as text_lib
from mixvocab_tf.core import base_task
from mixvocab_tf.core import cross_entropy
from mixvocab_tf.tasks.pretraining import mlm_inputs

#: Vocabulary tag -> name used in outputs and metrics.
VOCABS = {text_lib.TEACHER_VOCAB_ID: "teacher",
          text_lib.STUDENT_VOCAB_ID: "student"}


def masked_lm_sums(logits, features, vocab_id):
  """Cross-entropy sum, token count and correct count for one vocabulary.

  Args:
    logits: [batch, max_predictions, vocab_size] logits of vocabulary
      `vocab_id` at the masked positions.
    features: the batch (`masked_lm_ids`, `masked_lm_vocab_ids`,
      `masked_lm_weights`).
    vocab_id: 0 (teacher) or 1 (student).

  Returns:
    (loss_sum, count, correct), float32 scalars over this batch's masked tokens
    of that vocabulary.
  """
  weights = tf.cast(features["masked_lm_weights"], tf.float32)
  if "masked_lm_vocab_ids" in features:
    in_vocab = tf.equal(features["masked_lm_vocab_ids"], vocab_id)
    weights = weights * tf.cast(in_vocab, tf.float32)
  else:
    in_vocab = tf.ones_like(features["masked_lm_ids"], tf.bool)
  # The other vocabulary's ids may be out of this softmax's range: replace them
  # (their weight is 0) so the cross-entropy stays finite.
  labels = tf.where(in_vocab, features["masked_lm_ids"],
                    tf.zeros_like(features["masked_lm_ids"]))
  logits = tf.cast(logits, tf.float32)
  # The fused kernel's values from one oneDNN softmax, 3x faster over 5K
  # and 30K words (`core/cross_entropy.py`).
  losses = cross_entropy.sparse_softmax_cross_entropy(labels=labels,
                                                      logits=logits)
  correct = tf.cast(
      tf.equal(tf.argmax(logits, axis=-1, output_type=labels.dtype), labels),
      tf.float32)
  return (tf.reduce_sum(losses * weights), tf.reduce_sum(weights),
          tf.reduce_sum(correct * weights))


def mlm_loss(outputs, features, vocab_ids=(0, 1)):
  """This replica's share of Eq. 1, and per-vocabulary metrics.

  Args:
    outputs: the model's outputs with `teacher_mlm_logits` and/or
      `student_mlm_logits`.
    features: the batch.
    vocab_ids: the vocabularies whose tokens count (those with logits).

  Returns:
    (loss, metrics): the loss sums over this replica's masked tokens divided
    by the global count; metrics `{vocab}_mlm/loss` and `{vocab}_mlm/accuracy`
    as `base_task.metric` pairs.
  """
  loss_sum = tf.constant(0.0)
  count = tf.constant(0.0)
  metrics = {}
  for vocab_id in vocab_ids:
    name = VOCABS[vocab_id]
    key = f"{name}_mlm_logits"
    if key not in outputs:
      raise KeyError(f"The model has no {key!r} output (it has "
                     f"{sorted(outputs)}); the task needs one per vocabulary "
                     f"of {[VOCABS[v] for v in vocab_ids]}.")
    vocab_loss, vocab_count, vocab_correct = masked_lm_sums(
        outputs[key], features, vocab_id)
    loss_sum += vocab_loss
    count += vocab_count
    metrics[f"{name}_mlm/loss"] = base_task.metric(vocab_loss, vocab_count)
    metrics[f"{name}_mlm/accuracy"] = base_task.metric(vocab_correct,
                                                       vocab_count)
  global_count = base_task.global_sum(count)
  loss = tf.math.divide_no_nan(loss_sum, global_count)
  return loss, metrics


class MlmTask(base_task.Task):
  """Masked-LM pretraining on text; subclasses build the model.

  Args:
    inputs: what to read (`MlmInputs`; default: built with gin's bindings).
    teacher_vocab: the teacher's vocab.txt (default: the default teacher's).
    student_vocab: the student's vocab.txt (default: the shipped one).
  """

  #: "mixed" (stage I) or "student" (stage II); set by subclasses.
  input_mode = "mixed"
  #: Vocabularies whose masked tokens the loss counts.
  loss_vocab_ids = (text_lib.TEACHER_VOCAB_ID, text_lib.STUDENT_VOCAB_ID)

  def __init__(self,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               teacher_vocab: Optional[str] = None,
               student_vocab: Optional[str] = None):
    if inputs is None:
      inputs = mlm_inputs.MlmInputs()
    if not isinstance(inputs, mlm_inputs.MlmInputs):
      raise ValueError(f"inputs must be an MlmInputs; received {inputs!r}.")
    super().__init__(global_batch_size=inputs.global_batch_size)
    self.inputs = inputs
    self.input_config = inputs.pipeline_config(self.input_mode)
    self.teacher_vocab_path = teacher_vocab
    self.student_vocab_path = student_vocab or assets.default_student_vocab()
    self._vocabs = {}

  # ---------------------------------------------------------------------------
  # Vocabularies.

  def _teacher_vocab_path(self):
    if self.teacher_vocab_path is None:
      self.teacher_vocab_path = assets.default_teacher_vocab()
    return self.teacher_vocab_path

  def vocab(self, which: str):
    """The tokens of the 'teacher' or 'student' vocabulary (cached)."""
    if (which == "teacher" and self.input_mode == "student" and
        self.teacher_vocab_path is None):
      # Student-only text needs no teacher vocabulary: the pipeline's teacher
      # side is never used when every word takes the student's segmentation,
      # so unless one is given the student's vocabulary stands in for it.
      which = "student"
    if which not in self._vocabs:
      path = (self._teacher_vocab_path() if which == "teacher"
              else self.student_vocab_path)
      self._vocabs[which] = text_lib.load_vocab(path)
    return self._vocabs[which]

  def vocab_fingerprints(self) -> Dict[str, str]:
    return {which: text_lib.vocab_fingerprint(self.vocab(which))
            for which in self.fingerprinted_vocabs()}

  def fingerprinted_vocabs(self):
    """The vocabularies the run's checkpoints depend on."""
    return ("teacher", "student")

  def missing_files(self):
    missing = {}
    for which in self.fingerprinted_vocabs():
      try:
        path = (self._teacher_vocab_path() if which == "teacher"
                else self.student_vocab_path)
      except FileNotFoundError as e:
        missing[f"{which} vocabulary"] = str(e)
        continue
      if not os.path.isfile(path) and not tf.io.gfile.exists(path):
        missing[f"{which} vocabulary"] = f"not found: {path}"
    problem = self.inputs.missing()
    if problem:
      missing["input files"] = problem
    return missing

  # ---------------------------------------------------------------------------
  # Inputs.

  def build_inputs(self, input_context=None, training=True):
    return self._dataset(
        self.inputs.pipeline_config(self.input_mode, repeat=training),
        input_context)

  def _dataset(self, config, input_context):
    """Per-replica batches of `config`, sharded as `inputs.sharding` says."""
    teacher, student = self.vocab("teacher"), self.vocab("student")
    if (self.inputs.sharding == "pipeline" or input_context is None or
        input_context.num_input_pipelines == 1 and
        input_context.num_replicas_in_sync == 1):
      return text_lib.pretraining_dataset(
          config, teacher, student, self.global_batch_size,
          input_context=input_context)
    # "global_batch": every pipeline computes the whole global batch and keeps
    # the rows of its replicas, in replica order.
    per_replica = input_context.get_per_replica_batch_size(
        self.global_batch_size)
    replicas_per_pipeline = (input_context.num_replicas_in_sync //
                             input_context.num_input_pipelines)
    rows = per_replica * replicas_per_pipeline
    first_row = input_context.input_pipeline_id * rows
    dataset = text_lib.pretraining_dataset(config, teacher, student,
                                           self.global_batch_size)

    def own_rows(batch):
      return {k: tf.reshape(v[first_row:first_row + rows],
                            [replicas_per_pipeline, per_replica] +
                            v.shape[1:].as_list())
              for k, v in batch.items()}

    return dataset.map(own_rows).unbatch()

  # ---------------------------------------------------------------------------
  # Loss.

  def compute_loss(self, model, features, training):
    outputs = model(features, training=training)
    return mlm_loss(outputs, features, self.loss_vocab_ids)

  def describe(self):
    config = self.input_config
    source = config.tfds_name or config.input_files
    if isinstance(source, (list, tuple)) and len(source) > 2:
      source = f"{len(source)} files ({os.path.dirname(source[0])})"
    return (f"{self.task_name}: {config.mode} input from {source}, global "
            f"batch {self.global_batch_size} x {config.seq_length} tokens, "
            f"{config.max_predictions} masks")
