"""Evaluation metrics for GLUE, SNIPS and users' text classification.

The paper (Zhao et al., EACL 2021, §4.2, Tables 2-3) reports accuracy on SST-2
and MNLI, F1 and accuracy on MRPC, and intent accuracy and slot F1 on SNIPS.
Slot F1 is the CoNLL chunk-level score of `conlleval.pl`: chunks are read from
IOB tags (an `I-` that follows `O` or a chunk of another type starts a new
chunk, as in conlleval), and precision, recall and F1 count exact (start, end,
type) matches, micro-averaged over the whole split. `seqeval.metrics.f1_score`
in its default mode gives the same numbers; seqeval is not a dependency of the
package, so the chunking is written here (about 40 lines) and tested against
seqeval.

A user's text classification dataset (`text_classification` on the dataset
'files', `datasets.user_dataset`) is scored by accuracy, macro-F1 over the
training label set and the majority-class accuracy, the floor beside accuracy
(`text_classification_metrics`). Its validation or test split may hold labels
that train lacks: they have the id `UNKNOWN_LABEL` (-1), which no prediction
equals, so they count as errors.

Metrics are computed in NumPy after prediction, outside the graph: they are
corpus-level (F1 is not a mean of per-batch F1s) and need word-level tags.
"""

import collections

import numpy as np

#: Metric names each GLUE task reports, in the paper's order.
GLUE_TASK_METRICS = {
    "sst2": ("accuracy",),
    "mrpc": ("f1", "accuracy"),
    "mnli": ("accuracy",),
}

#: Metric names of a user's text classification dataset, in report order.
TEXT_CLASSIFICATION_METRICS = ("accuracy", "macro_f1", "majority_accuracy")
#: Label id of an example whose label the training split lacks.
UNKNOWN_LABEL = -1


def _as_1d(values, name):
  array = np.asarray(values)
  if array.ndim != 1:
    raise ValueError(
        f"{name} must be one-dimensional; received shape {array.shape}.")
  return array


def _check_same_length(labels, predictions):
  if labels.shape[0] != predictions.shape[0]:
    raise ValueError(
        "labels and predictions must have the same length; received "
        f"{labels.shape[0]} and {predictions.shape[0]}.")
  if labels.shape[0] == 0:
    raise ValueError(
        "labels and predictions are empty; there is nothing to score.")


def accuracy(labels, predictions):
  """Fraction of positions where `predictions` equals `labels` (1-D arrays)."""
  labels = _as_1d(labels, "labels")
  predictions = _as_1d(predictions, "predictions")
  _check_same_length(labels, predictions)
  return float(np.mean(labels == predictions))


def binary_f1(labels, predictions, positive_label=1):
  """F1 of class `positive_label` (MRPC: 1 = equivalent), as GLUE reports it.

  Returns 0.0 when there are no true positives (precision or recall undefined),
  as scikit-learn does with `zero_division=0`.
  """
  labels = _as_1d(labels, "labels")
  predictions = _as_1d(predictions, "predictions")
  _check_same_length(labels, predictions)
  gold = labels == positive_label
  pred = predictions == positive_label
  true_positives = int(np.sum(gold & pred))
  if true_positives == 0:
    return 0.0
  return 2.0 * true_positives / (int(np.sum(gold)) + int(np.sum(pred)))


def glue_metrics(task, labels, predictions):
  """The metrics the paper reports for GLUE `task` (sst2, mrpc or mnli)."""
  key = task.lower().replace("-", "").replace("_", "")
  if key not in GLUE_TASK_METRICS:
    raise ValueError(
        f"Unknown GLUE task {task!r}; expected one of "
        f"{sorted(GLUE_TASK_METRICS)}.")
  result = {"accuracy": accuracy(labels, predictions)}
  if key == "mrpc":
    result["f1"] = binary_f1(labels, predictions, positive_label=1)
  return {name: result[name] for name in GLUE_TASK_METRICS[key]}


def macro_f1(labels, predictions, num_classes, abstain=None):
  """Macro-F1 over the known classes 0..num_classes-1.

  For each known class k: tp = examples with gold k predicted k, fp =
  examples predicted k whose gold label is another one, fn = examples with
  gold k predicted otherwise; F1_k = 2 tp / (2 tp + fp + fn). An unknown gold
  label (`UNKNOWN_LABEL`, or any id outside 0..num_classes-1) is not a class:
  such an example adds a false positive to the class predicted for it, and
  nothing else. The mean is over the known classes that occur in the split,
  as gold labels or as predictions; a class absent from both has no F1 (0 / 0)
  and is left out rather than counted as 0 or 1. This is scikit-learn's
  `f1_score(labels, predictions, labels=those classes, average='macro',
  zero_division=0)`.

  The class `abstain` (the own-data job's `out_of_scope`: "none of these")
  counts only where it occurs as a gold label: on a split without such
  examples, answering it is a miss of the gold class (its false negative),
  not a class of F1 0 that would cost the mean a whole class's share.

  Args:
    labels: gold label ids [N] (`UNKNOWN_LABEL` allowed).
    predictions: predicted label ids [N], each in 0..num_classes-1.
    num_classes: the number of known classes (the training label set).
    abstain: see above; None: none.

  Returns:
    A float in [0, 1].
  """
  labels = _as_1d(labels, "labels")
  predictions = _as_1d(predictions, "predictions")
  _check_same_length(labels, predictions)
  if num_classes < 1:
    raise ValueError(f"num_classes must be positive; received {num_classes}.")
  scores = []
  for k in range(num_classes):
    gold = labels == k
    pred = predictions == k
    if k == abstain and not gold.any():
      continue
    true_positives = int(np.sum(gold & pred))
    false_positives = int(np.sum(pred & ~gold))
    false_negatives = int(np.sum(gold & ~pred))
    denominator = 2 * true_positives + false_positives + false_negatives
    if denominator:
      scores.append(2.0 * true_positives / denominator)
  return float(np.mean(scores)) if scores else 0.0


def majority_accuracy(labels, majority_label):
  """Accuracy of always predicting `majority_label` (the floor of a split).

  Args:
    labels: gold label ids [N] (`UNKNOWN_LABEL` allowed: never right).
    majority_label: the most frequent label id of the training split.
  """
  labels = _as_1d(labels, "labels")
  if labels.shape[0] == 0:
    raise ValueError("labels are empty; there is nothing to score.")
  return float(np.mean(labels == majority_label))


def text_classification_metrics(labels, predictions, num_classes,
                                majority_label, abstain=None):
  """Accuracy, macro-F1 and majority-class accuracy of a user's dataset.

  Args:
    labels: gold label ids [N]; `UNKNOWN_LABEL` (-1) for a label the training
      split lacks (always an error: no prediction is -1).
    predictions: predicted label ids [N].
    num_classes: the number of training labels (`macro_f1`).
    majority_label: the most frequent training label id: `majority_accuracy`
      is the share of the split's examples that have it, the accuracy of a
      model that learnt nothing but the training label counts.
    abstain: the id of `out_of_scope` among them, if any (`macro_f1`).

  Returns:
    {'accuracy', 'macro_f1', 'majority_accuracy'}, in the order of
    `TEXT_CLASSIFICATION_METRICS`.
  """
  return {
      "accuracy": accuracy(labels, predictions),
      "macro_f1": macro_f1(labels, predictions, num_classes, abstain),
      "majority_accuracy": majority_accuracy(labels, majority_label),
  }


def _split_tag(tag):
  """('B', 'city') from 'B-city', ('O', '') from 'O': split at the first '-'."""
  prefix, _, chunk_type = tag.partition("-")
  return prefix, chunk_type


def _chunk_ends(prev_prefix, prefix, prev_type, chunk_type):
  # conlleval.pl endOfChunk, IOB and IOBES rules.
  if prev_prefix in ("E", "S"):
    return True
  if prev_prefix in ("B", "I") and prefix in ("B", "S", "O"):
    return True
  return prev_prefix not in ("O", ".") and prev_type != chunk_type


def _chunk_starts(prev_prefix, prefix, prev_type, chunk_type):
  # conlleval.pl startOfChunk: also an I- (or E-) right after O, E- or S-.
  if prefix in ("B", "S"):
    return True
  if prev_prefix in ("E", "S", "O") and prefix in ("E", "I"):
    return True
  return prefix not in ("O", ".") and prev_type != chunk_type


def iob_chunks(tags):
  """Chunks of a tag sequence, {(start, end_inclusive, type)}, as conlleval.

  Example: `iob_chunks(['B-city', 'I-city', 'O', 'I-state'])` is
  `{(0, 1, 'city'), (3, 3, 'state')}`: the stray `I-state` starts a chunk.
  """
  chunks = set()
  prev_prefix, prev_type, start = "O", "", 0
  # A trailing 'O' closes a chunk that runs to the end of the sequence.
  for i, tag in enumerate(list(tags) + ["O"]):
    prefix, chunk_type = _split_tag(tag)
    if _chunk_ends(prev_prefix, prefix, prev_type, chunk_type):
      chunks.add((start, i - 1, prev_type))
    if _chunk_starts(prev_prefix, prefix, prev_type, chunk_type):
      start = i
    prev_prefix, prev_type = prefix, chunk_type
  return chunks


def slot_spans(tags):
  """[(start, end, type)] of the chunks of `tags` (`iob_chunks`), `end`
  exclusive, ordered by start.

  Example: `slot_spans(['O', 'B-a', 'I-a', 'I-b'])` is
  `[(1, 3, 'a'), (3, 4, 'b')]`.
  """
  return sorted((start, end + 1, kind) for start, end, kind in
                iob_chunks(tags))


def _score_rows(support, predicted_counts, hits):
  """Rows of precision, recall and F1 from counts per label, worst first."""
  rows = []
  for label in sorted(set(support) | set(predicted_counts)):
    precision = (hits[label] / predicted_counts[label]
                 if predicted_counts[label] else 0.0)
    recall = hits[label] / support[label] if support[label] else 0.0
    f1 = (2 * precision * recall / (precision + recall)
          if precision + recall else 0.0)
    rows.append({"label": label, "support": support[label],
                 "precision": precision, "recall": recall, "f1": f1})
  rows.sort(key=lambda r: (r["f1"], -r["support"], r["label"]))
  return rows


def per_label_scores(gold, predicted):
  """Precision, recall and F1 of each label, worst F1 first.

  Labels are names (or ids); every label that occurs as gold or predicted
  has a row, also a gold label the model cannot predict (its recall is 0).
  F1 is 2 tp / (2 tp + fp + fn), as `macro_f1` counts it.

  Returns:
    [{'label', 'support', 'precision', 'recall', 'f1'}], by F1, then by
    support (larger first), then by label.
  """
  gold, predicted = list(gold), list(predicted)
  _check_same_length(np.asarray(gold, object), np.asarray(predicted, object))
  return _score_rows(
      collections.Counter(gold), collections.Counter(predicted),
      collections.Counter(g for g, p in zip(gold, predicted) if g == p))


def per_slot_type_scores(gold_tags, predicted_tags):
  """Chunk precision, recall and F1 of each slot type, worst F1 first.

  Chunks as `slot_f1` counts them (`iob_chunks`, conlleval's rules): a
  predicted chunk is right when its start, end and type are a gold chunk's.
  The micro-average of the rows is `slot_precision_recall_f1`.

  Args:
    gold_tags: list of sentences, each a list of IOB tag strings.
    predicted_tags: the same shape as `gold_tags`.

  Returns:
    [{'label' (the slot type), 'support' (gold chunks), 'precision',
      'recall', 'f1'}], ordered as `per_label_scores`' rows.
  """
  _check_tag_sequences(gold_tags, predicted_tags)
  support, predicted_counts, hits = (collections.Counter(),
                                     collections.Counter(),
                                     collections.Counter())
  for gold, pred in zip(gold_tags, predicted_tags):
    gold_chunks, pred_chunks = iob_chunks(gold), iob_chunks(pred)
    support.update(kind for _, _, kind in gold_chunks)
    predicted_counts.update(kind for _, _, kind in pred_chunks)
    hits.update(kind for _, _, kind in gold_chunks & pred_chunks)
  return _score_rows(support, predicted_counts, hits)


def confused_pairs(gold, predicted):
  """[{'gold', 'predicted', 'count'}] of the errors, most frequent first."""
  confused = collections.Counter(
      (g, p) for g, p in zip(gold, predicted) if g != p)
  return [{"gold": g, "predicted": p, "count": n}
          for (g, p), n in confused.most_common()]


def _check_tag_sequences(gold_tags, predicted_tags):
  if len(gold_tags) != len(predicted_tags):
    raise ValueError(
        "gold_tags and predicted_tags must hold the same number of sentences; "
        f"received {len(gold_tags)} and {len(predicted_tags)}.")
  for i, (gold, pred) in enumerate(zip(gold_tags, predicted_tags)):
    if len(gold) != len(pred):
      raise ValueError(
          f"Sentence {i} has {len(gold)} gold tags but {len(pred)} predicted "
          "tags; predictions must be decoded to one tag per word.")


def slot_precision_recall_f1(gold_tags, predicted_tags):
  """Micro-averaged chunk precision, recall and F1 over all sentences.

  Args:
    gold_tags: list of sentences, each a list of IOB tag strings, one per word.
    predicted_tags: the same shape as `gold_tags`.

  Returns:
    (precision, recall, f1) as floats; each is 0.0 where its denominator is 0.
  """
  _check_tag_sequences(gold_tags, predicted_tags)
  num_correct = num_gold = num_predicted = 0
  for gold, pred in zip(gold_tags, predicted_tags):
    gold_chunks = iob_chunks(gold)
    pred_chunks = iob_chunks(pred)
    num_correct += len(gold_chunks & pred_chunks)
    num_gold += len(gold_chunks)
    num_predicted += len(pred_chunks)
  precision = num_correct / num_predicted if num_predicted else 0.0
  recall = num_correct / num_gold if num_gold else 0.0
  if precision + recall == 0.0:
    return precision, recall, 0.0
  return precision, recall, 2.0 * precision * recall / (precision + recall)


def slot_f1(gold_tags, predicted_tags):
  """CoNLL chunk-level micro F1 (the SNIPS slot F1 of the paper)."""
  return slot_precision_recall_f1(gold_tags, predicted_tags)[2]


def snips_metrics(gold_intents, predicted_intents, gold_tags, predicted_tags):
  """Intent accuracy, slot precision/recall/F1 and sentence accuracy for SNIPS.

  Args:
    gold_intents: 1-D sequence of intent ids or names, one per query.
    predicted_intents: the same, predicted.
    gold_tags: list of per-word IOB tag lists, one per query.
    predicted_tags: the same shape, predicted (`intent_slot_data.decode_slot_tags`).

  Returns:
    A dict with `intent_accuracy`, `slot_precision`, `slot_recall`, `slot_f1`
    and `sentence_accuracy` (intent right and every word's tag right), all in
    [0, 1].
  """
  gold_intents = _as_1d(gold_intents, "gold_intents")
  predicted_intents = _as_1d(predicted_intents, "predicted_intents")
  _check_same_length(gold_intents, predicted_intents)
  if len(gold_tags) != gold_intents.shape[0]:
    raise ValueError(
        "gold_tags and gold_intents must describe the same queries; received "
        f"{len(gold_tags)} tag sequences and {gold_intents.shape[0]} intents.")
  precision, recall, f1 = slot_precision_recall_f1(gold_tags, predicted_tags)
  intent_right = gold_intents == predicted_intents
  sentence_right = [
      bool(ok) and list(gold) == list(pred)
      for ok, gold, pred in zip(intent_right, gold_tags, predicted_tags)
  ]
  return {
      "intent_accuracy": float(np.mean(intent_right)),
      "slot_precision": precision,
      "slot_recall": recall,
      "slot_f1": f1,
      "sentence_accuracy": float(np.mean(sentence_right)),
  }
