"""Text classification fine-tuning: GLUE SST-2, MRPC and MNLI (Zhao et al.,
EACL 2021, Table 2), and users' own text classification datasets.

The students are fine-tuned with a classifier on the pooled [CLS] output
(`models.SentenceClassifier`), sentence pairs packed as
`[CLS] A [SEP] B [SEP]` with type ids 0 and 1
(`text_classification_data.text_classification_featurizer`).

The task takes a dataset (`mixvocab_tf.datasets.catalog`), named by one
gin-configurable value, `text_classification_dataset.name`:

- 'glue/sst2', 'glue/mrpc', 'glue/mnli' (`datasets.glue`): GLUE-format TSV
  directories or the MNLI sample JSON files (`data_dir`, the GLUE root; say
  in reports that the MNLI sample is a sample), or tensorflow-datasets
  `glue/*` (no `data_dir`). Scored on the dev sets: accuracy for SST-2 and
  MNLI (matched), F1 and accuracy for MRPC (`metrics.glue_metrics`), with
  GLUE's fixed label ids;
- 'files' (`datasets.user_dataset`): a user's directory of `train`,
  `validation` (or `dev`, `valid`) and optionally `test` files, CSV, TSV or
  JSONL, one text (or a pair) and a label per example, read and checked
  before training (its module docstring is the data contract). The label
  names are train's, sorted (label id = position); a validation or test
  label that train lacks gets the id -1 (`metrics.UNKNOWN_LABEL`): it is
  left out of the loss and counted wrong in the scores, and the dataset's
  warning lists such labels. Scores: accuracy, macro-F1 and the
  majority-class accuracy (`metrics.text_classification_metrics`).

Paper settings (Section 4.2): 10 epochs, LAMB, learning rate 1e-4, batch 64.
`text_classification_train_steps` turns epochs into the trainer's steps for
the dataset's training split, so a gin file can say "10 epochs". Both the
task and the step count read `text_classification_dataset()`, so its
bindings choose the data for both (finetune_glue_paper.gin binds them to the
macros `DATASET` and `DATA_DIR`):

  --gin_bindings="DATASET = 'files'" --gin_bindings="DATA_DIR = '/data/mine'"
"""

import collections
import os
from typing import Optional

import gin
import numpy as np
import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf.core import base_task
from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import out_of_scope
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.text_classification import export_module as text_classification_export
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.tasks.finetuning import batch_padding

#: The label names by id, one a line, written beside the run's checkpoints.
LABELS_FILE = "labels.txt"


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


@gin.configurable(module="mixvocab_tf.tasks")
def text_classification_dataset(name: str = "glue/sst2",
                                data_dir: Optional[str] = None,
                                source: str = "auto",
                                text_column: str = "text",
                                text_b_column: Optional[str] = None,
                                label_column: str = "label",
                                out_of_scope: Optional[str] = None):
  """The dataset text classification reads (`datasets.catalog`), by name.

  `TextClassificationTask` and `text_classification_train_steps` read it
  when not given one, so its bindings choose the data of both:

    text_classification_dataset.name = 'glue/mrpc'
    text_classification_dataset.data_dir = '/data/glue'

  or, for a user's CSV, TSV or JSONL files (`datasets.user_dataset`):

    text_classification_dataset.name = 'files'
    text_classification_dataset.data_dir = '/data/mine'
    text_classification_dataset.text_column = 'review'

  Args:
    name: 'glue/sst2', 'glue/mrpc', 'glue/mnli' or 'files'.
    data_dir: GLUE: the GLUE root (`SST-2/`, `MRPC/`, `MNLI/`) for local
      files, or the tensorflow-datasets data directory with `source='tfds'`;
      None: tensorflow-datasets' default. 'files': the user's dataset
      directory (required).
    source: GLUE: 'auto', 'tsv', 'mnli_json' or 'tfds' (`datasets.glue`).
    text_column, text_b_column, label_column: 'files': the columns (or
      JSONL keys) of the text, of the second text of a pair, and of the
      label (`datasets.user_dataset.load_dataset`; unused for GLUE).
    out_of_scope: 'files': a file of texts (one a line) that join train
      labelled 'out_of_scope' (the own-data job's `OUT_OF_SCOPE`); None:
      none.
  """
  return catalog.text_classification(name, data_dir, source, text_column,
                                     text_b_column, label_column,
                                     out_of_scope)


@gin.configurable(module="mixvocab_tf.tasks")
def text_classification_train_steps(epochs: float = 10.0,
                                    global_batch_size: int = 64,
                                    dataset=None) -> int:
  """Optimizer steps of `epochs` passes over a dataset's training split.

  The dataset is `text_classification_dataset()`'s unless given, the one
  `TextClassificationTask` reads, so the epoch budget follows the data
  (GLUE's split, or the user's).

  For gin: `Trainer.train_steps = @text_classification_train_steps()`, and
  with a scope, `Trainer.evaluate_every =
  @epoch/text_classification_train_steps()` and
  `epoch/text_classification_train_steps.epochs = 1` to evaluate once per
  epoch.
  """
  if dataset is None:
    dataset = text_classification_dataset()
  examples = dataset.num_train_examples()
  return max(1, int(round(epochs * examples / global_batch_size)))


@base_task.register_task("text_classification")
class TextClassificationTask(finetune_task.FinetuneTask):
  """Sentence (pair) classification fine-tuning on a text classification
  dataset: GLUE SST-2, MRPC, MNLI, or a user's own files.

  Example (gin): `Trainer.task = 'text_classification'`,
  `text_classification_dataset.name = 'glue/mrpc'`,
  `text_classification_dataset.data_dir = '/data/glue'`; see
  `gin_configs/finetuning/finetune_glue_small.gin`. A user's dataset:
  `text_classification_dataset.name = 'files'`,
  `text_classification_dataset.data_dir = '/data/mine'` (see the module
  docstring).

  Args:
    dataset: a text classification dataset (`datasets.catalog`); None:
      `text_classification_dataset()`, configured by its gin bindings.
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
    **kwargs: the arguments of `finetune_task.FinetuneTask`.
  """

  best_metric = "accuracy"

  def __init__(self,
               dataset=None,
               eval_split: str = "validation",
               seq_length: int = 128,
               pad_to_longest: bool = False,
               bucket_boundaries=None,
               pooling: str = "cls",
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
    self.dataset = (dataset if dataset is not None else
                    text_classification_dataset())
    self.eval_split = self.dataset.split_name(eval_split)
    self._lists = {}
    self._eval_feature_cache = {}  # split -> its features (NumPy).
    glue_task = self.dataset.glue_task
    self.report_metrics = (metrics_lib.GLUE_TASK_METRICS[glue_task]
                           if glue_task else
                           metrics_lib.TEXT_CLASSIFICATION_METRICS)
    # MRPC is reported by F1 first; it also picks the best checkpoint.
    self.best_metric = self.report_metrics[0]

  # ---------------------------------------------------------------------------
  # Data.

  @property
  def dataset_name(self):
    """What names the data in teacher caches: the GLUE task ('sst2', ...),
    or 'user:<absolute dataset directory>'."""
    return self.dataset.fingerprint_name

  @property
  def label_names(self):
    """Names by label id: GLUE's, or the user's train labels, sorted."""
    return self.dataset.label_names

  @property
  def is_pair(self):
    """Whether examples are sentence pairs (a user's: train has `texts_b`)."""
    return self.dataset.is_pair

  def majority_label(self):
    """The most frequent training label id (a tie: the smaller id), of the
    user's labels: not `out_of_scope` where the own-data job added it
    (`text_classification_dataset.out_of_scope`), which would make a floor
    of 0 on a split without such texts."""
    counts = collections.Counter(self.split_lists("train")[2])
    if getattr(self.dataset, "out_of_scope", None) and len(counts) > 1:
      del counts[list(self.label_names).index(out_of_scope.OUT_OF_SCOPE)]
    return min(counts, key=lambda label: (-counts[label], label))

  def missing_data(self):
    if not self.dataset.in_memory:
      return {}
    missing = {}
    for split in ("train", self.eval_split):
      try:
        self.split_lists(split)
      except (FileNotFoundError, ValueError) as e:
        missing[f"{self.dataset.title} {split}"] = str(e)
    return missing

  def split_lists(self, split):
    """(sentences_a, sentences_b, label ids) of a split (cached).

    `sentences_b` is all '' for single sentences. A label id is the label's
    position in `label_names`, or -1 (`metrics.UNKNOWN_LABEL`) for a label
    train lacks (a user's dataset).
    """
    if split not in self._lists:
      examples = self.dataset.examples(split)
      ids = {name: i for i, name in enumerate(self.label_names)}
      texts_b = (examples.texts_b if examples.texts_b is not None else
                 [""] * len(examples))
      self._lists[split] = (
          list(examples.texts_a), list(texts_b),
          [ids.get(label, metrics_lib.UNKNOWN_LABEL)
           for label in examples.labels])
    return self._lists[split]

  def train_split_lists(self):
    """(sentences_a, sentences_b, label_ids) of the training split.

    Strings (`sentences_b` all '' for single sentences) and ints, in file
    order, from wherever the dataset is read (GLUE files or
    tensorflow-datasets, or the user's files).
    """
    return self.split_lists("train")

  def _examples(self, split):
    """An unbatched dataset of `sentence_a`, `sentence_b`, `label`."""
    if not self.dataset.in_memory:
      return self.dataset.tfds_examples(split)
    sentences_a, sentences_b, labels = self.split_lists(split)
    return tf.data.Dataset.from_tensor_slices({
        "sentence_a": tf.constant(sentences_a, tf.string),
        "sentence_b": tf.constant(sentences_b, tf.string),
        "label": tf.constant(labels, tf.int32)})

  # ---------------------------------------------------------------------------
  # Model and inputs.

  def build_model(self):
    return self.build_model_for(self.head_labels())

  def head_labels(self):
    return {"classifier": list(self.label_names)}

  def write_assets(self, directory):
    """Writes `labels.txt`, the label names by id (a warm start reads it)."""
    with tf.io.gfile.GFile(os.path.join(directory, LABELS_FILE), "w") as f:
      f.write("".join(f"{name}\n" for name in self.label_names))

  @staticmethod
  def run_head_labels(run_dir):
    path = os.path.join(run_dir, LABELS_FILE)
    if not tf.io.gfile.exists(path):
      raise FileNotFoundError(
          f"The warm-start run {run_dir} has no {LABELS_FILE}, its label "
          "names (runs before 2026-12-06 wrote none): give a text "
          "classification run made since.")
    with tf.io.gfile.GFile(path) as f:
      return {"classifier": f.read().splitlines()}

  def build_model_for(self, head_labels):
    return models.SentenceClassifier(
        self.build_encoder(), num_classes=len(head_labels["classifier"]),
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
    if self.pad_to_longest:
      # Batches of near-equal lengths, each cut to its longest text: the
      # split is featurized once (evaluation reads it again every time).
      features = self._eval_features()
      order = batch_padding.evaluation_order(
          features["input_mask"].sum(axis=1), self.eval_batch_size)
      return tf.data.Dataset.from_tensor_slices(
          {k: v[order] for k, v in features.items()}).batch(
              self.eval_batch_size).map(
                  batch_padding.trim_to_longest).prefetch(tf.data.AUTOTUNE)
    return self.with_example_index(self._examples(self.eval_split)).batch(
        self.eval_batch_size).map(
            self.featurizer(), num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True).prefetch(tf.data.AUTOTUNE)

  def _eval_features(self):
    """The evaluation split's features (NumPy, file order), cached."""
    split = self.eval_split
    if split not in self._eval_feature_cache:
      columns = {}
      for batch in self.with_example_index(self._examples(split)).batch(
          1024).map(self.featurizer()):
        for k, v in batch.items():
          columns.setdefault(k, []).append(v.numpy())
      self._eval_feature_cache[split] = {
          k: np.concatenate(v) for k, v in columns.items()}
    return self._eval_feature_cache[split]

  def num_train_examples(self):
    return self.dataset.num_train_examples()

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
    glue_task = self.dataset.glue_task
    if glue_task:
      results.update(metrics_lib.glue_metrics(
          glue_task, arrays["labels"], arrays["predictions"]))
      # The floor beside the score, as for a user's data.
      if self.dataset.in_memory:
        results["majority_accuracy"] = metrics_lib.majority_accuracy(
            arrays["labels"], self.majority_label())
    else:
      names = list(self.label_names)
      results.update(metrics_lib.text_classification_metrics(
          arrays["labels"], arrays["predictions"], len(names),
          self.majority_label(), abstain=(
              names.index(out_of_scope.OUT_OF_SCOPE)
              if out_of_scope.OUT_OF_SCOPE in names else None)))
      # Examples whose label train lacks: errors whatever the model does.
      results["num_unseen_labels"] = int(np.sum(
          arrays["labels"] == metrics_lib.UNKNOWN_LABEL))
    results["num_examples"] = int(len(arrays["labels"]))
    return results

  def eval_answers(self, state):
    """(example index, {'label'}) of each evaluated example, in split order:
    the answers `evaluation.write_answers` keeps beside the best checkpoint,
    in the exported predictor's field."""
    arrays, _ = self.concatenated(state)
    names = self.label_names
    return [(int(i), {"label": names[p]}) for i, p in
            zip(arrays["example_index"], arrays["predictions"])]

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
  # (`serving.convert_run`), which rebuilds no task and parses no gin, and the
  # export (`export_info.json`: pair flag and labels) does not record the
  # data directory, so a user's validation split is not reachable from their
  # arguments. Parity then runs on a text file or the built-in corpus.

  # ---------------------------------------------------------------------------
  # Reporting.

  def report_name(self):
    return f"{super().report_name()} {self.dataset.short_name}"

  def describe(self):
    return f"{super().describe()}, {self.dataset.describe(self.eval_split)}"
