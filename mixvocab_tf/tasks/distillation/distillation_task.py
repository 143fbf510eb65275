"""Teacher-student pretraining: the frozen teacher, the student, what they share.

The baselines that Zhao et al. (EACL 2021), Section 4, compare mixed-vocabulary
training with (DistilBERT, TinyBERT, PKD) and the cross-vocabulary options of
stage II all run a frozen teacher and a trainable student on the same batch.
This module holds what they share:

* `TeacherSource`: builds the teacher, a `DualVocabPretrainer`, from a
  pretrained BERT (Hugging Face or google-research/bert) and optionally a
  stage I run, whose weights replace the pretrained ones. The teacher is
  loaded in `build_model`, not in `Task.initialize`: it is kept out of the
  student's checkpoints (STYLE.md, 8), so a resumed run must load it again.
* `DistillationModel`: the container the trainer sees (student, frozen
  teacher, the learned maps W of the losses); the student alone is
  checkpointed under the names stage II uses (`model`, `student_encoder`).
* `attention_logits` / `intermediate_losses`: TinyBERT's embedding,
  hidden-state and attention losses (Jiao et al., 2020, Section 3.1), used by
  `tinybert.py` and `stage2_distill.py`.
* `DistillationTask`: the base of the single-vocabulary baselines: the
  student reads the teacher's vocabulary (`mode='teacher'` input), as in the
  paper's comparison.

Which teacher gives soft targets: the default teacher (all-MiniLM-L6-v2)
ships no MLM head, so a head created fresh would give random soft targets.
The tasks refuse that; give them a stage I run (`teacher_init_checkpoint`),
whose teacher-vocabulary and student-vocabulary heads are trained, or a
pretrained checkpoint with an MLM head (google-research/bert's BERT-LARGE,
the paper's teacher, has one). TinyBERT's general distillation uses no head
and can start from MiniLM directly.
"""

import math
import os
from typing import Dict, List, Optional, Sequence

from absl import logging
import tensorflow as tf
import tf_keras

from mixvocab_tf import data as data_lib
from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.networks import bert_variables
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.distillation import losses
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.tasks.pretraining import student_mlm_task
from mixvocab_tf.core import checkpointing

_TABLE_KEY = f"{stage1.STUDENT_TABLE_KEY}/.ATTRIBUTES/VARIABLE_VALUE"


def _exists(path):
  return bool(path) and tf.io.gfile.exists(path)


def default_teacher_vocab(teacher_checkpoint):
  """The vocab.txt beside a teacher checkpoint (both layouts keep it there)."""
  base = (teacher_checkpoint if not teacher_checkpoint.endswith(".ckpt")
          else os.path.dirname(teacher_checkpoint))
  return os.path.join(base, "vocab.txt")


class TeacherSource:
  """Where the frozen teacher comes from, and whether it was loaded.

  Args:
    teacher_checkpoint: a pretrained BERT (Hugging Face directory or
      google-research/bert checkpoint); default: the package's default
      teacher. Gives the architecture, and the weights when there is no
      stage I run.
    teacher_config: a config file giving the architecture when the checkpoint
      is not reachable (dry runs).
    stage1_checkpoint: a stage I run (model_dir or checkpoint) of that
      teacher; its weights (teacher, student table, up-projection, both MLM
      heads) replace the pretrained ones.
  """

  def __init__(self, teacher_checkpoint: Optional[str] = None,
               teacher_config: Optional[str] = None,
               stage1_checkpoint: Optional[str] = None):
    self.teacher_checkpoint = (teacher_checkpoint or
                               data_lib.default_teacher_dir())
    self.teacher_config = teacher_config
    self.stage1_checkpoint = stage1_checkpoint
    #: Set by `build`: whether weights were loaded, and whether its
    #: teacher-vocabulary / student-vocabulary MLM heads are trained ones.
    self.loaded = False
    self.trained_heads = {"teacher": False, "student": False}
    self.loaded_from = None

  def _stage1_path(self):
    return checkpointing.resolve_checkpoint(self.stage1_checkpoint,
                                            what="stage I teacher checkpoint")

  def missing_files(self) -> Dict[str, str]:
    missing = {}
    if self.stage1_checkpoint:
      try:
        self._stage1_path()
      except FileNotFoundError as e:
        missing["stage I teacher checkpoint"] = str(e)
    if not _exists(self.teacher_checkpoint) and not (
        self.stage1_checkpoint and _exists(self.teacher_config)):
      missing["teacher checkpoint"] = f"not found: {self.teacher_checkpoint}"
    return missing

  def student_table_shape(self, default):
    """[vocab, width] of the stage I student table, or `default` without one."""
    if not self.stage1_checkpoint:
      return list(default)
    try:
      path = self._stage1_path()
    except FileNotFoundError:
      return list(default)
    shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    if _TABLE_KEY not in shapes:
      raise ValueError(
          f"{path} holds no stage I student table ({stage1.STUDENT_TABLE_KEY}); "
          "the teacher's stage I checkpoint must be a stage I (or dual) run.")
    return list(shapes[_TABLE_KEY])

  def build(self, student_vocab_size: int, student_embedding_width: int,
            vocab_fingerprints: Dict[str, str]):
    """The teacher `DualVocabPretrainer`, frozen, with weights if available.

    Args:
      student_vocab_size: rows of the teacher's student table (without a
        stage I run; otherwise the run's table decides).
      student_embedding_width: its width (likewise).
      vocab_fingerprints: {'teacher'|'student': sha256} the stage I run must
        have been trained with (checked when it is read).

    Returns:
      The teacher; `self.loaded` says whether weights were loaded (a dry run
      without the files builds the architecture only).
    """
    encoder_kwargs, source = stage1.teacher_encoder_config(
        self.teacher_checkpoint, self.teacher_config)
    if source.startswith("built-in"):
      logging.warning("Teacher dimensions from %s.", source)
    teacher_vocab_size = encoder_kwargs.pop("vocab_size")
    vocab_size, width = self.student_table_shape(
        (student_vocab_size, student_embedding_width))
    encoder = networks.DualVocabBertEncoder(
        teacher_vocab_size=teacher_vocab_size, student_vocab_size=vocab_size,
        student_embedding_width=width, return_word_embeddings=True,
        **encoder_kwargs)
    teacher = models.DualVocabPretrainer(encoder, name="teacher")
    teacher.trainable = False
    if self.stage1_checkpoint and not self.missing_files():
      path = self._stage1_path()
      checkpointing.check_vocab_fingerprints(
          path, vocab_fingerprints, purpose="loading the teacher")
      status = tf.train.Checkpoint(model=teacher).read(path)
      status.assert_existing_objects_matched().expect_partial()
      self.loaded, self.loaded_from = True, path
      self.trained_heads = {"teacher": True, "student": True}
      logging.info("Teacher: the stage I run %s.", path)
    elif _exists(self.teacher_checkpoint):
      checkpoint = teacher_loader.read_bert_checkpoint(self.teacher_checkpoint)
      teacher_loader.assign_encoder_weights(encoder, checkpoint)
      has_head = teacher_loader.assign_masked_lm_weights(teacher.masked_lm,
                                                         checkpoint)
      self.loaded, self.loaded_from = True, self.teacher_checkpoint
      self.trained_heads = {"teacher": has_head, "student": False}
      logging.info("Teacher: %s (MLM head: %s).", self.teacher_checkpoint,
                   "trained" if has_head else "none, created fresh")
    else:
      logging.warning("No teacher weights on this machine (%s); built the "
                      "architecture only.", self.missing_files())
    return teacher

  def require_loaded(self, task_name):
    if not self.loaded:
      raise FileNotFoundError(
          f"Task {task_name} cannot train: its teacher was not loaded "
          f"({self.missing_files() or 'unknown reason'}).")

  def require_trained_head(self, which, task_name, option):
    """Refuses soft targets from an MLM head that was created fresh."""
    if self.loaded and not self.trained_heads[which]:
      raise ValueError(
          f"Task {task_name} needs soft targets from the teacher's {which}-"
          f"vocabulary MLM head, but {self.loaded_from} has none (it would be "
          "created fresh, and its soft targets would be noise). Give a stage I "
          "run of this teacher as the teacher's checkpoint (its heads are "
          f"trained; see the task's gin file), a checkpoint with an MLM head, "
          f"or set {option} = 0.")

  def describe(self):
    return (f"teacher {self.teacher_checkpoint}" +
            (f" + stage I {self.stage1_checkpoint}"
             if self.stage1_checkpoint else ""))


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


def mean_term(total, count):
  """This replica's share of a mean over the global batch."""
  return tf.math.divide_no_nan(total, base_task.global_sum(count))


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
  """A student over the teacher's vocabulary, distilled from a frozen teacher.

  The base of the DistilBERT, TinyBERT and PKD baselines; subclasses give
  the loss (`compute_loss`) and the maps they learn (`projection_names`).

  Args:
    student_preset, num_layers, hidden_size, num_attention_heads,
      dropout_rate: the student, as for `StudentMlmTask` (its vocabulary is
      the teacher's).
    teacher_checkpoint: the pretrained teacher (default: the package's).
    teacher_config: its config file, for dry runs without the checkpoint.
    teacher_init_checkpoint: a stage I run of that teacher, whose weights
      (with trained MLM heads) replace the pretrained ones.
    layer_map: g(1..M), 1-based teacher layers per student layer (default:
      uniform, `losses.uniform_layer_map`).
    inputs: what to read (`MlmInputs`); the text is segmented with the
      teacher's vocabulary.
    teacher_vocab: the teacher's vocab.txt (default: beside the checkpoint).
    student_vocab: only sizes the (unused) student table of a teacher built
      without a stage I run (default: the shipped one).
  """

  input_mode = "teacher"
  loss_vocab_ids = (text_lib.TEACHER_VOCAB_ID,)
  #: Names of the student -> teacher width maps the method learns.
  projection_names = ()

  def __init__(self,
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
    self.teacher_source = TeacherSource(teacher_checkpoint, teacher_config,
                                        teacher_init_checkpoint)
    if teacher_vocab is None:
      teacher_vocab = default_teacher_vocab(
          self.teacher_source.teacher_checkpoint)
    super().__init__(inputs=inputs, teacher_vocab=teacher_vocab,
                     student_vocab=student_vocab)
    overrides = {"return_word_embeddings": True}
    for name, value in (("num_layers", num_layers),
                        ("hidden_size", hidden_size),
                        ("num_attention_heads", num_attention_heads)):
      if value is not None:
        overrides[name] = value
    if dropout_rate is not None:
      overrides.update(output_dropout=dropout_rate,
                       attention_dropout=dropout_rate)
    overrides.setdefault("max_sequence_length",
                         max(512, self.input_config.seq_length))
    self.encoder_config = networks.student_encoder_config(
        student_preset, vocab_size=1, **overrides)
    self.student_preset = student_preset
    self.requested_layer_map = None if layer_map is None else list(layer_map)
    self.layer_map = None

  # ---------------------------------------------------------------------------
  # Vocabularies: the student reads the teacher's.

  def fingerprinted_vocabs(self):
    return ("teacher",)

  def vocab_fingerprints(self):
    # The run's "student vocabulary" is the one its student reads: the
    # teacher's (fine-tuning checks it).
    fingerprint = text_lib.vocab_fingerprint(self.vocab("teacher"))
    return {"teacher": fingerprint, "student": fingerprint}

  def _vocab_size(self, which, default):
    try:
      return len(self.vocab(which))
    except FileNotFoundError:
      return default

  # ---------------------------------------------------------------------------
  # Model.

  def build_student(self, vocab_size):
    config = dict(self.encoder_config)
    config["vocab_size"] = vocab_size
    return models.MLMPretrainer(networks.PlainBertEncoder(**config),
                                name="student")

  def build_teacher(self):
    return self.teacher_source.build(
        student_vocab_size=self._vocab_size(
            "student", networks.PAPER_STUDENT_VOCAB_SIZE),
        student_embedding_width=self.encoder_config["hidden_size"],
        vocab_fingerprints={"teacher": self.vocab_fingerprints()["teacher"]})

  def build_model(self):
    teacher = self.build_teacher()
    teacher_vocab_size = teacher.encoder_network.get_config()[
        "teacher_vocab_size"]
    vocab_size = self._vocab_size("teacher", teacher_vocab_size)
    if vocab_size != teacher_vocab_size:
      raise ValueError(
          f"The teacher vocabulary {self.teacher_vocab_path} has {vocab_size} "
          f"tokens but the teacher has {teacher_vocab_size} word embeddings; "
          "use the checkpoint's own vocab.txt.")
    student = self.build_student(vocab_size)
    return self.assemble(student, teacher)

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

  def checkpoint_items(self, model):
    # Called by the trainer when it trains (not by the dry run): the last
    # moment to refuse a resumed run whose teacher could not be loaded.
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

  # ---------------------------------------------------------------------------
  # Forward passes.

  def run_teacher(self, model, features, with_positions=True):
    return model.teacher(
        model_features(features, with_positions,
                       vocab_id=text_lib.TEACHER_VOCAB_ID), training=False)

  def run_student(self, model, features, training, with_positions=True):
    return model.student(model_features(features, with_positions),
                         training=training)

  def describe(self):
    config = self.encoder_config
    return (f"{super().describe()}, student {self.student_preset or ''} "
            f"{config['num_layers']} x {config['hidden_size']} over the "
            f"teacher vocabulary, {self.teacher_source.describe()}")
