"""Scores an exported model on labelled examples beside its floor.

What `mixvocab-evaluate --model=... --data=...` prints, and what the jobs'
export step scores its .tflite files with: an exported model (a SavedModel,
a raw-string .tflite or a builtin-ops file) answers a labelled split
through the predictor (`predictor.load_predictor`, what `mixvocab-predict`
and an app run), and `tasks/finetuning/metrics.py` alone scores the answers
(`scores`): intent accuracy and slot F1 (CoNLL chunks), or accuracy;
macro-F1 over the model's labels; the floor of always answering the most
frequent label; each label's precision, recall and F1 (and each slot
type's); the most confused pairs. Two models' answers on the same examples
are compared by `paired_change` (each score's change and its 95% interval,
a paired bootstrap): `mixvocab-evaluate --baseline`, and a warm-started
own-data run's report against the earlier run's file.

The labelled data (`read_labelled`) is one split in the own-data job's
formats (`mixvocab_tf.datasets`): a `.csv`, `.tsv` or `.jsonl` file, a
directory in the Goo et al. layout (`seq.in`, `seq.out`, `label`), or a
whole dataset directory (`train`, `validation`, `test`), of which one split
is read. It is checked as the job checks its files, before the model runs.

  labelled = scoring.read_labelled("new_queries.csv")
  predictor = predictor_lib.load_predictor("runs/mine/export/"
                                           "model_dynamic.tflite")
  result = scoring.score_predictor(predictor, labelled)
  result["scores"]["accuracy"], result["scores"]["majority_accuracy"]
"""

import collections
import dataclasses
import json
import math
import os
from typing import Any, Callable, Optional, Sequence

import numpy as np
import tensorflow as tf

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import layout
from mixvocab_tf.datasets import out_of_scope
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import records
from mixvocab_tf.datasets import text_classification_files
from mixvocab_tf.tasks.finetuning import metrics

#: How many examples the predictor answers between two progress lines.
PROGRESS_EXAMPLES = 2048
#: How many confused pairs a result keeps.
CONFUSED_PAIRS = 20
#: The scores `by_confidence` tries as an app's threshold for answering.
THRESHOLDS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
#: How many wrong answers `confident_errors` keeps.
CONFIDENT_ERRORS = 10


def rows_and_gold(split):
  """(inputs for the predictor, gold) of a split; gold is None without labels.

  Gold is the label (text classification) or (intent, tags) (intent-slot).
  """
  if isinstance(split, examples_lib.IntentSlotExamples):
    rows = [" ".join(words) for words in split.words]
    gold = (None if split.intents is None else
            list(zip(split.intents, split.tags)))
  else:
    if split.texts_b is None:
      rows = list(split.texts_a)
    else:
      rows = [{"text_a": a, "text_b": b}
              for a, b in zip(split.texts_a, split.texts_b)]
    gold = split.labels
  return rows, gold


def _tags(predictions, gold):
  """(gold tags, predicted tags) of intent-slot answers; a query the model
  cut short gets 'O' for the words it dropped."""
  gold_tags = [list(g[1]) for g in gold]
  tags = [list(p["tags"]) + ["O"] * (len(g) - len(p["tags"]))
          for p, g in zip(predictions, gold_tags)]
  return gold_tags, tags


def _gold_labels(kind, gold):
  """The labels (intents) of `rows_and_gold`'s gold."""
  return [g[0] for g in gold] if kind == examples_lib.INTENT_SLOT else list(
      gold)


def scores(kind, predictions, gold, labels, majority):
  """Scores of predictions (the predictor's records) against gold labels.

  All from `metrics`: intent accuracy and slot F1 (`snips_metrics`; a query
  the model cut short is scored with 'O' for the words it dropped) or
  accuracy; macro-F1 over `labels` (the model's, or train's: a gold label
  outside them is an error, not a class of its own); the accuracy of always
  answering `majority` (one of `labels`); per-label scores and confused
  pairs of the labels (intents).

  Returns:
    (scores, per_label, confused).
  """
  gold_labels = _gold_labels(kind, gold)
  if kind == examples_lib.INTENT_SLOT:
    predicted = [p["intent"] for p in predictions]
    result = metrics.snips_metrics(gold_labels, predicted,
                                   *_tags(predictions, gold))
  else:
    predicted = [p["label"] for p in predictions]
    result = {}
  ids = {label: i for i, label in enumerate(labels)}
  # A label outside `labels` is no class of macro-F1's, but an answer is
  # right when it is the gold label, as intent accuracy counts (a model
  # of an earlier version of the data may answer labels that train lacks).
  unknown = {}
  label_id = lambda name: ids[name] if name in ids else unknown.setdefault(
      name, metrics.UNKNOWN_LABEL - len(unknown))
  gold_ids = [label_id(g) for g in gold_labels]
  predicted_ids = [label_id(p) for p in predicted]
  result.update(metrics.text_classification_metrics(
      gold_ids, predicted_ids, len(labels), ids[majority],
      abstain=ids.get(out_of_scope.OUT_OF_SCOPE)))
  if kind == examples_lib.INTENT_SLOT:
    del result["accuracy"]  # intent_accuracy, the same number.
  return (result, metrics.per_label_scores(gold_labels, predicted),
          metrics.confused_pairs(gold_labels, predicted))


#: Resamples of `paired_change`'s bootstrap.
RESAMPLES = 1000


def _example_stats(kind, predictions, gold, labels):
  """Each example's share of the scores `scores` gives, as arrays whose
  sums over any multiset of examples give that multiset's scores
  (`_scores_of`): right or not, per-class gold and answer indicators, and
  a query's correct, predicted and gold slot chunks."""
  gold_labels = _gold_labels(kind, gold)
  key = "intent" if kind == examples_lib.INTENT_SLOT else "label"
  answers = [p[key] for p in predictions]
  ids = {label: i for i, label in enumerate(labels)}
  gold_ids = np.array([ids.get(g, -1) for g in gold_labels])
  answer_ids = np.array([ids.get(a, -1) for a in answers])
  classes = np.arange(len(labels))
  stats = {"right": np.array([g == a for g, a in zip(gold_labels, answers)],
                             np.float64),
           "gold": (gold_ids[:, None] == classes).astype(np.float64),
           "answer": (answer_ids[:, None] == classes).astype(np.float64),
           "abstain": ids.get(out_of_scope.OUT_OF_SCOPE)}
  if kind == examples_lib.INTENT_SLOT:
    chunks = []
    for gold_tags, tags in zip(*_tags(predictions, gold)):
      gold_chunks, answer_chunks = (metrics.iob_chunks(gold_tags),
                                    metrics.iob_chunks(tags))
      chunks.append((len(gold_chunks & answer_chunks), len(answer_chunks),
                     len(gold_chunks)))
    stats["chunks"] = np.array(chunks, np.float64).reshape(-1, 3)
  return stats


def _scores_of(kind, stats, weights):
  """The headline scores of `_example_stats` under `weights` [R, examples]
  (each row a resample's count of each example): {metric: [R]}."""
  total = weights.sum(1)
  right = weights @ stats["right"]
  both = weights @ (stats["gold"] * stats["answer"])
  either = weights @ stats["gold"] + weights @ stats["answer"]
  # Macro-F1 over the classes that occur, as gold or as answers
  # (`metrics.macro_f1`).
  f1 = np.where(either > 0, 2 * both / np.maximum(either, 1), 0.0)
  present = either > 0
  if stats["abstain"] is not None:
    # `out_of_scope` is a class only where it is a gold label (`metrics.
    # macro_f1`'s `abstain`).
    k = stats["abstain"]
    present[:, k] = (weights @ stats["gold"][:, k]) > 0
  present = present.sum(1)
  macro = np.where(present > 0, f1.sum(1) / np.maximum(present, 1), 0.0)
  if kind != examples_lib.INTENT_SLOT:
    return {"accuracy": right / total, "macro_f1": macro}
  correct, answered, gold = (weights @ stats["chunks"]).T
  precision = np.where(answered > 0, correct / np.maximum(answered, 1), 0.0)
  recall = np.where(gold > 0, correct / np.maximum(gold, 1), 0.0)
  slot_f1 = np.where(precision + recall > 0, 2 * precision * recall /
                     np.maximum(precision + recall, 1e-12), 0.0)
  return {"intent_accuracy": right / total, "slot_f1": slot_f1,
          "macro_f1": macro}


def paired_change(kind, before, after, gold, labels,
                  resamples=RESAMPLES, seed=0) -> dict:
  """How much two models' scores on the same examples differ, and how
  surely: a paired bootstrap (Efron and Tibshirani, 1993; Koehn, 2004, for
  such comparisons), each resample the same examples for both models.

  Args:
    kind: the dataset's kind.
    before, after: the predictor's records of the two models, one per
      example of `gold` (`rows_and_gold`), in its order.
    gold: the split's gold answers.
    labels: the label (intent) names macro-F1 is over (the later model's).
    resamples: bootstrap resamples.
    seed: their seed (the same examples drawn on every call).

  Returns:
    {metric: {'before', 'after', 'change', 'low', 'high'}}: the scores of
    all examples (as `scores` gives them), and the 2.5 and 97.5 percentiles
    of the change over the resamples (fractions). An interval that holds 0
    says the change may be chance.
  """
  if not len(gold):
    raise ValueError("gold is empty; there is nothing to compare.")
  stats = [_example_stats(kind, p, gold, labels) for p in (before, after)]
  whole = np.ones((1, len(gold)))
  scores = [_scores_of(kind, s, whole) for s in stats]
  rng = np.random.default_rng(seed)
  changes = collections.defaultdict(list)
  for start in range(0, resamples, 100):  # A block at a time: memory.
    weights = rng.multinomial(len(gold), np.full(len(gold), 1 / len(gold)),
                              size=min(100, resamples - start)).astype(
                                  np.float64)
    drawn = [_scores_of(kind, s, weights) for s in stats]
    for metric in drawn[0]:
      changes[metric].append(drawn[1][metric] - drawn[0][metric])
  result = {}
  for metric, blocks in changes.items():
    low, high = np.percentile(np.concatenate(blocks), [2.5, 97.5])
    result[metric] = {
        "before": float(scores[0][metric][0]),
        "after": float(scores[1][metric][0]),
        "change": float(scores[1][metric][0] - scores[0][metric][0]),
        "low": float(low), "high": float(high)}
  return result


def headline_names(kind) -> tuple:
  """(metric, label) of a kind's headline scores, as reports show them."""
  if kind == examples_lib.INTENT_SLOT:
    return (("intent_accuracy", "intent acc."), ("slot_f1", "slot F1"))
  return (("accuracy", "accuracy"), ("macro_f1", "macro-F1"))


def change_text(change: dict, names) -> str:
  """`paired_change`'s result for people: 'slot F1 83.1 -> 86.4 (+3.3; 95%
  interval +2.0 to +4.7), ...' for each (metric, label) of `names`; the
  change is the rounded scores' difference, as a reader subtracts them."""
  shown = lambda value: round(100 * value, 1)
  parts = []
  for metric, label in names:
    found = change[metric]
    parts.append(
        f"{label} {shown(found['before']):.1f} -> {shown(found['after']):.1f} "
        f"({shown(found['after']) - shown(found['before']):+.1f}; 95% "
        f"interval {100 * found['low']:+.1f} to {100 * found['high']:+.1f})")
  return ", ".join(parts)


def slot_type_scores(predictions, gold):
  """Each slot type's chunk precision, recall and F1, worst first
  (`metrics.per_slot_type_scores`; a query the model cut short is scored
  with 'O' for the words it dropped, as `scores` does)."""
  return metrics.per_slot_type_scores(*_tags(predictions, gold))


def right_answers(kind, predictions, gold) -> list:
  """Whether each answer is right: its label, or its intent and every tag (a
  query the model cut short scored with 'O' for the words it dropped, as
  `scores` does)."""
  if kind != examples_lib.INTENT_SLOT:
    return [p["label"] == g for p, g in zip(predictions, gold)]
  gold_tags, tags = _tags(predictions, gold)
  return [p["intent"] == g[0] and t == gt for p, g, t, gt in
          zip(predictions, gold, tags, gold_tags)]


def f1_by_label(kind, predictions, gold) -> dict:
  """Each label's F1 (`metrics.per_label_scores`) and, for intent and slots,
  each slot type's (`slot_type_scores`), e.g. a teacher's beside the tables
  of its student: {'per_label': {label: F1}, 'per_slot_type': {type: F1}}."""
  gold_labels = _gold_labels(kind, gold)
  predicted = [p["intent" if kind == examples_lib.INTENT_SLOT else "label"]
               for p in predictions]
  result = {"per_label": {r["label"]: r["f1"] for r in
                          metrics.per_label_scores(gold_labels, predicted)}}
  if kind == examples_lib.INTENT_SLOT:
    result["per_slot_type"] = {r["label"]: r["f1"] for r in
                               slot_type_scores(predictions, gold)}
  return result


def by_confidence(predictions, gold_labels, thresholds=THRESHOLDS):
  """How an app that answers only above a score would fare.

  An app on a phone usually falls back ("Sorry?") when the model's score
  for its label (intent) is low. For each threshold: the share of examples
  the model would answer (score >= threshold), and the accuracy of those
  answers (labels, or intents).

  Returns:
    [{'threshold', 'answered', 'coverage', 'accuracy'}] (accuracy None when
    nothing is answered), in the order of `thresholds`.
  """
  key = "intent" if predictions and "intent" in predictions[0] else "label"
  rows = []
  for threshold in thresholds:
    answered = [(p[key] == g) for p, g in zip(predictions, gold_labels)
                if p["score"] >= threshold]
    rows.append({"threshold": threshold, "answered": len(answered),
                 "coverage": len(answered) / max(1, len(gold_labels)),
                 "accuracy": (sum(answered) / len(answered)
                              if answered else None)})
  return rows


def slots_by_confidence(predictions, gold, thresholds=THRESHOLDS):
  """How an app that takes a slot value only above its score would fare.

  An app confirms a slot value ("Did you mean Oslo?") when the model is
  unsure of it: the slot's `score` (the predictor's, its least sure word's
  tag probability). For each threshold: the slots answered at or above it,
  their share of all slots answered, and their precision (the gold tags
  hold the same span of the same type, as slot F1 counts a chunk).

  Args:
    predictions: the predictor's records of an intent and slot model.
    gold: (intent, tags) per record (`rows_and_gold`).

  Returns:
    [{'threshold', 'answered', 'coverage', 'precision'}] (precision None
    when no slot is answered), in the order of `thresholds`; [] when the
    records have no slot scores (an export without slot logits).
  """
  slots = []
  for record, (_, tags) in zip(predictions, gold):
    chunks = metrics.slot_spans(tags)
    for slot in record.get("slots", ()):
      if "score" not in slot:
        return []
      span = (slot["start_word"], slot["end_word"], slot["type"])
      slots.append((slot["score"], span in chunks))
  rows = []
  for threshold in thresholds:
    answered = [right for score, right in slots if score >= threshold]
    rows.append({"threshold": threshold, "answered": len(answered),
                 "coverage": len(answered) / max(1, len(slots)),
                 "precision": (sum(answered) / len(answered)
                               if answered else None)})
  return rows


def confident_errors(predictions, gold_labels, line_numbers=None,
                     limit=CONFIDENT_ERRORS):
  """The examples answered wrong with the highest scores, highest first.

  A model that gives a wrong label (intent) a high score often meets a
  wrong or ambiguous gold label, so these are the examples whose labels a
  user checks first.

  Args:
    predictions: the predictor's records.
    gold_labels: one label (intent) per record.
    line_numbers: each example's line in its file (None: not known).
    limit: the most rows returned.

  Returns:
    [{'index', 'line', 'text', 'gold', 'predicted', 'score'}]: `text` is the
    record's text (a pair's two texts joined by ' | '), `index` its
    position in the split, `line` None when not known.
  """
  key = "intent" if predictions and "intent" in predictions[0] else "label"
  wrong = [i for i, (p, g) in enumerate(zip(predictions, gold_labels))
           if p[key] != g]
  wrong.sort(key=lambda i: -predictions[i]["score"])
  rows = []
  for i in wrong[:limit]:
    record = predictions[i]
    text = (f"{record['text_a']} | {record['text_b']}"
            if "text_a" in record else record.get("text", ""))
    rows.append({"index": i,
                 "line": line_numbers[i] if line_numbers else None,
                 "text": text, "gold": gold_labels[i],
                 "predicted": record[key], "score": record["score"]})
  return rows


def tables(kind, predictions, gold, line_numbers=None):
  """The tables beside `scores`: {'by_confidence', 'confident_errors'}
  and, for intent and slots, {'per_slot_type'} (`slot_type_scores`) and
  {'slots_by_confidence'}."""
  gold_labels = _gold_labels(kind, gold)
  result = {"by_confidence": by_confidence(predictions, gold_labels),
            "confident_errors": confident_errors(predictions, gold_labels,
                                                 line_numbers)}
  if kind == examples_lib.INTENT_SLOT:
    result["per_slot_type"] = slot_type_scores(predictions, gold)
    result["slots_by_confidence"] = slots_by_confidence(predictions, gold)
  return result


@dataclasses.dataclass
class Labelled:
  """One labelled split to score a model on.

  Attributes:
    kind: `examples.INTENT_SLOT` or `examples.TEXT_CLASSIFICATION`.
    path: the file (or Goo directory) read.
    split: `examples.TextClassificationExamples` or
      `examples.IntentSlotExamples`, with labels.
    train_labels: the labels (intents) of the dataset's train split when
      the data was a dataset directory (the floor is train's most frequent
      label, as the own-data report's), else None (the floor is the split's
      own most frequent label).
  """
  kind: str
  path: str
  split: Any
  train_labels: Optional[Sequence[str]] = None

  @property
  def gold_labels(self) -> list:
    """The split's labels (intents), one per example."""
    return list(self.split.intents if self.kind == examples_lib.INTENT_SLOT
                else self.split.labels)

  @property
  def pair(self) -> bool:
    return (self.kind == examples_lib.TEXT_CLASSIFICATION and
            self.split.texts_b is not None)


def _split_kind(path: str) -> str:
  """The kind of task one split's file or Goo directory holds."""
  if tf.io.gfile.isdir(path):
    return examples_lib.INTENT_SLOT
  if rasa_files.is_rasa(path):
    return (examples_lib.INTENT_SLOT if rasa_files.has_entities(path) else
            examples_lib.TEXT_CLASSIFICATION)
  fmt = records.format_of(path, records.FORMATS + (intent_slot_files.CONLL,),
                          intent_slot_files.conll_hint)
  if fmt == intent_slot_files.CONLL:
    return examples_lib.INTENT_SLOT
  if fmt == "jsonl":
    return layout.peek_jsonl_kind(path)
  return examples_lib.TEXT_CLASSIFICATION


def _read_split(path, kind, columns):
  if kind == examples_lib.INTENT_SLOT:
    # Queries without intents are a slot tagger's: its one intent.
    return intent_slot_files.as_slot_tagger(intent_slot_files.read_intent_slot(
        path, require_labels=True, require_intents=False))
  return text_classification_files.read_text_classification(
      path, require_labels=True, **columns)


def read_labelled(data: str,
                  split: Optional[str] = None,
                  text_column: str = "text",
                  text_b_column: Optional[str] = None,
                  label_column: str = "label") -> Labelled:
  """Reads and checks the labelled examples at `data`.

  Args:
    data: a `.csv`, `.tsv` or `.jsonl` file, a Label Studio JSON export
      (its annotated tasks, as `mixvocab-split-data` reads them; the data
      key `text_column`, the Choices control `label_column` when the
      project has several), a `.conll` file, a Rasa NLU `.yml` file
      (intent and slots when it marks an entity), a Goo et al. split
      directory (`seq.in`, `seq.out`, `label`), or a dataset directory
      holding splits
      (`layout.find_dataset`).
    split: for a dataset directory, the split to read: 'validation' (the
      default; 'dev' and 'valid' name it too), 'test' or 'train'. Refused
      for a single split.
    text_column, text_b_column, label_column: the columns of a text
      classification file (`text_classification_files`).

  Raises:
    DataError: `data` is missing or breaks the data contract, or a split
      lacks labels (scoring needs them).
    ValueError: `split` is unknown, missing from the dataset, or given for a
      single split.
  """
  columns = dict(text_column=text_column, text_b_column=text_b_column,
                 label_column=label_column)
  if not tf.io.gfile.exists(data):
    raise errors.data_error(
        data, None, "the path does not exist",
        "a .csv, .tsv or .jsonl file, a Rasa NLU .yml file, a directory "
        "holding seq.in, seq.out and label, or a dataset directory holding "
        "train, validation and test", "Check the path.")
  is_split = not tf.io.gfile.isdir(data) or any(
      errors.isfile(os.path.join(data, name))
      for name in intent_slot_files.GOO_FILES)
  if is_split:
    if split is not None:
      raise ValueError(
          f"--split={split} names a split of a dataset directory, but "
          f"{data} is a single split; drop --split, or give the dataset's "
          "directory.")
    if label_studio.is_export(data):  # Its annotated tasks, as one split.
      found = label_studio.read_export(data, text_column, label_column)
      return Labelled(found["kind"], data, found["split"])
    kind = _split_kind(data)
    return Labelled(kind, data, _read_split(data, kind, columns))
  wanted = split or "validation"
  names = {name: canonical for canonical, aliases in layout.SPLIT_NAMES.items()
           for name in aliases}
  if wanted not in names:
    raise ValueError(
        f"--split={wanted} is not a split name; expected one of "
        f"{', '.join(sorted(names))}.")
  try:
    files = layout.find_dataset(data)
  except errors.DataError as e:
    # A folder of loose files is not a dataset: its file may be scored.
    raise errors.DataError(
        f"{e} To score one file or split directory in it, give that as "
        "--data.", path=e.path, line=e.line) from e
  canonical = names[wanted]
  if canonical not in files.files:
    raise ValueError(
        f"{data} has no {canonical} split (it has "
        f"{', '.join(sorted(files.files))}); choose one of those with "
        "--split.")
  path = files.files[canonical]
  train = (_read_split(files.files["train"], files.kind, columns)
           if canonical != "train" else None)
  labelled = Labelled(files.kind, path, _read_split(path, files.kind, columns))
  source = labelled if train is None else Labelled(files.kind, "", train)
  labelled.train_labels = source.gold_labels
  return labelled


def check_compatible(predictor, labelled: Labelled) -> None:
  """Raises ValueError if the model cannot answer the labelled examples."""
  model = ("an intent and slot model" if predictor.kind == "intent_slot" else
           "a sentence-pair classifier" if predictor.pair else
           "a one-text classifier")
  data = ("intent and slot examples (words, tags, an intent)"
          if labelled.kind == examples_lib.INTENT_SLOT else
          "sentence pairs with labels" if labelled.pair else
          "texts with labels")
  fits = ((predictor.kind == "intent_slot") ==
          (labelled.kind == examples_lib.INTENT_SLOT) and
          predictor.pair == labelled.pair)
  if not fits:
    hint = ("A pair's texts are the columns text_a and text_b (or name "
            "them with --text_column and --text_b_column)."
            if predictor.pair and labelled.kind != examples_lib.INTENT_SLOT
            else "Score the model on data of its own task.")
    raise ValueError(f"{predictor.model_path} is {model}, but "
                     f"{labelled.path} holds {data}. {hint}")
  if predictor.labels is None:
    raise ValueError(
        f"{predictor.model_path} does not name its labels, so its answers "
        "cannot be compared with gold labels; put <model>.labels.json "
        "beside a .tflite (mixvocab-convert writes it), or score the "
        "SavedModel it came from.")


def floor_label(labelled: Labelled, labels: Sequence[str]) -> tuple:
  """(label, where from) of the floor: always answering the most frequent
  label of train (a dataset directory) or of the split itself, among the
  labels the model can answer."""
  source = labelled.train_labels or labelled.gold_labels
  known = set(labels)
  counts = collections.Counter(l for l in source if l in known)
  where = "train" if labelled.train_labels else "the scored examples"
  if not counts:
    return labels[0], where
  return counts.most_common(1)[0][0], where


def predict_all(predictor, rows,
                progress: Optional[Callable[[str], None]] = None
                ) -> list:
  """The predictor's records of `rows` (`rows_and_gold`), in their order;
  `progress` is called with a line after every `PROGRESS_EXAMPLES`
  examples (None: silent)."""
  predicted = []
  for start in range(0, len(rows), PROGRESS_EXAMPLES):
    predicted.extend(predictor.predict(rows[start:start + PROGRESS_EXAMPLES]))
    if progress and len(rows) > PROGRESS_EXAMPLES:
      progress(f"{len(predicted):,} of {len(rows):,} examples answered")
  return predicted


def score_predictor(predictor,
                    labelled: Labelled,
                    predictions_path: Optional[str] = None,
                    progress: Optional[Callable[[str], None]] = None,
                    keep_answers: bool = False) -> dict:
  """Scores `predictor` (a `predictor.Predictor`) on `labelled`.

  Args:
    predictor: the model, from `predictor.load_predictor`.
    labelled: the examples, from `read_labelled`.
    predictions_path: where to write each example's record (the
      predictor's, with `gold` and `correct` added) as JSON lines; None:
      nowhere.
    progress: called with a line after every `PROGRESS_EXAMPLES` examples
      (None: silent).
    keep_answers: whether the result keeps the predictor's records
      ('answers', in the examples' order).

  Returns:
    {'model', 'data', 'examples', 'scores' (with 'majority_accuracy'),
     'floor_label', 'floor_from', 'unknown_labels' ({gold label the model
     cannot answer: examples}), 'per_label' (worst first), 'confused'
     (most frequent first, at most `CONFUSED_PAIRS`), `tables`', and
     'lines_left_out' when a JSONL file's lines answered 'reject' or
     'ignore' (Prodigy's export) were not read}.

  Raises:
    ValueError: `check_compatible`'s, or an example the predictor refuses.
  """
  check_compatible(predictor, labelled)
  rows, gold = rows_and_gold(labelled.split)
  predicted = predict_all(predictor, rows, progress)
  labels = list(predictor.labels)
  majority, floor_from = floor_label(labelled, labels)
  result, per_label, confused = scores(labelled.kind, predicted, gold, labels,
                                       majority)
  known = set(labels)
  unknown = collections.Counter(l for l in labelled.gold_labels
                                if l not in known)
  if predictions_path:
    with tf.io.gfile.GFile(predictions_path, "w") as f:
      for record, answer in zip(predicted, gold):
        if labelled.kind == examples_lib.INTENT_SLOT:
          gold_record = {"intent": answer[0], "tags": list(answer[1])}
          correct = (record["intent"] == answer[0] and
                     list(record["tags"]) == list(answer[1]))
        else:
          gold_record = {"label": answer}
          correct = record["label"] == answer
        f.write(json.dumps({**record, "gold": gold_record,
                            "correct": correct}, ensure_ascii=False) + "\n")
  result = {"model": predictor.model_path, "data": labelled.path,
            "examples": len(rows), "scores": result, "floor_label": majority,
            "floor_from": floor_from, "unknown_labels": dict(unknown),
            "per_label": per_label,
            "confused": confused[:CONFUSED_PAIRS]}
  result.update(tables(labelled.kind, predicted, gold,
                       getattr(labelled.split, "line_numbers", None)))
  left_out = getattr(labelled.split, "left_out", None)
  if left_out:  # Lines answered 'reject' or 'ignore' (Prodigy's export).
    result["lines_left_out"] = len(left_out)
  if keep_answers:
    result["answers"] = predicted
  return result


#: `small_sample_note` speaks up when one example is worth at least this
#: many points of a score (200 examples or fewer).
SMALL_SAMPLE_POINTS = 0.5


def wilson_interval(score: float, examples: int,
                    z: float = 1.96) -> tuple[float, float]:
  """The Wilson score interval of an accuracy `score` on `examples` (95% at
  the default z); unlike score +- z standard errors, it stays inside [0, 1]
  and does not shrink to a point at a score of 0 or 1."""
  z2 = z * z / examples
  center = (score + z2 / 2) / (1 + z2)
  half = z * math.sqrt(score * (1 - score) / examples +
                       z2 / (4 * examples)) / (1 + z2)
  return max(0.0, center - half), min(1.0, center + half)


def small_sample_note(examples: int, score: float, label: str,
                      subject: str) -> Optional[str]:
  """What one example is worth and where `subject`'s `score` (a fraction of
  examples right: an accuracy) may lie, when `examples` are few enough that
  one moves it by `SMALL_SAMPLE_POINTS` or more; None otherwise. So that a
  reader does not take a gap of two examples for a difference."""
  if not examples or 100 / examples < SMALL_SAMPLE_POINTS:
    return None
  low, high = wilson_interval(score, examples)
  return (f"{examples:,} examples: one is {100 / examples:.1f} points of "
          f"{label}, and {subject}'s {100 * score:.1f} could be anywhere from "
          f"{100 * low:.1f} to {100 * high:.1f} (95% Wilson interval), so "
          "gaps of a few points may be chance.")


def short_text(text: str, limit: int = 60) -> str:
  """`text` on one line (whitespace collapsed), cut to `limit` characters."""
  text = " ".join(text.split())
  return text if len(text) <= limit else text[:limit - 3] + "..."


def summary_lines(result: dict) -> list:
  """A short markdown summary of `score_predictor`'s result, for people."""
  s = result["scores"]
  # A slot tagger's one intent is right by construction: slots alone.
  tagger = "slot_f1" in s and all(
      r["label"] == examples_lib.NO_INTENT for r in result["per_label"])
  rows = []
  if tagger:
    rows.append(("slot F1", s["slot_f1"]))
    rows.append(("sentence accuracy (every tag)", s["sentence_accuracy"]))
  elif "slot_f1" in s:
    rows.append(("intent accuracy", s["intent_accuracy"]))
    rows.append(("slot F1", s["slot_f1"]))
    rows.append(("sentence accuracy (intent and every tag)",
                 s["sentence_accuracy"]))
  else:
    rows.append(("accuracy", s["accuracy"]))
  if not tagger:
    rows.append(("macro-F1", s["macro_f1"]))
  lines = [f"{result['model']} on {result['data']} "
           f"({result['examples']:,} examples):", "",
           "| score | value |", "|---|---|"]
  lines += [f"| {name} | {100 * value:.2f} |" for name, value in rows]
  if tagger:
    lines.append("| floor: every word tagged O (slot F1) | 0.00 |")
  else:
    lines.append(f"| floor: every example answered "
                 f"{result['floor_label']!r} (the most frequent label of "
                 f"{result['floor_from']}) | "
                 f"{100 * s['majority_accuracy']:.2f} |")
    accuracy = "intent_accuracy" if "slot_f1" in s else "accuracy"
    note = small_sample_note(result["examples"], s[accuracy], rows[0][0],
                             "the model")
    if note:
      lines += ["", "On " + note]
  if result.get("lines_left_out"):
    count = result["lines_left_out"]
    lines += ["", f"{count:,} {'line' if count == 1 else 'lines'} answered "
              "'reject' or 'ignore' (Prodigy's export) left out, not "
              "scored."]
  if result["unknown_labels"]:
    count = sum(result["unknown_labels"].values())
    names = ", ".join(sorted(result["unknown_labels"]))
    lines += ["", f"{count:,} examples have labels the model does not "
              f"know ({names}); they count as errors."]
  worst = ("intents" if "per_slot_type" in result else "labels",
           [] if tagger else result["per_label"]), (
               "slot types", result.get("per_slot_type", []))
  tail = []
  for name, table in worst:
    table = [r for r in table if r["support"]][:5]
    if table:
      tail.append(f"Worst {name} (F1, support): " + "; ".join(
          f"{r['label']} {100 * r['f1']:.1f} ({r['support']})"
          for r in table))
  if result["confused"]:
    tail.append("Most confused (gold -> answer, count): " + "; ".join(
        f"{c['gold']} -> {c['predicted']} ({c['count']})"
        for c in result["confused"][:5]))
  if result.get("confident_errors"):
    tail.append(
        "Wrong answers given with the highest scores, whose labels to check "
        "first (line: text, gold -> answer, score): " + "; ".join(
            f"{'?' if e['line'] is None else e['line']}: "
            f"{short_text(e['text'])!r}, {e['gold']} -> {e['predicted']}, "
            f"{e['score']:.3f}" for e in result["confident_errors"][:5]))
  if tail:
    lines += [""] + tail
  rows = None if tagger else result.get("by_confidence")
  if rows:
    what = "intent" if "per_slot_type" in result else "label"
    lines += ["", f"Answering only when the {what}'s score is at least a "
              "threshold (an app's fallback below it):", ""]
    lines += threshold_table(rows, "accuracy",
                             ["answered", "accuracy of the answers"])
  rows = result.get("slots_by_confidence")
  if rows and rows[0]["answered"]:
    lines += ["", "Taking a slot value only when the slot's score is at "
              "least a threshold (an app confirms it below):", ""]
    lines += threshold_table(rows, "precision",
                             ["slots taken", "precision of those"])
  return lines


def threshold_table(rows, key, header, digits=2):
  """Markdown lines of `by_confidence` or `slots_by_confidence` rows:
  threshold, share and count answered, `key` in percent ('-' for None)."""
  return ["| threshold | " + " | ".join(header) + " |", "|---|---|---|"] + [
      f"| {r['threshold']:.2f} | {100 * r['coverage']:.1f}% "
      f"({r['answered']:,}) | " +
      ("-" if r[key] is None else f"{100 * r[key]:.{digits}f}") + " |"
      for r in rows]
