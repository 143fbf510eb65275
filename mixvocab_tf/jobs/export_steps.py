"""The export step of every job: SavedModel, .tflite files, their scores.

Both jobs end the same way. The main job (`quickstart.gin`, on the
built-in SNIPS) and the own-data job (`own_data.py`, on a user's dataset)
run this step, kind `export`, on a fine-tuned or distilled student run:

1. the run's SavedModel, which takes raw strings (`serving.export_run`),
   its word table read at 4 bits a weight by the signatures converted to
   .tflite (`export.packed_embedding`) unless that costs the model more than
   `WORD_TABLE_TOLERANCE` points of a headline validation score and more
   than one example's worth (both signatures scored by the predictor,
   `word_table_check`): then the SavedModel is written again with the table
   whole (int8 in the dynamic-range file, about 0.2 MB more for the 6x96
   student);
2. a .tflite of it per quantization (`quantizations`: 'none', 'dynamic'),
   each run in the LiteRT interpreter by the package's predictor
   (`serving.predictor`, what `mixvocab-predict` runs) on the dataset's
   validation split (and test, when it has one), scored by
   `tasks/finetuning/metrics.py` alone (`serving.scoring.scores`, what
   `mixvocab-evaluate --model` scores with): intent accuracy and slot
   F1, or accuracy; macro-F1 over train's labels; the majority-label floor;
   each label's (and slot type's) precision, recall and F1 and the most
   confused pairs;
   and timed one query at a time on one thread (the interpreter's call,
   raw strings in);
3. the model on token ids with builtin operators only and its metadata
   (`export.builtin_model`: MediaPipe Tasks, LiteRT.js, a stock LiteRT app),
   its size and model-only latency, and its scores on the same splits (the
   predictor tokenizes for it, as an app does).

It writes `summary.json`; each job's report step reads it.

Options (the step's config): `run` (the student run), `data_dir` (None: the
built-in SNIPS) with `text_column`, `text_b_column`, `label_column`,
`quantizations`, `file_prefix` (files are `<prefix>_<quantization>.tflite`
and `<prefix>_builtin.tflite`), `batch_size` (queries per interpreter call
when scoring), `word_table_tolerance` (points; default
`WORD_TABLE_TOLERANCE`), `predictions` (where the test split's
predictions go as JSONL, a path; None: nowhere) and, with the own-data
job's unlabelled texts, `unlabelled` (their file) and `label_next` (a path):
the dynamic-range file answers every unlabelled text and the `LABEL_NEXT`
it is least sure of (its label's or intent's score), taken in turns over
the labels it answered (`least_sure_per_label`), go there: the texts to
label first, as a split of the dataset's own format
with the model's answers for labels (`label_next`; the path's extension
is the format's: `label_next_path`).
"""

import collections
import json
import os
import time

from absl import logging

from mixvocab_tf import assets
from mixvocab_tf.core import run_files
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import records as records_lib
from mixvocab_tf.datasets import unlabelled as unlabelled_lib
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.serving import scoring

SUMMARY_JSON = "summary.json"
#: The check of the 4-bit word table (`word_table_check`), kept in the step.
WORD_TABLE_JSON = "word_table.json"
#: Points of a headline validation score the 4-bit word table may cost (or
#: one validation example's worth, if more: `word_table_check`).
WORD_TABLE_TOLERANCE = 0.3
#: The scores that check compares, by dataset kind.
HEADLINE_SCORES = {examples_lib.INTENT_SLOT: ("intent_accuracy", "slot_f1")}
DEFAULT_HEADLINE_SCORES = ("accuracy",)
#: Queries timed one at a time on one thread for the latency figures.
LATENCY_QUERIES = 200
#: Labels ranked for each prediction written as JSONL.
TOP_K = 3
#: Unlabelled texts written as the ones to label next (`label_next`).
LABEL_NEXT = 1000


def snips_data_dir() -> str:
  """The built-in SNIPS (train and valid), a dataset in the user's layout."""
  return os.path.dirname(assets.snips_dir("train"))


def load_data(options) -> user_dataset.UserDataset:
  """The dataset the options name (`data_dir` None: the built-in SNIPS)."""
  columns = {k: options[k] for k in ("text_column", "text_b_column",
                                     "label_column") if k in options}
  return user_dataset.load_dataset(options.get("data_dir") or
                                   snips_data_dir(), **columns)


def majority_label(dataset) -> str:
  """Train's most frequent label (intent); ties go to the first seen."""
  train = dataset.splits["train"]
  labels = (train.intents if dataset.kind == examples_lib.INTENT_SLOT
            else train.labels)
  return collections.Counter(labels).most_common(1)[0][0]


def latency_ms(model_path, predictor, queries):
  """{'p50_ms', 'p90_ms'} of the .tflite at `model_path` on each query alone.

  Each query is one call of the LiteRT interpreter on one thread, raw
  strings in (tokenization, encoder and decoding inside the model): what
  an app that runs the file pays per query. The predictor only reads the
  query into the model's inputs (`parse_row`), outside the timing.
  """
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import tflite_conversion
  from mixvocab_tf.jobs import report
  # pylint: enable=g-import-not-at-top
  runner = tflite_conversion.TFLiteRunner(model_path=model_path,
                                          num_threads=1)
  latencies = []
  for query in queries:
    columns = [[text.encode("utf-8")] for text in predictor.parse_row(query)]
    start = time.perf_counter()
    runner(*columns)
    latencies.append(time.perf_counter() - start)
  return {"p50_ms": report.percentile_ms(latencies, 50),
          "p90_ms": report.percentile_ms(latencies, 90)}


def score_model(model_path, dataset, batch_size=None, predictions_path=None,
                timed=True, keep_answers=False):
  """Scores, per-label tables and latency of a model on a dataset.

  Args:
    model_path: a local .tflite (raw strings in, or the builtin file, which
      the predictor tokenizes for).
    dataset: a `user_dataset.UserDataset`.
    batch_size: queries per call (None: the predictor's default).
    predictions_path: where the test split's predictions go as JSONL.
    timed: whether to time the raw-string file on queries (`latency_ms`).
    keep_answers: whether each split's entry keeps the predictor's records
      ('answers').

  Returns:
    {'splits': {name: {'examples', 'scores', 'per_label', 'confused',
                       'by_confidence', 'confident_errors',
                       'per_slot_type' (intent and slots), 'answers' (if
                       `keep_answers`)}},
     'p50_ms', 'p90_ms' (if `timed`)}.
  """
  from mixvocab_tf.serving import predictor as predict_lib  # pylint: disable=g-import-not-at-top
  kwargs = {} if batch_size is None else {"batch_size": batch_size}
  predictor = predict_lib.load_predictor(model_path, **kwargs)
  majority = majority_label(dataset)
  result = {"splits": {}}
  for name in ("validation", "test"):
    split = dataset.splits.get(name)
    if split is None:
      continue
    rows, gold = scoring.rows_and_gold(split)
    predicted = predictor.predict(rows, top_k=TOP_K)
    entry = {"examples": len(rows)}
    if keep_answers:
      entry["answers"] = predicted
    if gold is not None:
      (entry["scores"], entry["per_label"],
       entry["confused"]) = scoring.scores(
          dataset.kind, predicted, gold, dataset.labels, majority)
      entry.update(scoring.tables(dataset.kind, predicted, gold,
                                  split.line_numbers))
    if name == "test" and predictions_path:
      run_files.write_text(predictions_path, "".join(
          json.dumps(p, ensure_ascii=False) + "\n" for p in predicted))
      entry["predictions"] = predictions_path
    result["splits"][name] = entry
  if timed:
    queries = scoring.rows_and_gold(
        dataset.splits["validation"])[0][:LATENCY_QUERIES]
    result.update(latency_ms(model_path, predictor, queries))
  return result


def word_table_check(saved_model_dir, dataset, batch_size=None,
                     tolerance=WORD_TABLE_TOLERANCE):
  """Whether the served signatures may keep their 4-bit word table.

  The SavedModel's `serving_default` reads the float word table and
  `serving_tflite` (what the .tflite files are converted from) the packed
  one; both run through the predictor on the validation split. On SNIPS the
  packed table moves no score beyond noise (`export.packed_embedding`), but
  a classifier whose answers sit near its decision boundary can lose more:
  a 6x96 student distilled on MRPC pairs lost 2.7 points of validation
  accuracy to it (71.8 -> 69.1; 71.6 with the table whole at int8).

  The table stays packed where no headline score drops by more than
  `tolerance` points or by more than one example's worth (100 / examples
  points: one answer of 150 is no evidence); a negative `tolerance` never
  packs it.

  Returns:
    {'pack': bool, 'word_table_bits', 'scores': {'float', 'packed'}: {score
    name: value}, 'cost_points' (the largest drop, in points),
    'tolerance_points', 'allowed_points' (the drop allowed)}; `pack` is True
    without a packed table to check (`word_table_bits` 32) or without
    validation labels.
  """
  from mixvocab_tf.export import tflite_conversion  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.serving import predictor as predict_lib  # pylint: disable=g-import-not-at-top
  info = saved_model_info(saved_model_dir) or {}
  bits = info.get("word_table_bits", 32)
  result = {"pack": True, "word_table_bits": bits,
            "tolerance_points": tolerance}
  rows, gold = scoring.rows_and_gold(dataset.splits["validation"])
  if bits == 32 or gold is None:
    return result
  names = HEADLINE_SCORES.get(dataset.kind, DEFAULT_HEADLINE_SCORES)
  kwargs = {} if batch_size is None else {"batch_size": batch_size}
  result["scores"] = {}
  for key, signature in (("float", predict_lib.SIGNATURE),
                         ("packed", tflite_conversion.TFLITE_SIGNATURE)):
    predictor = predict_lib.load_predictor(saved_model_dir,
                                           signature=signature, **kwargs)
    values = scoring.scores(dataset.kind,
                            predictor.predict(rows, top_k=1), gold,
                            dataset.labels, majority_label(dataset))[0]
    result["scores"][key] = {name: values[name] for name in names}
  result["cost_points"] = max(
      100 * (result["scores"]["float"][n] - result["scores"]["packed"][n])
      for n in names)
  allowed = tolerance if tolerance < 0 else max(tolerance, 100 / len(rows))
  result["allowed_points"] = allowed
  # The epsilon: one example's drop equals 100 / len(rows) up to rounding.
  result["pack"] = result["cost_points"] <= allowed + 1e-9
  return result


def saved_model_info(saved_model_dir):
  """The export's `export_info.json` (written last), or None."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import saved_model_export
  # pylint: enable=g-import-not-at-top
  return run_files.read_json_if_any(os.path.join(
      saved_model_dir, saved_model_export.EXPORT_INFO_FILE))


def _export_saved_model(run, step_dir, saved_model_dir, pack):
  """Writes the run's SavedModel (anew, with the step's .tflite files
  removed, when one with another word table is there)."""
  # pylint: disable=g-import-not-at-top
  import tensorflow as tf
  from mixvocab_tf.serving import export_run
  # pylint: enable=g-import-not-at-top
  info = saved_model_info(saved_model_dir)
  if info is not None and (pack or info.get("word_table_bits", 32) == 32):
    return
  for path in tf.io.gfile.glob(os.path.join(step_dir, "*.tflite*")):
    tf.io.gfile.remove(path)
  if tf.io.gfile.exists(saved_model_dir):
    tf.io.gfile.rmtree(saved_model_dir)
  logging.info("Exporting %s to a SavedModel (raw strings in%s)...", run,
               "" if pack else "; the word table whole")
  export_run.export_run(run, saved_model_dir, pack_word_tables=pack)


def label_next_path(path, data_format):
  """Where `label_next` writes for a dataset of `data_format`
  (`layout.find_dataset`'s: csv, tsv, jsonl, goo, rasa): `path` with the
  extension of the dataset's own splits (a directory for the Goo layout), so
  that its corrected lines join train as they are."""
  stem = os.path.splitext(path)[0]
  if data_format == "goo":
    return stem
  ext = {"csv": ".csv", "tsv": ".tsv", rasa_files.FORMAT: ".yml",
         label_studio.FORMAT: ".json",
         intent_slot_files.CONLL: "." + intent_slot_files.CONLL}
  return stem + ext.get(data_format, ".jsonl")


#: The annotation tools whose JSONL export form `to_train_record` writes.
DOCCANO = "doccano"
PRODIGY = "prodigy"


def jsonl_form(path, label_column="label"):
  """The annotation tool whose export form a JSONL split's first line is
  in, or None: `PRODIGY` (`prodigy db-out`: an "answer" or its hashes),
  `DOCCANO` (an intent and its slots as "cats" and "entities", or a label
  as a list; `datasets.intent_slot_files`, `records.json_label`)."""
  first = records_lib.read_jsonl(path, "one JSON object per line")[0][1]
  if any(key in first for key in ("answer", "_input_hash", "_task_hash")):
    return PRODIGY
  if ("cats" in first or "entities" in first or
      isinstance(first.get(label_column), list)):
    return DOCCANO
  return None


def written_form(data_format, train_path, label_column="label"):
  """(format, annotation tool's form or None, a Label Studio project's
  names or None) of the texts to label next for a dataset of `data_format`
  whose train split is `train_path`: a JSONL dataset that
  `mixvocab-split-data` wrote from a Label Studio export (its
  `label_studio.NAMES_JSON` beside the splits) gets Label Studio tasks,
  one whose train is in doccano's or Prodigy's form (`jsonl_form`) that
  tool's lines."""
  if data_format != "jsonl" or not train_path:
    return data_format, None, None
  names = run_files.read_json_if_any(os.path.join(
      os.path.dirname(train_path), label_studio.NAMES_JSON))
  if names:
    return label_studio.FORMAT, None, names
  return data_format, jsonl_form(train_path, label_column), None


def answers_as_split(records, data_format, text_column="text",
                     label_column="label", header=None, form=None,
                     names=None):
  """A predictor's records (`serving.predictor`) as a split of the user's
  own format, the model's answers as the labels: {file name: text} (the
  Goo layout's three files, or '' for the one file of the others).

  CSV / TSV: `header` (train's, so the rows can be appended to it; the
  text in `text_column`, the answer in `label_column`, other columns
  empty). Goo: `seq.in` (the whitespace words), `seq.out` (a tag per word,
  IOB2 from the slots; words past the model's sequence 'O', as it answers
  them) and `label`.
  Rasa: NLU data grouped by intent, each score as metadata. Label Studio
  (`names`: the project's, `label_studio.read_export`): a JSON list of
  tasks the project imports, each answer its prediction. JSONL: each
  line a record of a train split (`to_train_record`; in doccano's or
  Prodigy's form if `form` says so), with its score and top k beside the
  labels.
  """
  if data_format == rasa_files.FORMAT:
    return {"": rasa_files.answers_to_yaml(records)}
  if data_format == label_studio.FORMAT:
    # The prediction's score sorts the project's tasks: a slot tagger's is
    # its least sure word's.
    return {"": json.dumps([label_studio.to_task(dict(r, score=sureness(r)),
                                                 names) for r in records],
                           indent=1, ensure_ascii=False) + "\n"}
  if data_format in ("csv", "tsv"):
    header = header or [text_column, label_column]
    answers = {text_column: "text", label_column: "label"}
    return {"": records_lib.write_table(header, [
        [r[answers[column]] if column in answers else "" for column in header]
        for r in records], data_format)}
  if data_format in ("goo", intent_slot_files.CONLL):
    files = {"seq.in": [], "seq.out": [], "label": []}
    for r in records:
      words = r["text"].split()
      tags = ["O"] * len(words)
      for slot in r["slots"]:  # IOB2, as the span form reads.
        tags[slot["start_word"]:slot["end_word"]] = [
            f"I-{slot['type']}"] * (slot["end_word"] - slot["start_word"])
        tags[slot["start_word"]] = f"B-{slot['type']}"
      files["seq.in"].append(" ".join(words))
      files["seq.out"].append(" ".join(tags))
      files["label"].append(r["intent"])
    if data_format == intent_slot_files.CONLL:
      return {"": intent_slot_files.to_conll(
          [line.split() for line in files["seq.in"]],
          [line.split() for line in files["seq.out"]])}
    if records and all(map(is_slot_tagger_record, records)):
      del files["label"]  # A slot tagger's splits have no intents.
    return {name: "".join(line + "\n" for line in lines)
            for name, lines in files.items()}
  return {"": "".join(
      json.dumps(to_train_record(r, text_column, label_column, form),
                 ensure_ascii=False) + "\n" for r in records)}


def is_slot_tagger_record(record):
  """Whether a predictor's record is a slot tagger's: its model's one
  intent is `examples.NO_INTENT` (trained on queries without intents), so
  the intent and its score say nothing."""
  return (record.get("intent") == examples_lib.NO_INTENT and
          len(record.get("top_k", ())) == 1)


def sureness(record):
  """How sure the model is of a record's answer: its label's (intent's)
  score, or a slot tagger's least sure word's tag score (1 for a query
  without words the model read)."""
  if is_slot_tagger_record(record):
    return min(record.get("tag_scores") or [1.0])
  return record["score"]


def least_sure_per_label(records, limit):
  """The `limit` records to label first: the least sure of each label the
  model answered, in turns.

  Each record is ranked among those of its answer (intent or label) by its
  score, least sure first; the records are taken by that rank, and within
  a rank least sure first, so that every answered label has its least
  sure texts in the list and every prefix of it is spread over the labels.
  Plain uncertainty sampling (the lowest scores overall) drew 477 of 1,000
  SNIPS queries from one intent of seven, and the students trained on them
  came out 1.6 slot F1 below those trained on 1,000 drawn at random; taken
  per intent they matched random's slot F1 (docs/FINDINGS_SNIPS.md).
  A slot tagger's records (`is_slot_tagger_record`: one intent) are ranked
  by their least sure word (`sureness`), least sure first.
  """
  key = "intent" if records and "intent" in records[0] else "label"
  ranked = sorted(records, key=sureness)
  seen = collections.Counter()
  ranks = []
  for record in ranked:
    ranks.append(seen[record[key]])
    seen[record[key]] += 1
  order = sorted(range(len(ranked)),
                 key=lambda i: (ranks[i], sureness(ranked[i])))
  return [ranked[i] for i in order[:limit]]


def label_next(model_path, unlabelled, text_column, output_path,
               batch_size=None, limit=LABEL_NEXT, shown=10,
               label_column="label", data_format="jsonl", train_path=None):
  """The unlabelled texts to label next, written as a split of the
  dataset's own format.

  Uncertainty sampling spread over the labels (`least_sure_per_label`): a
  text whose label (intent) gets a low score is one the model is likeliest
  to answer wrong, so it is among the first to label when a user labels
  more. They are written in that order as a split of `data_format`
  (`answers_as_split`: a CSV with train's header, Goo directory, Rasa or
  JSONL file), the model's answers in place of labels, so that correcting
  them and adding them to train labels them, at
  `label_next_path(output_path, data_format)`. `train_path`: train's file,
  whose header a CSV or TSV copies.

  Returns:
    {'path', 'texts' (how many were answered), 'written', 'least_sure'
     (the first `shown` records of the list)}.
  """
  from mixvocab_tf.serving import predictor as predict_lib  # pylint: disable=g-import-not-at-top
  kwargs = {} if batch_size is None else {"batch_size": batch_size}
  predictor = predict_lib.load_predictor(model_path, **kwargs)
  texts = unlabelled_lib.read_unlabelled(unlabelled, text_column)
  records = least_sure_per_label(predictor.predict(texts, top_k=TOP_K),
                                 limit)
  # The score written beside each answer is the one it was ranked by.
  records = [dict(r, score=sureness(r)) for r in records]
  header = None
  if data_format in ("csv", "tsv") and train_path:
    header = records_lib.read_table(train_path, data_format)[1]
  data_format, form, names = written_form(data_format, train_path,
                                          label_column)
  path = label_next_path(output_path, data_format)
  files = answers_as_split(records, data_format, text_column,
                           label_column, header, form, names)
  for name, text in files.items():
    run_files.write_text(os.path.join(path, name) if name else path, text)
  return {"path": path, "texts": len(texts),
          "format": form or data_format,
          "written": len(records), "least_sure": records[:shown]}


def to_train_record(record, text_column="text", label_column="label",
                    form=None):
  """A predictor's record (`serving.predictor`) as a line of a JSONL train
  split, its answers as the labels, with its score (`sureness`) and top k
  beside them (keys a split's reader does not read).

  Intents and slots: {"text", "intent", "spans": [[start, end, type], ...]
  (character offsets, the end excluded), "score", "top_k"}, the span form
  of `datasets.intent_slot_files`; text classification: {text_column,
  label_column, "score", "top_k"} (`datasets.text_classification_files`).
  `form` `DOCCANO`: the form doccano imports and exports ("entities" and
  "cats", a list of one intent; a label as a list of one), so the answers
  load into it as annotations to correct there. `PRODIGY`: the task form
  Prodigy's recipes stream (spans as {"start", "end", "label"}, which
  `ner.manual` shows to correct; an intent as "accept", a list of one; a
  label in `label_column` and in "accept", a list of one; the score under
  "meta", which Prodigy shows beside the task), with no "answer", so that
  a line added to train as it is reads as labelled. A slot tagger's record
  (`is_slot_tagger_record`) has no intent: {"text", "spans"}, in doccano's
  sequence-labelling form {"text", "label": spans}.
  """
  spans = [[slot["start"], slot["end"], slot["type"]]
           for slot in record.get("slots", ())]
  if form == PRODIGY:
    return _prodigy_task(record, spans, label_column)
  doccano = form == DOCCANO
  if is_slot_tagger_record(record):
    answer = {"text": record["text"], "label" if doccano else "spans": spans}
  elif "intent" in record and doccano:
    answer = {"text": record["text"], "entities": spans,
              "cats": [record["intent"]]}
  elif "intent" in record:
    answer = {"text": record["text"], "intent": record["intent"],
              "spans": spans}
  else:
    label = record["label"]
    answer = {text_column: record["text"],
              label_column: [label] if doccano else label}
  return dict(answer, score=sureness(record), top_k=record["top_k"])


def _prodigy_task(record, spans, label_column):
  """`to_train_record`'s Prodigy form."""
  task = {"text": record["text"]}
  if "slots" in record:
    task["spans"] = [{"start": start, "end": end, "label": label}
                     for start, end, label in spans]
    if not is_slot_tagger_record(record):
      task["accept"] = [record["intent"]]
  else:
    # Both: the binary interface shows the label, the choice interface
    # picks "accept"; the job reads whichever train's first line has.
    task[label_column] = record["label"]
    task["accept"] = [record["label"]]
  score = sureness(record)
  return dict(task, meta={"score": round(score, 4)}, score=score,
              top_k=record["top_k"])


def export_step(step_dir, output_dir, options):
  """Pipeline step `export` (module docstring)."""
  del output_dir
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import builtin_model
  from mixvocab_tf.export import tflite_conversion
  from mixvocab_tf.serving import predictor as predict_lib
  # pylint: enable=g-import-not-at-top
  dataset = load_data(options)
  prefix = options.get("file_prefix", "model")
  saved_model_dir = os.path.join(step_dir, "saved_model")
  # The check is kept before it is acted on, so a resumed step finishes
  # the SavedModel it chose.
  check_path = os.path.join(step_dir, WORD_TABLE_JSON)
  check = run_files.read_json_if_any(check_path)
  _export_saved_model(options["run"], step_dir, saved_model_dir,
                      check is None or check["pack"])
  if check is None:
    tolerance = options.get("word_table_tolerance", WORD_TABLE_TOLERANCE)
    check = word_table_check(saved_model_dir, dataset,
                             options.get("batch_size"), tolerance)
    run_files.write_json(check_path, check, indent=1)
    if "scores" in check:
      cost = check["cost_points"]
      logging.info(
          "The 4-bit word table %s %.2f points of validation %s (it may cost "
          "at most %.2f): %s.", "costs" if cost >= 0 else "gains", abs(cost),
          " / ".join(check["scores"]["float"]), check["allowed_points"],
          "kept" if check["pack"] else "the export keeps the table whole")
    _export_saved_model(options["run"], step_dir, saved_model_dir,
                        check["pack"])
  summary = {"kind": dataset.kind, "saved_model_dir": saved_model_dir,
             "saved_model_bytes": run_files.file_size(saved_model_dir),
             "word_table": check, "tflite": {}}
  for quantize in options.get("quantizations", ("dynamic",)):
    path = os.path.join(step_dir, f"{prefix}_{quantize}.tflite")
    if not run_files.is_file(path):
      logging.info("Converting the SavedModel to a .tflite (%s)...", quantize)
      calibration = None
      if quantize == "int8":
        calibration = scoring.rows_and_gold(dataset.splits["train"])[0][::50]
      run_files.write_atomically(path, tflite_conversion.convert_saved_model(
          saved_model_dir, quantize=quantize,
          representative_examples=calibration))
    # The predictor opens a local file: a remote .tflite is copied to one.
    with run_files.local_copy(path, (predict_lib.TFLITE_LABELS_SUFFIX,)
                             ) as local:
      scored = score_model(
          local, dataset, options.get("batch_size"),
          options.get("predictions") if quantize == "dynamic" else None)
      if quantize == "dynamic" and options.get("label_next"):
        summary["label_next"] = label_next(
            local, options["unlabelled"], options.get("text_column", "text"),
            options["label_next"], options.get("batch_size"),
            label_column=options.get("label_column", "label"),
            data_format=dataset.files.format,
            train_path=dataset.files.files["train"])
    summary["tflite"][quantize] = dict(
        path=path, size_bytes=run_files.file_size(path), **scored)
    logging.info("TFLite %s: %s, p50 %.2f ms", quantize, {
        name: entry.get("scores") for name, entry in scored["splits"].items()
    }, scored["p50_ms"])
  builtin_path = os.path.join(step_dir, f"{prefix}_builtin.tflite")
  if not run_files.is_file(builtin_path):
    logging.info("Converting the SavedModel's token-id signature to a "
                 "builtin-only .tflite with metadata...")
    run_files.write_atomically(
        builtin_path, builtin_model.convert_builtin(saved_model_dir,
                                                    "dynamic"))
  summary["builtin"] = builtin_model.summary(
      builtin_path, saved_model_dir,
      scoring.rows_and_gold(
          dataset.splits["validation"])[0][:LATENCY_QUERIES])
  # Scored as an app runs it: tokenized outside, then the file alone.
  with run_files.local_copy(builtin_path) as local:
    summary["builtin"]["splits"] = score_model(
        local, dataset, options.get("batch_size"), timed=False)["splits"]
  logging.info("TFLite builtin: %s", summary["builtin"])
  run_files.write_json(os.path.join(step_dir, SUMMARY_JSON), summary,
                       indent=1)


def step_functions():
  return {"export": export_step}
