"""Teacher-student pretraining: the frozen teacher, the student, what they share.

The baselines that Zhao et al. (EACL 2021), Section 4, compare mixed-vocabulary
training with (DistilBERT, TinyBERT, PKD) and the cross-vocabulary options of
stage II all run a frozen teacher and a trainable student on the same batch.
This module holds what they share:

* `DistillationTask`: the base of those tasks. Its student is one
  `StudentSpec` and its teacher one `TeacherSpec` (`tasks/student_spec.py`,
  `tasks/teacher_spec.py`), each built by its own builder, so the tasks take
  two specs instead of forwarding a dozen arguments. The
  baselines' student reads the teacher's vocabulary (`student_reads =
  'teacher'`, as in the paper's comparison); stage II across vocabularies
  (`stage2_distill.py`) reads the student's.
* `DistillationModel`: the container the trainer sees (student, frozen
  teacher, the learned maps W of the losses); the student alone is
  checkpointed under the names stage II uses (`model`, `student_encoder`).
* `attention_logits` / `intermediate_losses`: TinyBERT's embedding,
  hidden-state and attention losses (Jiao et al., 2020, Section 3.1), which
  need the models' layers; the pure-tensor losses are in `losses.py`.

Which teacher gives soft targets: the default teacher (all-MiniLM-L6-v2)
ships no MLM head, so a head created fresh would give random soft targets.
The tasks refuse that; give them a stage I run
(`TeacherSpec.stage1_checkpoint`), whose teacher-vocabulary and
student-vocabulary heads are trained, or a pretrained checkpoint with an MLM
head (google-research/bert's BERT-LARGE, the paper's teacher, has one).
TinyBERT's general distillation uses no head and can start from MiniLM
directly.
"""

import math
from typing import Dict, List, Optional, Sequence

import tensorflow as tf
import tf_keras

from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.networks import bert_variables
from mixvocab_tf.tasks import student_spec as student_spec_lib
from mixvocab_tf.tasks import teacher_spec as teacher_spec_lib
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task

#: This replica's share of a mean over the global batch (`losses.mean_term`).
mean_term = losses.mean_term


class DistillationModel(tf_keras.Model):
  """A student, a frozen teacher and the learned maps of the losses.

  What the trainer builds and the task's `compute_loss` reads; calling it runs
  the student. Only the student and the maps train; the task checkpoints the
  student and the maps, not the teacher. A training container, not a model to
  save (hence not Keras-serializable): save `student` or its encoder.

  Args:
    student: the student (`MLMPretrainer`).
    teacher: the teacher (`DualVocabPretrainer`); frozen here.
    projections: name -> `Dense` mapping student states to the teacher's
      width (TinyBERT's W_e and W_h, and the same for DistilBERT's cosine and
      PKD's losses when the widths differ).
    **kwargs: of `tf_keras.Model`.
  """

  def __init__(self, student, teacher, projections=None,
               name="distillation", **kwargs):
    super().__init__(name=name, **kwargs)
    self.student = student
    self.teacher = teacher
    self.teacher.trainable = False
    self.projections = dict(projections or {})
    self.built = True

  def call(self, inputs, training=None):
    return self.student(inputs, training=training)


def make_projections(names: Sequence[str], student_width: int,
                     teacher_width: int) -> Dict[str, tf_keras.layers.Dense]:
  """Dense maps student width -> teacher width, built now (TinyBERT's W)."""
  out = {}
  for name in names:
    layer = tf_keras.layers.Dense(
        teacher_width, name=name,
        kernel_initializer=tf_keras.initializers.TruncatedNormal(stddev=0.02))
    with tf.init_scope():
      layer.build((None, None, student_width))
    out[name] = layer
  return out


def project(model, name, states):
  """`states` through the map `name` if the model has one, else unchanged."""
  layer = model.projections.get(name)
  return states if layer is None else layer(states)


def encoder_width(encoder):
  return int(encoder.get_config()["hidden_size"])


def encoder_heads(encoder):
  return int(encoder.get_config()["num_attention_heads"])


def hidden_states(outputs) -> List[tf.Tensor]:
  """[embedding output, layer 1, ..., layer L]: the inputs of the layers, then
  the last output (index m is layer m of the layer map, 0 the embeddings)."""
  if "word_embeddings" not in outputs:
    raise KeyError("The encoder must be built with return_word_embeddings="
                   "True to give the embedding-layer output.")
  return [outputs["word_embeddings"]] + list(outputs["encoder_outputs"])


def attention_logits(transformer_layer, layer_input):
  """Pre-softmax attention scores [B, heads, L, L] of one transformer block.

  TinyBERT distils unnormalised scores; `return_attention_scores` gives the
  softmax probabilities, so the scores are recomputed from the block's input
  with its own query and key projections (as `MultiHeadAttention` computes
  them; the attention mask is not added, padding is left to the loss). Reads
  private attributes of `official.nlp.modeling.layers.TransformerEncoderBlock`
  and `tf_keras.layers.MultiHeadAttention`, as `networks.bert_variables`
  does.

  Args:
    transformer_layer: a `TransformerEncoderBlock`.
    layer_input: its input [B, L, d] (the previous layer's output, or the
      embedding output for the first layer), from the same forward pass.
  """
  # pylint: disable=protected-access
  attention = transformer_layer._attention_layer
  x = layer_input
  if transformer_layer._norm_first:
    x = transformer_layer._attention_layer_norm(x)
  query = attention._query_dense(x)
  key = attention._key_dense(x)
  query = query * (1.0 / math.sqrt(float(attention._key_dim)))
  return tf.einsum(attention._dot_product_equation, key, query)
  # pylint: enable=protected-access


def intermediate_losses(model, student_outputs, teacher_outputs, input_mask,
                        layer_map, embedding=True, hidden=True,
                        attention=True):
  """TinyBERT's embedding, hidden-state and attention losses as (sum, count).

  Student layer m is compared with teacher layer g(m) = layer_map[m - 1] at
  the same token positions (both read the same batch); the student's states
  go through W_e (`model.projections['embedding']`) and W_h
  (`model.projections['hidden']`, shared by the layers) when the model has
  them. Sums run over real tokens (and layers); counts are tokens (for the
  attention: token pairs times heads, once per layer).

  Returns:
    {'embedding'|'hidden'|'attention': (sum, count)} for the requested ones.
  """
  student_states = hidden_states(student_outputs)
  teacher_states = hidden_states(teacher_outputs)
  mask = tf.cast(input_mask, tf.float32)
  out = {}
  if embedding:
    error = losses.mean_squared_error(
        project(model, "embedding", student_states[0]), teacher_states[0])
    out["embedding"] = losses.masked_sum(error, mask)
  if hidden:
    total, count = tf.constant(0.0), tf.constant(0.0)
    for m, g in enumerate(layer_map, start=1):
      error = losses.mean_squared_error(
          project(model, "hidden", student_states[m]), teacher_states[g])
      layer_sum, layer_count = losses.masked_sum(error, mask)
      total, count = total + layer_sum, layer_count
    out["hidden"] = (total, count)
  if attention:
    student_layers = model.student.encoder_network.transformer_layers
    teacher_layers = model.teacher.encoder_network.transformer_layers
    heads = encoder_heads(model.student.encoder_network)
    total, count = tf.constant(0.0), tf.constant(0.0)
    for m, g in enumerate(layer_map, start=1):
      student_scores = attention_logits(student_layers[m - 1],
                                        student_states[m - 1])
      teacher_scores = losses.group_heads(
          attention_logits(teacher_layers[g - 1], teacher_states[g - 1]),
          heads)
      layer_sum, layer_count = losses.attention_score_error(
          student_scores, teacher_scores, input_mask)
      total, count = total + layer_sum, layer_count
    out["attention"] = (total, count)
  return out


def model_features(features, with_positions=True, vocab_id=None):
  """The model inputs of a batch; with `vocab_id`, every token tagged with it.

  The teacher reads the student's own segmentation (or, for the baselines,
  its own vocabulary) at the same positions: the ids and masks are the
  student's, only the tag that picks its embedding table is set.

  Args:
    features: the batch.
    with_positions: keep `masked_lm_positions` (the MLM heads run).
    vocab_id: None (keep the batch's tags), 0 (teacher) or 1 (student).
  """
  names = models.mlm_pretrainer.FEATURE_NAMES + (
      ("masked_lm_positions",) if with_positions else ())
  out = {k: v for k, v in features.items() if k in names}
  if vocab_id is not None:
    out["input_vocab_ids"] = tf.fill(tf.shape(features["input_word_ids"]),
                                     tf.constant(vocab_id, tf.int32))
  return out


def copy_teacher_layers(student, teacher, layer_map) -> List[str]:
  """Initialises the student from teacher layers g(m) (DistilBERT, Section 3).

  Copies embeddings, the mapped transformer layers, the pooler and the MLM
  head (transform and bias) of the teacher into a student of the same width,
  heads, feed-forward width and vocabulary. Position embeddings are copied
  for the positions both have.

  Args:
    student: an `MLMPretrainer` over the teacher's vocabulary.
    teacher: the teacher `DualVocabPretrainer` (its teacher side is copied).
    layer_map: g(1..M), 1-based teacher layers.

  Returns:
    The student variable names (google naming) that were assigned.

  Raises:
    ValueError: a shape differs (widths, heads, vocabulary...).
  """
  student_vars = bert_variables.encoder_variables(student.encoder_network)
  teacher_vars = bert_variables.encoder_variables(teacher.encoder_network)
  pairs = []
  for name, variable in student_vars.items():
    source = name
    if name.startswith("bert/encoder/layer_"):
      index, rest = name[len("bert/encoder/layer_"):].split("/", 1)
      source = f"bert/encoder/layer_{layer_map[int(index)] - 1}/{rest}"
    pairs.append((name, variable, teacher_vars[source]))
  student_head = bert_variables.masked_lm_variables(student.masked_lm)
  teacher_head = bert_variables.masked_lm_variables(teacher.masked_lm)
  pairs.extend((name, variable, teacher_head[name])
               for name, variable in student_head.items())
  for i, (name, variable, source) in enumerate(pairs):
    if name.endswith("position_embeddings") and (
        variable.shape[1:] == source.shape[1:]):
      # Positions the teacher never had keep their fresh values.
      rows = min(variable.shape[0], source.shape[0])
      pairs[i] = (name, variable, tf.concat(
          [source[:rows], variable[rows:]], axis=0))
      continue
    if variable.shape != source.shape:
      raise ValueError(
          f"Cannot initialise the student from the teacher: {name} has shape "
          f"{variable.shape.as_list()} in the student and "
          f"{source.shape.as_list()} in the teacher (the student needs the "
          "teacher's width, heads, feed-forward width and vocabulary).")
  for _, variable, source in pairs:
    variable.assign(source)
  return [name for name, _, _ in pairs]


class DistillationTask(mlm_task.MlmTask):
  """A student distilled from a frozen teacher on the same batch.

  The base of the DistilBERT, TinyBERT and PKD baselines (the student reads
  the teacher's vocabulary) and of stage II across vocabularies (it reads
  the student's); subclasses give the loss (`compute_loss`) and the maps they
  learn (`projection_names`).

  Args:
    student: the student (`StudentSpec`; default: gin's bindings of
      `StudentSpec`). The baselines' student reads the teacher's
      vocabulary, so its `init_checkpoint` (a stage I table) is refused
      there.
    teacher: the frozen teacher (`TeacherSpec`; default: gin's bindings of
      `TeacherSpec`).
    layer_map: g(1..M), 1-based teacher layers per student layer (default:
      uniform, `losses.uniform_layer_map`).
    inputs: what to read (`MlmInputs`); the text is segmented with the
      vocabulary the student reads.
  """

  input_mode = "teacher"
  loss_vocab_ids = (text_lib.TEACHER_VOCAB_ID,)
  #: The vocabulary the student reads, and the teacher's input tag:
  #: 'teacher' (the single-vocabulary baselines) or 'student'.
  student_reads = "teacher"
  #: Names of the student -> teacher width maps the method learns.
  projection_names = ()

  # Keyword-only: subclasses take their loss's arguments and pass these on
  # as **kwargs, so no subclass repeats them.
  def __init__(self,
               *,
               student: Optional[student_spec_lib.StudentSpec] = None,
               teacher: Optional[teacher_spec_lib.TeacherSpec] = None,
               layer_map: Optional[Sequence[int]] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None):
    self.student_spec = (student if student is not None
                         else student_spec_lib.StudentSpec())
    self.teacher_spec = (teacher if teacher is not None
                         else teacher_spec_lib.TeacherSpec())
    if self.student_reads == "teacher" and self.student_spec.init_checkpoint:
      raise ValueError(
          f"{type(self).__name__}'s student reads the teacher's vocabulary, "
          "so it cannot start from a stage I student table; received "
          f"StudentSpec.init_checkpoint = {self.student_spec.init_checkpoint!r}"
          ", expected None.")
    # Student-vocabulary input needs no teacher vocabulary (`MlmTask.vocab`).
    super().__init__(
        inputs=inputs,
        teacher_vocab=(self.teacher_spec.vocab_path
                       if self.student_reads == "teacher" else None),
        student_vocab=self.student_spec.vocab_path)
    # The embedding-layer output is the first layer's input (attention).
    self.encoder_config = self.student_spec.encoder_config(
        self.input_config.seq_length, return_word_embeddings=True)
    self.student_preset = self.student_spec.preset
    self.requested_layer_map = None if layer_map is None else list(layer_map)
    self.layer_map = None

  @property
  def teacher_input_vocab_id(self):
    """The tag the teacher reads every token with (the student's ids)."""
    return (text_lib.TEACHER_VOCAB_ID if self.student_reads == "teacher"
            else text_lib.STUDENT_VOCAB_ID)

  # ---------------------------------------------------------------------------
  # Vocabularies: the one the student reads is the run's.

  def fingerprinted_vocabs(self):
    return (self.student_reads,)

  def vocab_fingerprints(self):
    fingerprint = text_lib.vocab_fingerprint(self.vocab(self.student_reads))
    if self.student_reads == "teacher":
      # The run's "student vocabulary" is the one its student reads: the
      # teacher's (fine-tuning checks it).
      return {"teacher": fingerprint, "student": fingerprint}
    return {"student": fingerprint}

  def _vocab_size(self, which, default):
    try:
      return len(self.vocab(which))
    except FileNotFoundError:
      return default

  # ---------------------------------------------------------------------------
  # Model.

  def build_student(self, vocab_size):
    return self.student_spec.build(self.encoder_config, vocab_size)

  def build_teacher(self):
    return self.teacher_spec.build(
        student_vocab_size=self._vocab_size(
            "student", networks.PAPER_STUDENT_VOCAB_SIZE),
        student_embedding_width=self.encoder_config["hidden_size"],
        vocab_fingerprints={self.student_reads: self.vocab_fingerprints()[
            self.student_reads]})

  def build_model(self):
    # The order of the builds decides the initial weights for a seed.
    if self.student_reads == "student":
      student = self.build_student(len(self.vocab("student")))
      return self.assemble(student, self.build_teacher())
    teacher = self.build_teacher()
    teacher_vocab_size = teacher.encoder_network.get_config()[
        "teacher_vocab_size"]
    vocab_size = self._vocab_size("teacher", teacher_vocab_size)
    self.teacher_spec.check_vocab_size(vocab_size, teacher_vocab_size)
    return self.assemble(self.build_student(vocab_size), teacher)

  def assemble(self, student, teacher):
    """The `DistillationModel` of `student` and `teacher`, with the maps."""
    student_width = encoder_width(student.encoder_network)
    teacher_width = encoder_width(teacher.encoder_network)
    self.layer_map = losses.uniform_layer_map(
        student.encoder_network.get_config()["num_layers"],
        teacher.encoder_network.get_config()["num_layers"],
        self.requested_layer_map)
    return DistillationModel(
        student, teacher,
        make_projections(self.projection_names, student_width, teacher_width))

  def initialize(self, model):
    self.student_spec.initialize(model.student,
                                 self.vocab_fingerprints()["student"])

  def checkpoint_items(self, model):
    # Called by the trainer when it trains (not by the dry run): the last
    # moment to refuse a resumed run whose teacher could not be loaded.
    self.teacher_spec.require_loaded(self.task_name)
    items = {"model": model.student,
             student_spec_lib.STUDENT_ENCODER_KEY:
                 model.student.encoder_network}
    if model.projections:
      items["distillation_projections"] = model.projections
    return items

  def encoder_configs(self, model):
    return {student_spec_lib.STUDENT_ENCODER_KEY:
                model.student.encoder_network.get_config()}

  def missing_files(self):
    missing = dict(super().missing_files())
    missing.update(self.student_spec.missing_files())
    missing.update(self.teacher_spec.missing_files())
    return missing

  # ---------------------------------------------------------------------------
  # Forward passes.

  def run_teacher(self, model, features, with_positions=True):
    return model.teacher(
        model_features(features, with_positions,
                       vocab_id=self.teacher_input_vocab_id), training=False)

  def run_student(self, model, features, training, with_positions=True):
    return model.student(model_features(features, with_positions),
                         training=training)

  def masked_lm_sums(self, teacher, student, features, soft_loss,
                     temperature):
    """Soft-target and MLM sums at the masked positions (the baselines).

    Args:
      teacher, student: the outputs of `run_teacher` and `run_student`.
      features: the batch.
      soft_loss: `losses.kl_divergence` (DistilBERT) or
        `losses.soft_cross_entropy` (PKD).
      temperature: T of the soft targets.

    Returns:
      (soft_sum, mlm_sum, correct, count): sums over this replica's masked
      tokens of the soft loss, the student's cross-entropy and its correct
      predictions, and their number.
    """
    weights = tf.cast(features["masked_lm_weights"], tf.float32)
    soft_sum, count = losses.masked_sum(
        soft_loss(teacher["teacher_mlm_logits"], student["mlm_logits"],
                  temperature), weights)
    mlm_sum, _, correct = mlm_task.masked_lm_sums(
        student["mlm_logits"], features, text_lib.TEACHER_VOCAB_ID)
    return soft_sum, mlm_sum, correct, count

  def describe(self):
    reads = (" over the teacher vocabulary" if self.student_reads == "teacher"
             else "")
    return (f"{super().describe()}, "
            f"{self.student_spec.describe(self.encoder_config)}{reads}, "
            f"{self.teacher_spec.describe()}")
