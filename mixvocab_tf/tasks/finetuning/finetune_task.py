"""What fine-tuning tasks share: the encoder they start from, and evaluation.

Zhao et al. (EACL 2021), Section 4.2, fine-tune every pretrained model the
same way: the distilled student (stage II), the NoKD student and the
baselines, and the teacher itself. A fine-tuning task therefore starts from
one of

* a trainer checkpoint of a student MLM task (`init_checkpoint`: a stage II,
  NoKD or baseline model_dir or one of its checkpoints): the student encoder
  is read under its stable name `student_encoder`, and its config from the
  run's `encoder_config.json` (written beside its checkpoints), so any
  student preset works unchanged; checkpoints without one (older runs) fall back to the sizes of
  the checkpoint's variables (`encoder_config_from_checkpoint`);
* a pretrained BERT in the Hugging Face or google-research/bert layout
  (`teacher_checkpoint`; 'default' is the package's default teacher), read
  as every teacher is (`TeacherSpec`) and fine-tuned with its own
  vocabulary;
* nothing: a fresh student of `student_preset` (tests, from-scratch baselines).

The checkpoint's recorded vocabulary must be the one the task tokenizes with
(`checkpointing.check_vocab_fingerprints`). Subclasses add the data, the head
and the metrics (`intent_slot`, `text_classification`).
"""

import os
import re
from typing import Any, Dict, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf
import tf_keras

from tensorflow.core.protobuf import trackable_object_graph_pb2  # pylint: disable=g-direct-tensorflow-import

from mixvocab_tf import assets
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.networks import plain_bert_encoder
from mixvocab_tf.core import base_task
from mixvocab_tf.core import checkpointing
from mixvocab_tf.tasks.finetuning import warm_start as warm_start_lib
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec

#: Where student MLM tasks keep the student encoder in their checkpoints.
STUDENT_ENCODER_KEY = student_spec.STUDENT_ENCODER_KEY
#: Name of the fine-tuned encoder in a fine-tuning run's encoder_config.json.
FINETUNED_ENCODER_KEY = "encoder_network"
DEFAULT_TEACHER = "default"
DEFAULT_TEACHER_NAME = "all-MiniLM-L6-v2"

def object_variables(reader, key: str) -> Dict[str, str]:
  """{path below `key`: checkpoint key} of the variables of object `key`.

  A trainer checkpoint stores each variable once, under the first path that
  reaches it (`model/encoder_network/...`); the stable name `student_encoder`
  is another edge to the same object. Walking the checkpoint's object graph
  finds the variables whatever path named them.

  Args:
    reader: a `tf.train.load_checkpoint` reader.
    key: a child of the checkpoint's root (e.g. 'student_encoder').
  """
  graph = trackable_object_graph_pb2.TrackableObjectGraph()
  graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
  start = [c.node_id for c in graph.nodes[0].children if c.local_name == key]
  variables = {}
  stack = [(start[0], "")] if start else []
  # Objects have several names (a layer keeps a weight as `embeddings` and as
  # `_position_embeddings`): every path is kept, a few per object, which
  # also ends any cycle.
  paths_seen = {}
  while stack:
    node_id, path = stack.pop()
    paths_seen[node_id] = paths_seen.get(node_id, 0) + 1
    if paths_seen[node_id] > 4:
      continue
    node = graph.nodes[node_id]
    for attribute in node.attributes:
      if attribute.name == "VARIABLE_VALUE":
        variables[path] = attribute.checkpoint_key
    for child in node.children:
      stack.append((child.node_id, f"{path}/{child.local_name}".lstrip("/")))
  return variables


def encoder_config_from_checkpoint(checkpoint_path: str,
                                   key: str = STUDENT_ENCODER_KEY,
                                   **overrides) -> Dict[str, Any]:
  """`PlainBertEncoder` arguments of the encoder saved under `key`.

  The fallback for checkpoints without an `encoder_config.json` beside them
  (`encoder_config_from_run` reads that first). Sizes come from the variable
  shapes (layers, hidden size, heads, feed-
  forward width, positions, type vocabulary, word-embedding width); what
  shapes cannot tell (activation, dropout) comes from the student defaults
  (`networks.student_encoder_config`) or `overrides`.

  Args:
    checkpoint_path: a checkpoint prefix (see `checkpointing.resolve_checkpoint`).
    key: the encoder's name in the checkpoint.
    **overrides: `BertEncoderV2` arguments applied last.

  Raises:
    ValueError: the checkpoint has no encoder under `key`.
  """
  reader = tf.train.load_checkpoint(checkpoint_path)
  shapes = reader.get_variable_to_shape_map()
  variables = object_variables(reader, key)

  def shape(name):
    checkpoint_key = variables.get(name)
    return shapes[checkpoint_key] if checkpoint_key else None

  words = shape("_embedding_layer/embeddings")
  if words is None:
    found = sorted({k.split("/")[0] for k in shapes if "/" in k})
    raise ValueError(
        f"{checkpoint_path} holds no encoder under {key!r} (no "
        f"{key}/_embedding_layer/embeddings); its top-level objects are "
        f"{found}. "
        "init_checkpoint must be a run of a student MLM task (stage2, nokd, "
        "a baseline); for a Hugging Face or google-research/bert model use "
        "teacher_checkpoint.")
  layer_ids = {int(m.group(1)) for m in (
      re.match(r"_transformer_layers/(\d+)/", k) for k in variables) if m}
  query = shape("_transformer_layers/0/_attention_layer/_query_dense/kernel")
  inner = shape("_transformer_layers/0/_intermediate_dense/kernel")
  hidden = query[0]
  config = dict(
      vocab_size=words[0],
      num_layers=len(layer_ids),
      hidden_size=hidden,
      num_attention_heads=query[1],
      inner_dim=inner[1],
      max_sequence_length=shape("_position_embedding_layer/embeddings")[0],
      type_vocab_size=shape("_type_embedding_layer/embeddings")[0],
  )
  if words[1] != hidden:
    config["embedding_width"] = words[1]
  config.update(overrides)
  return networks.student_encoder_config(None, **config)


def encoder_config_from_run(checkpoint_path: str,
                            key: str = STUDENT_ENCODER_KEY,
                            **overrides) -> Dict[str, Any]:
  """`PlainBertEncoder` arguments of the encoder `key` of a trainer run.

  Read from the `encoder_config.json` the trainer wrote beside the
  checkpoint; a checkpoint without one (runs before it was written) falls
  back to `encoder_config_from_checkpoint`, which infers the sizes from the
  variable shapes.

  Args:
    checkpoint_path: a checkpoint prefix (see `checkpointing.resolve_checkpoint`).
    key: the encoder's name in the checkpoint.
    **overrides: `BertEncoderV2` arguments applied last.
  """
  config = checkpointing.read_encoder_config(checkpoint_path, key)
  if config is None:
    logging.info("No %s for %r beside %s: sizes from the variable shapes.",
                 checkpointing.ENCODER_CONFIG_FILE, key, checkpoint_path)
    return encoder_config_from_checkpoint(checkpoint_path, key, **overrides)
  # A distillation student returned its embedding output; fine-tuning reads
  # the sequence and pooled outputs only.
  config = dict(config, return_attention_scores=False,
                return_word_embeddings=False)
  config.update(overrides)
  return networks.student_encoder_config(None, **config)


class FinetuneTask(base_task.Task):
  """A fine-tuning task: encoder source, vocabulary, shuffling, evaluation.

  Args:
    init_checkpoint: a student MLM run (model_dir or checkpoint) whose
      `encoder_key` encoder initialises the model.
    teacher_checkpoint: instead, a Hugging Face or google-research/bert
      checkpoint; 'default' for the package's default teacher.
    encoder_key: the encoder's name in `init_checkpoint`.
    student_preset, num_layers, hidden_size, num_attention_heads: the size of
      a fresh student (used only without either checkpoint).
    dropout_rate: dropout of the encoder and of the heads.
    vocab: the WordPiece vocabulary to tokenize with (default: the student's
      shipped one, or the teacher's vocab.txt for a teacher).
    seq_length: tokens per example, special tokens included.
    global_batch_size: training examples per step over all replicas.
    eval_batch_size: examples per evaluation batch.
    shuffle_buffer: training examples in the shuffle buffer.
    seed: seed of the shuffling.
    model_name: name of the model in reports (default: from the source).
    warm_start: a run of this task on an earlier version of the data (its
      model_dir, whose `best/` checkpoint is read if it has one): after the
      initialization above, the model starts from that run's weights, each
      head's rows copied by label name (a label new to this run keeps its
      fresh row; `warm_start.load`). The same model size and vocabulary.
  """

  #: Metric that picks the best checkpoint (the trainer's `Evaluator`).
  best_metric: Optional[str] = None
  #: Metrics of the markdown row, in order.
  report_metrics = ()

  def __init__(self,
               init_checkpoint: Optional[str] = None,
               teacher_checkpoint: Optional[str] = None,
               encoder_key: str = STUDENT_ENCODER_KEY,
               student_preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: float = 0.1,
               vocab: Optional[str] = None,
               seq_length: int = 128,
               global_batch_size: int = 64,
               eval_batch_size: int = 128,
               shuffle_buffer: int = 10000,
               seed: int = 0,
               model_name: Optional[str] = None,
               warm_start: Optional[str] = None):
    super().__init__(global_batch_size=global_batch_size)
    if init_checkpoint and teacher_checkpoint:
      raise ValueError(
          "Give init_checkpoint (a student MLM run) or teacher_checkpoint (a "
          "BERT checkpoint), not both; received "
          f"{init_checkpoint!r} and {teacher_checkpoint!r}.")
    for name, value in (("seq_length", seq_length),
                        ("eval_batch_size", eval_batch_size),
                        ("shuffle_buffer", shuffle_buffer)):
      if not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer; received "
                         f"{value!r}.")
    if not 0.0 <= dropout_rate < 1.0:
      raise ValueError(f"dropout_rate must be in [0, 1); received "
                       f"{dropout_rate!r}.")
    self._default_teacher = teacher_checkpoint == DEFAULT_TEACHER
    if self._default_teacher:
      teacher_checkpoint = assets.default_teacher_dir()
    self.init_checkpoint = init_checkpoint
    self.teacher_checkpoint = teacher_checkpoint
    self.encoder_key = encoder_key
    self.student_preset = student_preset
    self.size_overrides = {k: v for k, v in (
        ("num_layers", num_layers), ("hidden_size", hidden_size),
        ("num_attention_heads", num_attention_heads)) if v is not None}
    self.dropout_rate = float(dropout_rate)
    self.seq_length = seq_length
    self.eval_batch_size = eval_batch_size
    self.shuffle_buffer = shuffle_buffer
    self.seed = seed
    self.model_name = model_name
    self.warm_start = warm_start
    if vocab is None and teacher_checkpoint:
      # Both checkpoint layouts keep vocab.txt beside the weights.
      base = (os.path.dirname(teacher_checkpoint)
              if teacher_checkpoint.endswith(".ckpt") else teacher_checkpoint)
      vocab = os.path.join(base, "vocab.txt")
    elif vocab is None:
      vocab = assets.default_student_vocab()
    self.vocab_path = vocab
    self._tokens = None
    self.encoder_config = None

  # ---------------------------------------------------------------------------
  # Vocabulary and files.

  @property
  def vocab_role(self):
    """'teacher' for a teacher checkpoint, else 'student'."""
    return "teacher" if self.teacher_checkpoint else "student"

  @property
  def tokens(self):
    if self._tokens is None:
      self._tokens = text_lib.load_vocab(self.vocab_path)
    return self._tokens

  def vocab_fingerprints(self):
    return {self.vocab_role: text_lib.vocab_fingerprint(self.tokens)}

  def _resolved_init_checkpoint(self):
    return checkpointing.resolve_checkpoint(self.init_checkpoint,
                                            what="init checkpoint")

  def missing_files(self):
    missing = {}
    if not tf.io.gfile.exists(self.vocab_path):
      missing["vocabulary"] = f"not found: {self.vocab_path}"
    if self.init_checkpoint:
      try:
        self._resolved_init_checkpoint()
      except FileNotFoundError as e:
        missing["init checkpoint"] = str(e)
    if self.warm_start:
      try:
        warm_start_lib.run_checkpoint(self.warm_start)
      except FileNotFoundError as e:
        missing["warm-start run"] = str(e)
    if self.teacher_checkpoint and not tf.io.gfile.exists(
        self.teacher_checkpoint):
      missing["teacher checkpoint"] = f"not found: {self.teacher_checkpoint}"
    missing.update(self.missing_data())
    return missing

  def missing_data(self) -> Dict[str, str]:
    """{what: problem} for the task's data files; subclasses override."""
    return {}

  # ---------------------------------------------------------------------------
  # Model.

  def _encoder_config(self):
    dropout = dict(output_dropout=self.dropout_rate,
                   attention_dropout=self.dropout_rate)
    if self.teacher_checkpoint and tf.io.gfile.exists(self.teacher_checkpoint):
      config = dict(self._teacher().encoder_config()[0])
      config.update(dropout)
      return config
    if self.init_checkpoint:
      try:
        path = self._resolved_init_checkpoint()
      except FileNotFoundError:
        path = None  # Dry run without the files: the preset's sizes.
      if path:
        return encoder_config_from_run(path, self.encoder_key, **dropout)
    vocab_size = (len(self.tokens) if tf.io.gfile.exists(self.vocab_path)
                  else networks.PAPER_STUDENT_VOCAB_SIZE)
    return networks.student_encoder_config(
        self.student_preset, vocab_size=vocab_size,
        max_sequence_length=max(512, self.seq_length), **dropout,
        **self.size_overrides)

  def _teacher(self):
    # Every argument explicit: the pretrained checkpoint alone, whatever
    # `TeacherSpec` bindings other tasks use.
    return teacher_spec.TeacherSpec(
        checkpoint=self.teacher_checkpoint, config=None, vocab=self.vocab_path,
        stage1_checkpoint=None, dropout_rate=None)

  def build_encoder(self):
    """The encoder of the configured source (fresh weights; see initialize)."""
    self.encoder_config = self._encoder_config()
    if (tf.io.gfile.exists(self.vocab_path) and
        self.encoder_config["vocab_size"] != len(self.tokens)):
      raise ValueError(
          f"The vocabulary {self.vocab_path} has {len(self.tokens)} tokens "
          f"but the encoder has {self.encoder_config['vocab_size']} word "
          "embeddings; fine-tune with the vocabulary the model was "
          "pretrained with (the task's `vocab`).")
    if self.seq_length > self.encoder_config["max_sequence_length"]:
      raise ValueError(
          f"seq_length {self.seq_length} exceeds the encoder's "
          f"{self.encoder_config['max_sequence_length']} positions.")
    return plain_bert_encoder.PlainBertEncoder(**self.encoder_config)

  def encoder_configs(self, model):
    # The fine-tuned encoder, as `model.encoder_network` holds it (a
    # distillation from this run, or an export, rebuilds it from this).
    return {FINETUNED_ENCODER_KEY: model.encoder_network.get_config()}

  def initialize(self, model):
    encoder = model.encoder_network
    if self.teacher_checkpoint:
      self._teacher().load_pretrained(encoder,
                                      f"{type(self).__name__}."
                                      "teacher_checkpoint")
    elif self.init_checkpoint:
      path = self._resolved_init_checkpoint()
      checkpointing.check_vocab_fingerprints(
          path, self.vocab_fingerprints(), purpose="fine-tuning")
      status = tf.train.Checkpoint(**{self.encoder_key: encoder}).read(path)
      status.assert_existing_objects_matched().expect_partial()
      logging.info("Loaded the encoder %r from %s.", self.encoder_key, path)
    else:
      logging.warning("No init_checkpoint or teacher_checkpoint: fine-tuning "
                      "a randomly initialised %s encoder.",
                      self.student_preset or "student")
    if self.warm_start:
      self.load_warm_start(model)

  def head_labels(self) -> Dict[str, Sequence[str]]:
    """{output layer name: its labels in row order}; subclasses override."""
    return {}

  @staticmethod
  def run_head_labels(run_dir: str) -> Dict[str, Sequence[str]]:
    """`head_labels` of an earlier run of this task, from its files.

    Raises:
      FileNotFoundError: the run has no file of its labels.
    """
    raise NotImplementedError("This task does not support warm_start.")

  def build_model_for(self, head_labels) -> tf_keras.Model:
    """The task's model with other heads' labels (for `warm_start`)."""
    raise NotImplementedError(
        f"{type(self).__name__} does not support warm_start.")

  def load_warm_start(self, model):
    """Copies the `warm_start` run's weights into `model` (see __init__)."""
    path = warm_start_lib.run_checkpoint(self.warm_start)
    checkpointing.check_vocab_fingerprints(
        path, self.vocab_fingerprints(), purpose="a warm start")
    earlier = self.run_head_labels(warm_start_lib.run_dir(path))
    heads = {head: (earlier[head], labels)
             for head, labels in self.head_labels().items()}
    warm_start_lib.load(
        model, self.build_model_for({h: old for h, (old, _) in heads.items()}),
        path, heads)
    warm_start_lib.log_loaded(path, heads)

  # ---------------------------------------------------------------------------
  # Inputs.

  def replica_batch_size(self, input_context):
    if input_context is None:
      return self.global_batch_size
    return input_context.get_per_replica_batch_size(self.global_batch_size)

  def shuffled(self, dataset, input_context, buffer_size=None):
    """This pipeline's shard of unbatched training examples, shuffled, forever.

    Shuffle examples before featurizing them (words or sentences are smaller
    than features): the shuffle buffer is part of the checkpointed iterator
    state.

    Args:
      dataset: unbatched training examples.
      input_context: the tf.distribute input context, or None.
      buffer_size: the shuffle buffer (default: `shuffle_buffer`); a dataset
        of example indices can afford one as large as the dataset (a full
        shuffle).
    """
    if input_context:
      dataset = dataset.shard(input_context.num_input_pipelines,
                              input_context.input_pipeline_id)
    return dataset.shuffle(buffer_size or self.shuffle_buffer, seed=self.seed,
                           reshuffle_each_iteration=True).repeat()

  @staticmethod
  def with_example_index(dataset):
    """Numbers unbatched evaluation examples (`example_index`, file order)."""
    return dataset.enumerate().map(
        lambda i, example: dict(example, example_index=i))

  # ---------------------------------------------------------------------------
  # Evaluation: collect arrays per batch, concatenate, restore file order.

  def aggregate_logs(self, state, step_outputs):
    state = dict(state or {})
    for name, value in step_outputs.items():
      state.setdefault(name, []).append(np.asarray(value))
    return state

  @staticmethod
  def concatenated(state):
    """The aggregated arrays in file order (by `example_index`), and metrics.

    Returns:
      (arrays, metric_pairs): per-example arrays sorted by example index, and
      the summed `base_task.metric` pairs (names containing '/').
    """
    order = np.argsort(np.concatenate(state["example_index"]), kind="stable")
    arrays, pairs = {}, {}
    for name, values in state.items():
      if "/" in name:
        pairs[name] = np.sum(values, axis=0)
      else:
        arrays[name] = np.concatenate(values)[order]
    return arrays, {name: float(v[0] / v[1]) if v[1] else float("nan")
                    for name, v in pairs.items()}

  # ---------------------------------------------------------------------------
  # Serving: what an export of this task needs (the extension points that
  # `export.checkpoint_export`, `serving.export_run` and `serving.convert_run` call,
  # so that adding a task touches none of them).
  #
  # A task that can be served defines `export_module(self, model)`: the
  # `tf.Module` with string-in `serving_default` and `serving_tflite`
  # signatures that `export.export_saved_model` writes (e.g.
  # `IntentSlotExportModule`). It records `task_name`, so that the converter finds
  # the class methods below again from the export alone.

  @classmethod
  def export_overrides(cls, model_dir: Optional[str],
                       labels: Optional[str] = None) -> Dict[str, Any]:
    """Constructor arguments an export of a run takes from its directory.

    Args:
      model_dir: the run (None: only its gin files are known).
      labels: a label file the user gave instead of the run's.

    Returns:
      {argument: value}; default none.
    """
    del model_dir, labels
    return {}

  @classmethod
  def serving_examples(cls, split: str, limit: int):
    """Raw inputs of the task's own data, to calibrate and check an export.

    Args:
      split: 'train' (int8 calibration) or 'valid' (parity).
      limit: most examples.

    Returns:
      Strings (one-input signatures) or tuples of strings (in the order of
      the signature's sorted input names); None when the task has no data to
      offer (the converter then reads a file or the built-in corpus).
    """
    del split, limit
    return None

  @classmethod
  def serving_scores(cls, predictions, split: str) -> Dict[str, float]:
    """Task metrics of served predictions of `serving_examples(split, n)`.

    Args:
      predictions: one dict of NumPy outputs per example
        (`parity.predict_saved_model` / `parity.predict_tflite`), for the
        first `len(predictions)` examples of the split.
      split: the split they came from.

    Returns:
      {metric: value}; default none.
    """
    del predictions, split
    return {}

  # ---------------------------------------------------------------------------
  # Reporting.

  def source_name(self):
    if self._default_teacher:
      return f"teacher {DEFAULT_TEACHER_NAME}"
    if self.teacher_checkpoint:
      return f"teacher {os.path.normpath(self.teacher_checkpoint)}"
    if self.init_checkpoint:
      return f"student {os.path.normpath(self.init_checkpoint)}"
    return "fresh student"

  def report_name(self):
    if self.model_name:
      return self.model_name
    config = self.encoder_config or {}
    size = (f"{config.get('num_layers')}x{config.get('hidden_size')}"
            if config else "")
    return f"{size} {self.source_name()}".strip()

  def describe(self):
    return (f"{self.task_name}: {self.source_name()}, global batch "
            f"{self.global_batch_size} x {self.seq_length} tokens, vocabulary "
            f"{self.vocab_path}")
