"""GLUE fine-tuning: SST-2, MRPC and MNLI (Zhao et al., EACL 2021, Table 2).

The students are fine-tuned with a classifier on the pooled [CLS] output
(`models.SentenceClassifier`), sentence pairs packed as
`[CLS] A [SEP] B [SEP]` with type ids 0 and 1 (`glue_data.glue_featurizer`),
and scored on the dev sets: accuracy for SST-2 and MNLI (matched), F1 and
accuracy for MRPC (`metrics.glue_metrics`).

Data (`glue_data.load_glue`): tensorflow-datasets `glue/*` (no `data_dir`),
GLUE-format TSV directories, or the MNLI sample JSON files
(`MNLI/{train,dev}_sample.json`; say in reports that it is a sample).

Paper settings (Section 4.2): 10 epochs, LAMB, learning rate 1e-4, batch 64.
`glue_train_steps` turns epochs into the trainer's steps for a task's
training split, so a gin file can say "10 epochs".
"""

import functools
import os
from typing import Optional

import gin
import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning import glue_data
from mixvocab_tf.tasks.finetuning import glue_export_module
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.tasks.finetuning import snips_padding

#: Training examples of the full GLUE sets (tensorflow-datasets agrees), used
#: when the data is read from tensorflow-datasets.
GLUE_TRAIN_SIZES = {"sst2": 67349, "mrpc": 3668, "mnli": 392702}


def classification_loss(logits, labels):
  """(loss sum, correct count, example count) of one batch, float32."""
  logits = tf.cast(logits, tf.float32)
  labels = tf.cast(labels, tf.int32)
  losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                          logits=logits)
  correct = tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels)
  return (tf.reduce_sum(losses), tf.reduce_sum(tf.cast(correct, tf.float32)),
          tf.cast(tf.shape(labels)[0], tf.float32))


@functools.lru_cache(maxsize=16)
def _local_examples(glue_task, split, data_dir, source):
  """The examples of a local split as lists (read once per process)."""
  dataset, _ = glue_data.load_glue(glue_task, split, data_dir, source)
  rows = list(dataset.as_numpy_iterator())
  return ([r["sentence_a"] for r in rows], [r["sentence_b"] for r in rows],
          [int(r["label"]) for r in rows])


def count_train_examples(glue_task, data_dir=None, source="auto"):
  """Examples in a GLUE task's training split (read, or the known sizes)."""
  glue_task = glue_data.canonical_task(glue_task)
  if data_dir is None or source == "tfds":
    return GLUE_TRAIN_SIZES[glue_task]
  return len(_local_examples(glue_task, "train", data_dir, source)[2])


@gin.configurable(module="mixvocab_tf.tasks")
def glue_train_steps(glue_task: str = gin.REQUIRED,
                     data_dir: Optional[str] = None,
                     source: str = "auto",
                     epochs: float = 10.0,
                     global_batch_size: int = 64) -> int:
  """Optimizer steps of `epochs` passes over a GLUE task's training split.

  For gin: `Trainer.train_steps = @glue_train_steps()`, and with a scope,
  `Trainer.evaluate_every = @epoch/glue_train_steps()` and
  `epoch/glue_train_steps.epochs = 1` to evaluate once per epoch.
  """
  examples = count_train_examples(glue_task, data_dir, source)
  return max(1, int(round(epochs * examples / global_batch_size)))


@base_task.register_task("finetune_glue")
class FinetuneGlueTask(finetune_task.FinetuneTask):
  """Sentence (pair) classification fine-tuning on SST-2, MRPC or MNLI.

  Example (gin): `Trainer.task = 'finetune_glue'`,
  `FinetuneGlueTask.glue_task = 'mrpc'`,
  `FinetuneGlueTask.data_dir = '/data/glue'`; see
  `gin_configs/finetune_glue_cpu.gin`.

  Args:
    glue_task: 'sst2', 'mrpc' or 'mnli'.
    data_dir: the GLUE root (`SST-2/`, `MRPC/`, `MNLI/`) for local files, or
      the tensorflow-datasets data directory with `source='tfds'`; None:
      tensorflow-datasets' default.
    source: 'auto', 'tsv', 'mnli_json' or 'tfds' (see `glue_data.load_glue`).
    eval_split: the split evaluation reads ('validation'; MNLI:
      'validation_matched' or 'validation_mismatched'; 'train' works too).
    seq_length: tokens per example, special tokens included.
    pad_to_longest: pad each batch (training and evaluation) to its longest
      example instead of to seq_length (`snips_padding.trim_to_longest`):
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
               glue_task: str = "sst2",
               data_dir: Optional[str] = None,
               source: str = "auto",
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
    self.glue_task = glue_data.canonical_task(glue_task)
    if source not in glue_data.SOURCES:
      raise ValueError(f"source must be one of {glue_data.SOURCES}; received "
                       f"{source!r}.")
    self.data_dir = data_dir
    self.source = source
    self.eval_split = glue_data.canonical_split(self.glue_task, eval_split)
    self.label_names = glue_data.LABEL_NAMES[self.glue_task]
    self.report_metrics = metrics_lib.GLUE_TASK_METRICS[self.glue_task]
    # MRPC is reported by F1 first; it also picks the best checkpoint.
    self.best_metric = self.report_metrics[0]

  @property
  def is_local(self):
    return self.data_dir is not None and self.source != "tfds"

  def missing_data(self):
    if not self.is_local:
      return {}
    missing = {}
    for split in ("train", self.eval_split):
      try:
        _local_examples(self.glue_task, split, self.data_dir, self.source)
      except (FileNotFoundError, ValueError) as e:
        missing[f"GLUE {self.glue_task} {split}"] = str(e)
    return missing

  def _examples(self, split):
    """An unbatched dataset of `sentence_a`, `sentence_b`, `label`."""
    if self.is_local:
      sentences_a, sentences_b, labels = _local_examples(
          self.glue_task, split, self.data_dir, self.source)
      return tf.data.Dataset.from_tensor_slices({
          "sentence_a": tf.constant(sentences_a, tf.string),
          "sentence_b": tf.constant(sentences_b, tf.string),
          "label": tf.constant(labels, tf.int32)})
    return glue_data.load_glue(self.glue_task, split, self.data_dir,
                               source="tfds")[0]

  def build_model(self):
    return models.SentenceClassifier(
        self.build_encoder(), num_classes=len(self.label_names),
        dropout_rate=self.dropout_rate, pooling=self.pooling)

  def featurizer(self):
    """`featurize(batch)`: `glue_data.glue_featurizer`, keeping example_index."""
    featurize = glue_data.glue_featurizer(
        self.tokens, self.seq_length,
        pair=glue_data.is_pair_task(self.glue_task))

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
    batch is then cut to its longest example (`snips_padding`).

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
    return snips_padding.batch_for_training(dataset, batch_size, True,
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
      dataset = dataset.map(snips_padding.trim_to_longest)
    return dataset.prefetch(tf.data.AUTOTUNE)

  def num_train_examples(self):
    return count_train_examples(self.glue_task, self.data_dir, self.source)

  def compute_loss(self, model, features, training):
    logits = model(features, training=training)["logits"]
    loss_sum, correct, count = classification_loss(logits, features["label"])
    loss = tf.math.divide_no_nan(loss_sum, base_task.global_sum(count))
    return loss, {"classifier/loss": base_task.metric(loss_sum, count),
                  "classifier/accuracy": base_task.metric(correct, count)}

  def validation_step(self, model, features):
    logits = model(features, training=False)["logits"]
    loss_sum, _, count = classification_loss(logits, features["label"])
    return {
        "classifier/loss": base_task.metric(loss_sum, count),
        "example_index": features["example_index"],
        "predictions": tf.argmax(logits, -1, output_type=tf.int32),
        "labels": features["label"],
    }

  def reduce_aggregated_logs(self, state):
    arrays, results = self.concatenated(state)
    results.update(metrics_lib.glue_metrics(
        self.glue_task, arrays["labels"], arrays["predictions"]))
    results["num_examples"] = int(len(arrays["labels"]))
    return results

  def export_module(self, model):
    """`GlueExportModule`: sentences (or pairs) in, label out.

    Parity is checked on text files or the built-in corpus (the default
    `serving_examples`): GLUE data may be on tensorflow-datasets only.
    """
    return glue_export_module.GlueExportModule(
        model, self.label_names, self.vocab_path,
        pair=glue_data.is_pair_task(self.glue_task),
        seq_length=self.seq_length, task_name=self.task_name)

  def report_name(self):
    return f"{super().report_name()} {self.glue_task}"

  def describe(self):
    where = (os.path.join(self.data_dir, "") if self.is_local else
             "tensorflow-datasets")
    return (f"{super().describe()}, GLUE {self.glue_task} from {where} "
            f"(evaluated on {self.eval_split})")
