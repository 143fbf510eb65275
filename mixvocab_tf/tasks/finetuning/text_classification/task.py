"""GLUE fine-tuning: SST-2, MRPC and MNLI (Zhao et al., EACL 2021, Table 2),
and users' own text classification datasets.

The students are fine-tuned with a classifier on the pooled [CLS] output
(`models.SentenceClassifier`), sentence pairs packed as
`[CLS] A [SEP] B [SEP]` with type ids 0 and 1 (`text_classification_data.text_classification_featurizer`),
and scored on the dev sets: accuracy for SST-2 and MNLI (matched), F1 and
accuracy for MRPC (`metrics.glue_metrics`).

Data (`text_classification_data.load_glue`): tensorflow-datasets `glue/*` (no `data_dir`),
GLUE-format TSV directories (read by `user_data`, the reader of a user's
files, with GLUE's fixed label ids), or the MNLI sample JSON files
(`MNLI/{train,dev}_sample.json`; say in reports that it is a sample).

Paper settings (Section 4.2): 10 epochs, LAMB, learning rate 1e-4, batch 64.
`text_classification_train_steps` turns epochs into the trainer's steps for a task's
training split, so a gin file can say "10 epochs".

A user's dataset (`glue_task=None`, `data_dir` its directory) goes through
the same task: a directory of `train`, `validation` (or `dev`, `valid`) and
optionally `test` files, CSV, TSV or JSONL, one text (or a pair) and a label
per example, read and checked by `user_data.load_dataset` (its module
docstring is the data contract). The label names are train's, sorted (label
id = position); a validation or test label that train lacks gets the id -1
(`metrics.UNKNOWN_LABEL`): it is left out of the loss and counted wrong in
the scores, and the dataset's warning lists such labels. Scores: accuracy,
macro-F1 and the majority-class accuracy
(`metrics.text_classification_metrics`).
With gin, one macro feeds both the task and the step count
(finetune_glue_paper.gin binds `TextClassificationTask` and `text_classification_train_steps` to
`%GLUE_TASK` and `%GLUE_DIR`):

  --gin_bindings="GLUE_TASK = None" --gin_bindings="GLUE_DIR = '/data/mine'"
"""

import collections
import functools
import os
from typing import Optional

from absl import logging
import gin
import numpy as np
import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.text_classification import export_module as text_classification_export
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.tasks.finetuning import batch_padding
from mixvocab_tf.tasks.finetuning import user_data

#: Training examples of the full GLUE sets (tensorflow-datasets agrees), used
#: when the data is read from tensorflow-datasets.
GLUE_TRAIN_SIZES = {"sst2": 67349, "mrpc": 3668, "mnli": 392702}
#: Split names of a user's dataset, and the aliases `eval_split` accepts.
USER_SPLIT_ALIASES = {"dev": "validation", "valid": "validation"}
USER_SPLITS = ("train", "validation", "test")


def classification_loss(logits, labels):
  """(loss sum, correct count, example count) of one batch, float32.

  A label id below 0 (`metrics.UNKNOWN_LABEL`: a validation or test label
  that train lacks) adds nothing to the loss sum (weight 0: no error, no
  NaN) but counts as an example and is never correct; divide the loss sum
  by `known_label_count(labels)`, not by the example count.
  """
  logits = tf.cast(logits, tf.float32)
  labels = tf.cast(labels, tf.int32)
  known = tf.cast(labels >= 0, tf.float32)
  losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=tf.maximum(labels, 0), logits=logits)
  correct = tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels)
  return (tf.reduce_sum(losses * known),
          tf.reduce_sum(tf.cast(correct, tf.float32)),
          tf.cast(tf.shape(labels)[0], tf.float32))


def known_label_count(labels):
  """Examples of a batch whose label train knows (id >= 0), float32."""
  return tf.reduce_sum(tf.cast(tf.cast(labels, tf.int32) >= 0, tf.float32))


@functools.lru_cache(maxsize=16)
def _local_examples(glue_task, split, data_dir, source):
  """The examples of a local split as lists (read once per process)."""
  dataset, _ = text_classification_data.load_glue(glue_task, split, data_dir, source)
  rows = list(dataset.as_numpy_iterator())
  return ([r["sentence_a"] for r in rows], [r["sentence_b"] for r in rows],
          [int(r["label"]) for r in rows])


@functools.lru_cache(maxsize=8)
def _user_dataset(data_dir, text_column, text_b_column, label_column):
  """A user's dataset, read and checked once per process (and its warning
  logged then)."""
  dataset = user_data.load_dataset(data_dir, text_column=text_column,
                                   text_b_column=text_b_column,
                                   label_column=label_column)
  warning = dataset.warning()
  if warning:
    logging.warning("%s", warning)
  return dataset


def load_user_dataset(data_dir, text_column="text", text_b_column=None,
                      label_column="label") -> user_data.UserDataset:
  """A user's text classification dataset (`user_data.load_dataset`), cached.

  Read once per process for each (directory, columns); the first read logs
  `UserDataset.warning()` (labels of validation or test that train lacks).

  Raises:
    user_data.DataError: the dataset breaks the data contract.
    ValueError: it is an intent detection and slot filling dataset.
  """
  dataset = _user_dataset(os.path.abspath(data_dir), text_column,
                          text_b_column, label_column)
  if dataset.kind != user_data.TEXT_CLASSIFICATION:
    raise ValueError(
        f"{data_dir} holds an intent detection and slot filling dataset "
        f"({dataset.files.format} format), not text classification: use the "
        "intent-and-slot task (Trainer.task = 'intent_slot') for it, or "
        "give TextClassificationTask a directory of text classification files "
        "(a text, or a pair, and a label per example).")
  return dataset


def user_split_lists(dataset, split):
  """(texts_a, texts_b, label ids) of a split of a user's dataset.

  `texts_b` is all '' for single texts (as SST-2 in `text_classification.data`). A label id
  is the label's position in `dataset.labels` (train's labels, sorted), or
  -1 (`metrics.UNKNOWN_LABEL`) for a label train lacks.

  Raises:
    ValueError: the split is absent, or has no labels (a test split for
      predictions only).
  """
  if split not in dataset.splits:
    raise ValueError(
        f"The dataset {dataset.files.data_dir} has no {split} split; its "
        f"splits are {sorted(dataset.splits)}.")
  data = dataset.splits[split]
  if data.labels is None:
    raise ValueError(
        f"The {split} split of {dataset.files.data_dir} ({data.path}) has no "
        "labels: it serves predictions only, it cannot be evaluated. Evaluate "
        "on 'validation', or add a label column to it.")
  ids = {name: i for i, name in enumerate(dataset.labels)}
  texts_b = data.texts_b if data.texts_b is not None else [""] * len(data)
  return (list(data.texts_a), list(texts_b),
          [ids.get(label, metrics_lib.UNKNOWN_LABEL) for label in data.labels])


def count_train_examples(glue_task, data_dir=None, source="auto",
                         text_column="text", text_b_column=None,
                         label_column="label"):
  """Examples in a training split: a GLUE task's (read, or the known sizes),
  or with `glue_task=None` the user's dataset in `data_dir`."""
  if glue_task is None:
    if data_dir is None:
      raise ValueError(
          "Counting training examples needs a GLUE task (glue_task) or a "
          "user's dataset (glue_task=None and data_dir, its directory); "
          "received neither.")
    return len(load_user_dataset(data_dir, text_column, text_b_column,
                                 label_column).splits["train"])
  glue_task = text_classification_data.canonical_task(glue_task)
  if data_dir is None or source == "tfds":
    return GLUE_TRAIN_SIZES[glue_task]
  return len(_local_examples(glue_task, "train", data_dir, source)[2])


@gin.configurable(module="mixvocab_tf.tasks")
def text_classification_train_steps(glue_task: Optional[str] = None,
                     data_dir: Optional[str] = None,
                     source: str = "auto",
                     epochs: float = 10.0,
                     global_batch_size: int = 64,
                     text_column: str = "text",
                     text_b_column: Optional[str] = None,
                     label_column: str = "label") -> int:
  """Optimizer steps of `epochs` passes over a task's training split.

  The split is a GLUE task's (`glue_task`, from `data_dir` / `source` as
  `TextClassificationTask` reads it), or with `glue_task=None` the train split of
  the user's dataset in `data_dir` (read with the column arguments, as
  `user_data.load_dataset`), so the epoch budget follows the user's data.

  For gin: `Trainer.train_steps = @text_classification_train_steps()`, and with a scope,
  `Trainer.evaluate_every = @epoch/text_classification_train_steps()` and
  `epoch/text_classification_train_steps.epochs = 1` to evaluate once per epoch.
  finetune_glue_paper.gin binds `text_classification_train_steps.glue_task` / `.data_dir` and
  `TextClassificationTask.glue_task` / `.data_dir` to the macros `GLUE_TASK` and
  `GLUE_DIR`, so for a user's dataset `GLUE_TASK = None` and
  `GLUE_DIR = '/data/mine'` feed both (bind other column names to both too,
  e.g. through a macro `TEXT_COLUMN`).
  """
  examples = count_train_examples(glue_task, data_dir, source, text_column,
                                  text_b_column, label_column)
  return max(1, int(round(epochs * examples / global_batch_size)))


@base_task.register_task("text_classification")
class TextClassificationTask(finetune_task.FinetuneTask):
  """Sentence (pair) classification fine-tuning on SST-2, MRPC, MNLI, or a
  user's own text classification dataset.

  Example (gin): `Trainer.task = 'text_classification'`,
  `TextClassificationTask.glue_task = 'mrpc'`,
  `TextClassificationTask.data_dir = '/data/glue'`; see
  `gin_configs/finetuning/finetune_glue_small.gin`. A user's dataset:
  `TextClassificationTask.glue_task = None`,
  `TextClassificationTask.data_dir = '/data/mine'` (see the module docstring).

  Args:
    glue_task: 'sst2', 'mrpc' or 'mnli'; None: the user's text
      classification dataset in `data_dir` (`user_data`).
    data_dir: the GLUE root (`SST-2/`, `MRPC/`, `MNLI/`) for local files, or
      the tensorflow-datasets data directory with `source='tfds'`; None:
      tensorflow-datasets' default. With `glue_task=None`: the user's
      dataset directory (required).
    source: 'auto', 'tsv', 'mnli_json' or 'tfds' (see `text_classification_data.load_glue`);
      'auto' for a user's dataset.
    eval_split: the split evaluation reads ('validation'; MNLI:
      'validation_matched' or 'validation_mismatched'; 'train' works too; a
      user's dataset: 'validation' (or 'dev', 'valid'), or 'test' when its
      test split has labels).
    seq_length: tokens per example, special tokens included.
    pad_to_longest: pad each batch (training and evaluation) to its longest
      example instead of to seq_length (`batch_padding.trim_to_longest`):
      same losses and predictions, less work per step (SST-2 sentences
      average about a dozen pieces).
    bucket_boundaries: token lengths that split training examples into
      buckets of similar length, each batch from one bucket (implies
      pad_to_longest); None: no bucketing.
    pooling: what the classifier reads (`SentenceClassifier.pooling`):
      'cls' (BERT's pooled [CLS]) or 'mean' (the tokens' mean).
    text_column, text_b_column, label_column: a user's dataset: the columns
      (or JSONL keys) of the text, of the second text of a pair, and of the
      label (`user_data.load_dataset`; unused for GLUE).
    **kwargs: the arguments of `finetune_task.FinetuneTask`.
  """

  best_metric = "accuracy"

  def __init__(self,
               glue_task: Optional[str] = "sst2",
               data_dir: Optional[str] = None,
               source: str = "auto",
               eval_split: str = "validation",
               seq_length: int = 128,
               pad_to_longest: bool = False,
               bucket_boundaries=None,
               pooling: str = "cls",
               text_column: str = "text",
               text_b_column: Optional[str] = None,
               label_column: str = "label",
               **kwargs):
    super().__init__(seq_length=seq_length, **kwargs)
    if pooling not in models.sentence_classifier.POOLINGS:
      raise ValueError(
          f"pooling must be one of {models.sentence_classifier.POOLINGS}; "
          f"received {pooling!r}.")
    self.pooling = pooling
    self.bucket_boundaries = (tuple(bucket_boundaries) if bucket_boundaries
                              else None)
    self.pad_to_longest = bool(pad_to_longest) or bool(bucket_boundaries)
    if source not in text_classification_data.SOURCES:
      raise ValueError(f"source must be one of {text_classification_data.SOURCES}; received "
                       f"{source!r}.")
    self.data_dir = data_dir
    self.source = source
    self.text_columns = dict(text_column=text_column,
                             text_b_column=text_b_column,
                             label_column=label_column)
    self._user_lists = {}
    if glue_task is None:
      if not data_dir:
        raise ValueError(
            "TextClassificationTask with glue_task=None fine-tunes on a user's "
            "dataset: data_dir must name its directory (train, validation "
            "and optionally test files; see mixvocab_tf.tasks.finetuning."
            "user_data). For GLUE, set glue_task to 'sst2', 'mrpc' or "
            "'mnli'.")
      if source != "auto":
        raise ValueError(
            "source chooses where GLUE data is read from; a user's dataset "
            f"(glue_task=None) is read from data_dir: leave source 'auto', "
            f"received {source!r}.")
      self.glue_task = None
      self.eval_split = self._user_split_name(eval_split)
      self._label_names = None  # Train's labels, read on first use.
      self.report_metrics = metrics_lib.TEXT_CLASSIFICATION_METRICS
      self.best_metric = "accuracy"
    else:
      self.glue_task = text_classification_data.canonical_task(glue_task)
      self.eval_split = text_classification_data.canonical_split(self.glue_task, eval_split)
      self._label_names = text_classification_data.LABEL_NAMES[self.glue_task]
      self.report_metrics = metrics_lib.GLUE_TASK_METRICS[self.glue_task]
      # MRPC is reported by F1 first; it also picks the best checkpoint.
      self.best_metric = self.report_metrics[0]

  # ---------------------------------------------------------------------------
  # Data.

  @staticmethod
  def _user_split_name(split):
    name = USER_SPLIT_ALIASES.get(split, split)
    if name not in USER_SPLITS:
      raise ValueError(
          f"Unknown split {split!r} for a user's dataset; expected one of "
          f"{list(USER_SPLITS)} (or 'dev'/'valid' for 'validation').")
    return name

  @property
  def is_user_data(self):
    """Whether the data is a user's dataset (`glue_task=None`), not GLUE."""
    return self.glue_task is None

  @property
  def is_local(self):
    return self.data_dir is not None and self.source != "tfds"

  @property
  def dataset_name(self):
    """The GLUE task ('sst2', ...), or 'user:<absolute dataset directory>'."""
    if self.is_user_data:
      return f"user:{os.path.abspath(self.data_dir)}"
    return self.glue_task

  def user_dataset(self) -> user_data.UserDataset:
    """The user's dataset (`load_user_dataset`: read once per process)."""
    if not self.is_user_data:
      raise ValueError(f"GLUE {self.glue_task} is not a user's dataset.")
    return load_user_dataset(self.data_dir, **self.text_columns)

  @property
  def label_names(self):
    """Names by label id: GLUE's, or the user's train labels, sorted."""
    if self._label_names is None:
      self._label_names = tuple(self.user_dataset().labels)
    return self._label_names

  @property
  def is_pair(self):
    """Whether examples are sentence pairs (a user's: train has `texts_b`)."""
    if self.is_user_data:
      return self.user_dataset().splits["train"].texts_b is not None
    return text_classification_data.is_pair_task(self.glue_task)

  def majority_label(self):
    """The most frequent training label id (a tie: the smaller id)."""
    counts = collections.Counter(self._split_lists("train")[2])
    return min(counts, key=lambda label: (-counts[label], label))

  def missing_data(self):
    if not self.is_local:
      return {}
    missing = {}
    for split in ("train", self.eval_split):
      try:
        self._split_lists(split)
      except (FileNotFoundError, ValueError) as e:
        what = (f"user dataset {self.data_dir} {split}" if self.is_user_data
                else f"GLUE {self.glue_task} {split}")
        missing[what] = str(e)
    return missing

  def _split_lists(self, split):
    """(sentences_a, sentences_b, labels) of a local split (cached)."""
    if self.is_user_data:
      if split not in self._user_lists:
        self._user_lists[split] = user_split_lists(self.user_dataset(), split)
      return self._user_lists[split]
    return _local_examples(self.glue_task, split, self.data_dir, self.source)

  def train_split_lists(self):
    """(sentences_a, sentences_b, label_ids) of the training split.

    Strings (`sentences_b` all '' for single sentences) and ints, in file
    order, from wherever the task reads its data (GLUE files or
    tensorflow-datasets, or the user's dataset).
    """
    if self.is_local:
      a, b, labels = self._split_lists("train")
    else:
      rows = list(self._examples("train").as_numpy_iterator())
      a = [r["sentence_a"] for r in rows]
      b = [r["sentence_b"] for r in rows]
      labels = [r["label"] for r in rows]
    a = [s.decode("utf-8") if isinstance(s, bytes) else s for s in a]
    b = [s.decode("utf-8") if isinstance(s, bytes) else s for s in b]
    return a, b, [int(label) for label in labels]

  def _examples(self, split):
    """An unbatched dataset of `sentence_a`, `sentence_b`, `label`."""
    if self.is_local:
      sentences_a, sentences_b, labels = self._split_lists(split)
      return tf.data.Dataset.from_tensor_slices({
          "sentence_a": tf.constant(sentences_a, tf.string),
          "sentence_b": tf.constant(sentences_b, tf.string),
          "label": tf.constant(labels, tf.int32)})
    return text_classification_data.load_glue(self.glue_task, split, self.data_dir,
                               source="tfds")[0]

  # ---------------------------------------------------------------------------
  # Model and inputs.

  def build_model(self):
    return models.SentenceClassifier(
        self.build_encoder(), num_classes=len(self.label_names),
        dropout_rate=self.dropout_rate, pooling=self.pooling)

  def featurizer(self):
    """`featurize(batch)`: `text_classification_data.text_classification_featurizer`, keeping example_index."""
    featurize = text_classification_data.text_classification_featurizer(self.tokens, self.seq_length,
                                          pair=self.is_pair)

    def featurize_keeping_index(batch):
      features = featurize(batch)
      if "example_index" in batch:
        features["example_index"] = batch["example_index"]
      return features

    return featurize_keeping_index

  def training_batches(self, dataset, input_context, buffer_size=None,
                       lookup=None):
    """Shuffled, repeated training batches of `dataset`'s examples, featurized.

    Examples are tokenized a chunk at a time (tensorflow_text tokenizes a
    batch in one call); with `pad_to_longest` or `bucket_boundaries` each
    batch is then cut to its longest example (`batch_padding`).

    Args:
      dataset: unbatched examples (`sentence_a`, `sentence_b`, `label`), or
        with `lookup` whatever `lookup` maps to them (e.g. example indices).
      input_context: the tf.distribute input context, or None.
      buffer_size: the shuffle buffer (default: `shuffle_buffer`).
      lookup: maps each shuffled element to its example, before featurizing.
    """
    featurize = self.featurizer()
    batch_size = self.replica_batch_size(input_context)
    dataset = self.shuffled(dataset, input_context, buffer_size)
    if lookup is not None:
      dataset = dataset.map(lookup, num_parallel_calls=tf.data.AUTOTUNE,
                            deterministic=True)
    if not self.pad_to_longest:
      return dataset.batch(batch_size, drop_remainder=True).map(
          featurize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    dataset = dataset.batch(max(batch_size, 256)).map(
        featurize, num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True).unbatch()
    return batch_padding.batch_for_training(dataset, batch_size, True,
                                            self.bucket_boundaries)

  def build_inputs(self, input_context=None, training=True):
    if training:
      return self.training_batches(self._examples("train"),
                                   input_context).prefetch(tf.data.AUTOTUNE)
    dataset = self.with_example_index(self._examples(self.eval_split)).batch(
        self.eval_batch_size).map(self.featurizer(),
                                  num_parallel_calls=tf.data.AUTOTUNE,
                                  deterministic=True)
    if self.pad_to_longest:
      dataset = dataset.map(batch_padding.trim_to_longest)
    return dataset.prefetch(tf.data.AUTOTUNE)

  def num_train_examples(self):
    return count_train_examples(self.glue_task, self.data_dir, self.source,
                                **self.text_columns)

  # ---------------------------------------------------------------------------
  # Loss and evaluation. Labels train lacks (id -1, user datasets only) are
  # left out of the loss and its mean, and count as wrong in the accuracy.

  def compute_loss(self, model, features, training):
    logits = model(features, training=training)["logits"]
    loss_sum, correct, count = classification_loss(logits, features["label"])
    known = known_label_count(features["label"])
    loss = tf.math.divide_no_nan(loss_sum, base_task.global_sum(known))
    return loss, {"classifier/loss": base_task.metric(loss_sum, known),
                  "classifier/accuracy": base_task.metric(correct, count)}

  def validation_step(self, model, features):
    logits = model(features, training=False)["logits"]
    loss_sum, _, _ = classification_loss(logits, features["label"])
    known = known_label_count(features["label"])
    return {
        "classifier/loss": base_task.metric(loss_sum, known),
        "example_index": features["example_index"],
        "predictions": tf.argmax(logits, -1, output_type=tf.int32),
        "labels": features["label"],
    }

  def reduce_aggregated_logs(self, state):
    arrays, results = self.concatenated(state)
    if self.is_user_data:
      results.update(metrics_lib.text_classification_metrics(
          arrays["labels"], arrays["predictions"], len(self.label_names),
          self.majority_label()))
      # Examples whose label train lacks: errors whatever the model does.
      results["num_unseen_labels"] = int(np.sum(
          arrays["labels"] == metrics_lib.UNKNOWN_LABEL))
    else:
      results.update(metrics_lib.glue_metrics(
          self.glue_task, arrays["labels"], arrays["predictions"]))
      if self.is_local:  # The floor beside the score, as for a user's data.
        results["majority_accuracy"] = metrics_lib.majority_accuracy(
            arrays["labels"], self.majority_label())
    results["num_examples"] = int(len(arrays["labels"]))
    return results

  # ---------------------------------------------------------------------------
  # Serving.

  def export_module(self, model):
    """`TextClassificationExportModule`: sentences (or pairs) in, label out.

    A user's dataset exports its train label names and its pair flag.
    Parity is checked on text files or the built-in corpus (the default
    `serving_examples`): GLUE data may be on tensorflow-datasets only.
    """
    return text_classification_export.TextClassificationExportModule(
        model, self.label_names, self.vocab_path, pair=self.is_pair,
        seq_length=self.seq_length, task_name=self.task_name)

  # `serving_examples` / `serving_scores` keep `FinetuneTask`'s defaults (no
  # examples of the task's own), for GLUE and for a user's dataset alike:
  # they are class methods called with (split, limit) by the converter
  # (`jobs.convert_run`), which rebuilds no task and parses no gin, and the
  # export (`export_info.json`: pair flag and labels) does not record the
  # data directory, so a user's validation split is not reachable from their
  # arguments. Parity then runs on a text file or the built-in corpus.

  # ---------------------------------------------------------------------------
  # Reporting.

  def report_name(self):
    if self.is_user_data:
      return (f"{super().report_name()} "
              f"{os.path.basename(os.path.normpath(self.data_dir))}")
    return f"{super().report_name()} {self.glue_task}"

  def describe(self):
    if self.is_user_data:
      try:
        labels = (f"{len(self.label_names)} labels, "
                  f"{'sentence pairs' if self.is_pair else 'single texts'}")
      except ValueError as e:  # Unreadable data; missing_data says why.
        labels = f"unreadable: {str(e).splitlines()[0]}"
      return (f"{super().describe()}, user dataset "
              f"{os.path.abspath(self.data_dir)} ({labels}; evaluated on "
              f"{self.eval_split})")
    where = (os.path.join(self.data_dir, "") if self.is_local else
             "tensorflow-datasets")
    return (f"{super().describe()}, GLUE {self.glue_task} from {where} "
            f"(evaluated on {self.eval_split})")
