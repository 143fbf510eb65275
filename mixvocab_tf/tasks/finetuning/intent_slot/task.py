"""SNIPS fine-tuning: joint intent detection and slot filling (Section 4.2).

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4.2 and Table 3: the students are fine-tuned on SNIPS (Goo et
al. 2018 split) for the intent of each query and an IOB slot tag for each
word, and evaluated by intent accuracy and slot F1. The model
(`models.JointIntentSlotModel`) predicts the intent from the pooled [CLS]
output and a tag at every position; a word's tag is the prediction at its
first WordPiece, and the later pieces of a word carry no loss
(`intent_slot_data.intent_slot_featurizer` gives them `slot_weights` 0). The loss is

  mean over queries of the intent cross-entropy
  + mean over the first pieces of all words of the slot cross-entropy,

both means taken over the global batch. Evaluation decodes the first pieces'
predictions back to one tag per word (`intent_slot_data.decode_slot_tags`) and
scores them against the gold word tags with CoNLL chunk F1
(`metrics.snips_metrics`), with intent and sentence accuracy.

The task takes a dataset (`mixvocab_tf.datasets.catalog`), named by one
gin-configurable value, `intent_slot_dataset.name`: 'snips' (the built-in
copy, or a directory of SNIPS) or 'files' (a user's intent-and-slot
dataset, `datasets.user_dataset`), read and checked before training.

The label vocabularies are built from the training split and written as
`snips_labels.json` beside the checkpoints (and in `best/`), for evaluation
and export.

Paper settings (Section 4.2): Adam, learning rate 1e-4, batch 64.
"""

import os
from typing import Optional

import gin
import numpy as np
import tensorflow as tf

from mixvocab_tf import models
from mixvocab_tf.core import base_task
from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning import iob_decoding
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning.intent_slot import export_module as intent_slot_export
from mixvocab_tf.tasks.finetuning import batch_padding

LABELS_FILE = "snips_labels.json"
SPLITS = ("train", "valid", "test")
SLOT_DECODINGS = ("viterbi", "argmax")


def joint_intent_slot_loss(outputs, features):
  """This replica's share of the joint SNIPS loss, and its metrics.

  Positions with `slot_weights` 0 (later WordPieces of a word, [CLS], [SEP],
  padding, whose `slot_ids` are -1) contribute nothing, whatever their
  logits: their losses are dropped with `tf.where`, so even a NaN there
  cannot reach the loss.

  Args:
    outputs: the model's `intent_logits` [B, I] and `slot_logits` [B, L, S].
    features: a batch with `intent_id` [B], `slot_ids` [B, L] and
      `slot_weights` [B, L].

  Returns:
    (loss, metrics): `loss` = intent cross-entropy summed over this replica's
    queries / queries in the global batch + slot cross-entropy summed over
    its first pieces / first pieces in the global batch. Metrics
    `intent/loss`, `intent/accuracy`, `slot/loss`, `slot/accuracy` (per first
    piece) as `base_task.metric` pairs.
  """
  intent_logits = tf.cast(outputs["intent_logits"], tf.float32)
  slot_logits = tf.cast(outputs["slot_logits"], tf.float32)
  gold_intents = tf.cast(features["intent_id"], tf.int32)
  # An intent train lacks (IGNORE_ID, evaluation data only): no loss, and
  # an error in accuracy.
  known = gold_intents >= 0
  intent_ids = tf.maximum(gold_intents, 0)
  weights = tf.cast(features["slot_weights"], tf.float32)
  tagged = weights > 0
  slot_ids = tf.where(tagged, tf.cast(features["slot_ids"], tf.int32), 0)

  intent_losses = tf.where(
      known, tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=intent_ids, logits=intent_logits), 0.0)
  slot_losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=slot_ids, logits=slot_logits)
  slot_losses = tf.where(tagged, slot_losses * weights, 0.0)
  intent_correct = tf.cast(tf.equal(
      tf.argmax(intent_logits, -1, output_type=tf.int32), gold_intents),
                           tf.float32)
  slot_correct = tf.cast(tf.equal(
      tf.argmax(slot_logits, -1, output_type=tf.int32), slot_ids), tf.float32)
  slot_correct = tf.where(tagged, slot_correct * weights, 0.0)

  num_queries = tf.cast(tf.shape(intent_ids)[0], tf.float32)
  num_known = tf.reduce_sum(tf.cast(known, tf.float32))
  num_pieces = tf.reduce_sum(weights)
  intent_sum = tf.reduce_sum(intent_losses)
  slot_sum = tf.reduce_sum(slot_losses)
  loss = (tf.math.divide_no_nan(intent_sum, base_task.global_sum(num_known))
          + tf.math.divide_no_nan(slot_sum, base_task.global_sum(num_pieces)))
  metrics = {
      "intent/loss": base_task.metric(intent_sum, num_known),
      "intent/accuracy": base_task.metric(tf.reduce_sum(intent_correct),
                                          num_queries),
      "slot/loss": base_task.metric(slot_sum, num_pieces),
      "slot/accuracy": base_task.metric(tf.reduce_sum(slot_correct),
                                        num_pieces),
  }
  return loss, metrics


@gin.configurable(module="mixvocab_tf.tasks")
def intent_slot_dataset(name: str = "snips", data_dir: Optional[str] = None,
                        out_of_scope: Optional[str] = None):
  """The dataset intent and slot fine-tuning reads (`datasets.catalog`).

  `IntentSlotTask` and `intent_slot_train_steps` read it when not given
  one, so its bindings choose the data of both: by default the built-in
  SNIPS copy; a user's dataset (`datasets.user_dataset`: `train/`, `valid/`
  or `dev/`, optional `test/` with seq.in, seq.out, label; or JSONL files):

    intent_slot_dataset.name = 'files'
    intent_slot_dataset.data_dir = '/data/my_intents'

  Args:
    name: 'snips' or 'files'.
    data_dir: 'snips': None for the built-in copy, or a directory of SNIPS;
      'files': the user's dataset directory (required).
    out_of_scope: 'files': a file of texts (one a line) that join train as
      intent 'out_of_scope', every word 'O' (the own-data job's
      `OUT_OF_SCOPE`); None: none.
  """
  return catalog.intent_slot(name, data_dir, out_of_scope)


def builtin_snips(split: str) -> examples_lib.IntentSlotExamples:
  """A split of the built-in SNIPS copy ('train' or 'valid')."""
  return catalog.intent_slot("snips").examples(split)


@gin.configurable(module="mixvocab_tf.tasks")
def intent_slot_train_steps(epochs: float = 10.0, global_batch_size: int = 64,
                            dataset=None) -> int:
  """Optimizer steps of `epochs` passes over the training split.

  The dataset is `intent_slot_dataset()`'s unless given (by default the
  built-in SNIPS train, 13,084 queries), the one `IntentSlotTask` reads.
  For gin: `Trainer.train_steps = @intent_slot_train_steps()`; with a
  scope, `Trainer.evaluate_every = @epoch/intent_slot_train_steps()` and
  `epoch/intent_slot_train_steps.epochs = 1` evaluate once per epoch.
  """
  if dataset is None:
    dataset = intent_slot_dataset()
  examples = len(dataset.examples("train").intents)
  return max(1, int(round(epochs * examples / global_batch_size)))


@base_task.register_task("intent_slot")
class IntentSlotTask(finetune_task.FinetuneTask):
  """Joint intent and slot fine-tuning: SNIPS, or a user's intents and slots.

  Example (gin): `Trainer.task = 'intent_slot'` and
  `IntentSlotTask.init_checkpoint = '/tmp/stage2'`; see
  `gin_configs/finetuning/finetune_snips_small.gin`. A user's dataset:
  `intent_slot_dataset.name = 'files'`,
  `intent_slot_dataset.data_dir = '/data/my_intents'`.

  Args:
    dataset: an intent-and-slot dataset (`datasets.catalog`), read and
      checked before training; None: `intent_slot_dataset()`, configured by
      its gin bindings (by default the built-in SNIPS copy).
    eval_split: the split evaluation reads ('valid', 'test' or 'train').
    labels_file: a `snips_labels.json` to use instead of building the label
      vocabularies from the training split (e.g. a fine-tuned model's).
    seq_length: tokens per query (the longest SNIPS query has 35 words).
    slot_decoding: how word tags are read from the slot logits: 'viterbi'
      (the best valid IOB sequence, `iob_decoding`) or 'argmax' (each word's
      own best tag). Evaluation reports both (`slot_f1_viterbi`,
      `slot_f1_argmax`); `slot_f1` and the best checkpoint follow this one.
    pad_to_longest: pad each training batch to its longest query instead of
      to seq_length (`batch_padding`); same losses, less work per step.
    bucket_boundaries: token lengths that split training queries into
      buckets of similar length, each batch from one bucket (implies
      pad_to_longest); None: no bucketing.
    **kwargs: the arguments of `finetune_task.FinetuneTask` (encoder source,
      vocabulary, batch sizes, dropout, ...).
  """

  best_metric = "slot_f1"
  report_metrics = ("intent_accuracy", "slot_f1", "sentence_accuracy")

  def __init__(self,
               dataset=None,
               eval_split: str = "valid",
               labels_file: Optional[str] = None,
               seq_length: int = 64,
               slot_decoding: str = "viterbi",
               pad_to_longest: bool = False,
               bucket_boundaries=None,
               **kwargs):
    super().__init__(seq_length=seq_length, **kwargs)
    self.pad_to_longest = bool(pad_to_longest)
    self.bucket_boundaries = (tuple(bucket_boundaries) if bucket_boundaries
                              else None)
    if eval_split not in SPLITS:
      raise ValueError(f"eval_split must be one of {SPLITS}; received "
                       f"{eval_split!r}.")
    if slot_decoding not in SLOT_DECODINGS:
      raise ValueError(f"slot_decoding must be one of {SLOT_DECODINGS}; "
                       f"received {slot_decoding!r}.")
    self.slot_decoding = slot_decoding
    self.dataset = dataset if dataset is not None else intent_slot_dataset()
    self.eval_split = eval_split
    self.labels_file = labels_file
    self._labels = None
    self._eval_features = {}  # split -> its features (NumPy), in file order.

  def examples(self, split: str) -> examples_lib.IntentSlotExamples:
    """The examples of `split` ('train', 'valid', 'test').

    Raises:
      DataError: a file breaks the data contract (the message names the
        file and the line).
      FileNotFoundError: the dataset has no such split (e.g. no test split).
      ValueError: the split has no labels.
    """
    if split not in SPLITS:
      raise ValueError(f"split must be one of {SPLITS}; received {split!r}.")
    return self.dataset.examples(split)

  def missing_data(self):
    missing = {}
    for split in ("train", self.eval_split):
      # A file that breaks the data contract raises its own DataError, which
      # names the file and line, before any training.
      try:
        self.examples(split)
      except FileNotFoundError as e:
        missing[f"intent-and-slot {split}"] = str(e)
    if self.labels_file and not tf.io.gfile.exists(self.labels_file):
      missing["SNIPS labels"] = f"not found: {self.labels_file}"
    return missing

  @property
  def labels(self) -> intent_slot_data.IntentSlotLabels:
    """Intent and slot vocabularies (from `labels_file` or the train split)."""
    if self._labels is None:
      if self.labels_file:
        self._labels = intent_slot_data.IntentSlotLabels.load(self.labels_file)
      else:
        self._labels = intent_slot_data.IntentSlotLabels.from_examples(
            self.examples("train"))
    return self._labels

  def write_assets(self, directory):
    """Writes `snips_labels.json` into `directory` (decoding needs it)."""
    self.labels.save(os.path.join(directory, LABELS_FILE))

  def build_model(self):
    return self.build_model_for(self.head_labels())

  def head_labels(self):
    return {"intent_classifier": self.labels.intents,
            "slot_classifier": self.labels.slots}

  @staticmethod
  def run_head_labels(run_dir):
    path = os.path.join(run_dir, LABELS_FILE)
    if not tf.io.gfile.exists(path):
      raise FileNotFoundError(
          f"The warm-start run {run_dir} has no {LABELS_FILE}, its label "
          "ids: give a finished intent-and-slot run.")
    labels = intent_slot_data.IntentSlotLabels.load(path)
    return {"intent_classifier": labels.intents,
            "slot_classifier": labels.slots}

  def build_model_for(self, head_labels):
    return models.JointIntentSlotModel(
        self.build_encoder(),
        num_intents=len(head_labels["intent_classifier"]),
        num_slots=len(head_labels["slot_classifier"]),
        dropout_rate=self.dropout_rate)

  def build_inputs(self, input_context=None, training=True):
    if training:
      featurize = intent_slot_data.intent_slot_featurizer(self.tokens,
                                                          self.seq_length)
      dataset = intent_slot_data.make_intent_slot_dataset(
          self.examples("train"), self.labels)
      # The featurizer maps one query at a time (ragged words -> pieces).
      return batch_padding.batch_for_training(
          self.shuffled(dataset, input_context).map(
              featurize, num_parallel_calls=tf.data.AUTOTUNE,
              deterministic=True),
          self.replica_batch_size(input_context), self.pad_to_longest,
          self.bucket_boundaries).prefetch(tf.data.AUTOTUNE)
    # Evaluation reads its split again at every evaluation: featurized once,
    # a batch of queries at a time (the same features as one by one).
    split = self.eval_split
    if split not in self._eval_features:
      features = intent_slot_data.featurize_examples(
          self.examples(split), self.labels,
          intent_slot_data.intent_slot_batch_featurizer(self.tokens,
                                                        self.seq_length))
      features["example_index"] = np.arange(
          len(features["intent_id"]), dtype=np.int64)
      self._eval_features[split] = features
    features = self._eval_features[split]
    trim = self.pad_to_longest or self.bucket_boundaries
    if trim:
      # Batches of near-equal lengths, each cut to its longest query
      # (validation_step pads the predictions back to seq_length).
      order = batch_padding.evaluation_order(
          features["input_mask"].sum(axis=1), self.eval_batch_size)
      features = {k: v[order] for k, v in features.items()}
    dataset = tf.data.Dataset.from_tensor_slices(features).batch(
        self.eval_batch_size)
    if trim:
      dataset = dataset.map(batch_padding.trim_to_longest)
    return dataset.prefetch(tf.data.AUTOTUNE)

  def num_train_examples(self):
    return len(self.examples("train").intents)

  def compute_loss(self, model, features, training):
    return joint_intent_slot_loss(model(features, training=training),
                                  features)

  def validation_step(self, model, features):
    outputs = model(features, training=False)
    _, metrics = joint_intent_slot_loss(outputs, features)
    positions = features["word_start_positions"]
    # Each word's slot logits at its first piece: [batch, max_words, slots].
    word_logits = tf.gather(tf.cast(outputs["slot_logits"], tf.float32),
                            tf.maximum(positions, 0), batch_dims=1)
    return dict(
        metrics,
        example_index=features["example_index"],
        intent_predictions=tf.argmax(outputs["intent_logits"], -1,
                                     output_type=tf.int32),
        word_slot_logits=word_logits,
        word_start_positions=positions,
        num_words=features["num_words"])

  def decode_word_tags(self, word_logits, word_start_positions, num_words,
                       decoding=None):
    """One tag per word from per-word slot logits (`slot_decoding`).

    Words without a position (cut by `seq_length`) are tagged 'O'; they
    come last, so the decoded words are each query's kept prefix.
    """
    slots = self.labels.slots
    kept = (np.asarray(word_start_positions) >= 0).sum(-1)
    if (decoding or self.slot_decoding) == "viterbi":
      start, transitions = iob_decoding.allowed_transitions(slots)
      ids = iob_decoding.viterbi_decode_numpy(word_logits, kept, start,
                                              transitions)
    else:
      ids = [list(row[:k]) for row, k in
             zip(np.asarray(word_logits).argmax(-1), kept)]
    return [[slots[i] for i in row] + [intent_slot_data.OUTSIDE_TAG] * (int(n) - k)
            for row, k, n in zip(ids, kept, np.asarray(num_words))]

  def reduce_aggregated_logs(self, state):
    arrays, results = self.concatenated(state)
    examples = self.examples(self.eval_split)
    # All of the split, or the first batches of it (`max_batches`).
    index = arrays["example_index"]
    labels = self.labels
    predicted_intents = [labels.intents[i]
                         for i in arrays["intent_predictions"]]
    gold_intents = [examples.intents[i] for i in index]
    gold_tags = [examples.tags[i] for i in index]
    for decoding in SLOT_DECODINGS:
      predicted_tags = self.decode_word_tags(
          arrays["word_slot_logits"], arrays["word_start_positions"],
          arrays["num_words"], decoding)
      scores = metrics_lib.snips_metrics(gold_intents, predicted_intents,
                                         gold_tags, predicted_tags)
      results[f"slot_f1_{decoding}"] = scores["slot_f1"]
      if decoding == self.slot_decoding:
        results.update(scores)
    results["num_examples"] = len(predicted_intents)
    return results

  def eval_answers(self, state):
    """(example index, {'intent', 'tags'}) of each evaluated query, in split
    order: the answers `evaluation.write_answers` keeps beside the best
    checkpoint, in the exported predictor's fields."""
    arrays, _ = self.concatenated(state)
    intents = [self.labels.intents[i] for i in arrays["intent_predictions"]]
    tags = self.decode_word_tags(arrays["word_slot_logits"],
                                 arrays["word_start_positions"],
                                 arrays["num_words"])
    return [(int(i), {"intent": intent, "tags": row}) for i, intent, row in
            zip(arrays["example_index"], intents, tags)]

  # ---------------------------------------------------------------------------
  # Serving (see `finetune_task.FinetuneTask`).

  def export_module(self, model):
    """`IntentSlotExportModule`: raw queries in, intent and per-word tags out."""
    return intent_slot_export.IntentSlotExportModule(
        model, self.labels, self.vocab_path, seq_length=self.seq_length,
        task_name=self.task_name, slot_decoding=self.slot_decoding)

  @classmethod
  def export_overrides(cls, model_dir, labels=None):
    """The run's `snips_labels.json` (or `labels`): the ids it was trained on.

    Without it the labels would be rebuilt from the training split, which
    gives other ids if the data changed since.
    """
    if labels is None and model_dir:
      run_labels = os.path.join(model_dir, LABELS_FILE)
      labels = run_labels if tf.io.gfile.exists(run_labels) else None
    return {"labels_file": labels} if labels else {}

  @classmethod
  def serving_examples(cls, split, limit):
    """The built-in SNIPS split's queries (train calibrates, valid checks)."""
    words = builtin_snips(split).words
    return [" ".join(w) for w in words[:limit]]

  @classmethod
  def serving_scores(cls, predictions, split):
    """Intent accuracy and slot F1 on the built-in split's gold labels."""
    gold = builtin_snips(split)
    n = len(predictions)
    scores = intent_slot_export.intent_slot_scores(predictions, gold.intents[:n],
                                              gold.tags[:n])
    return {k: scores[k] for k in ("intent_accuracy", "slot_f1")}

  def describe(self):
    return (f"{super().describe()}, {self.dataset.describe()}, "
            f"{self.labels!r}")
