"""A Label Studio JSON export read as the own-data job's JSONL records.

Label Studio exports a project as one JSON file (its "JSON" export): a list
of tasks, each `{"id", "data": {<key>: <text>, ...}, "annotations":
[{"result": [...], "was_cancelled", "ground_truth", ...}, ...]}`. In an
annotation's result, an item of type `labels` marks a span of the text
(`{"value": {"start", "end", "text", "labels": [<type>]}}`, offsets in
characters, the end excluded) and one of type `choices` picks a class
(`{"value": {"choices": [<name>]}, "from_name": <the control's name>}`).

`read_export` turns each annotated task into the JSONL record the job reads
(`intent_slot_files`, `text_classification_files`): `{"text", "spans",
"intent"}` when the project marks spans (intent and slots: the choice is
the intent), else `{"text", "label"}` (text classification: the choice is
the label). `mixvocab-split-data` splits an export into such JSONL splits
(`splitting`), and writes the project's names beside them (`NAMES_JSON`:
the data key, the Text tag, the Labels and Choices controls), so that
`to_task` can write the job's texts to label next as Label Studio tasks
pre-annotated with the model's answers (its "predictions"), which the
project imports as they are.

- The text is the task's `data[text_key]` (default `text`, the key of
  Label Studio's templates), or the task's one string value.
- Of a task's annotations, the one marked ground truth is read, else the
  first one not cancelled; a task with none is left out and counted.
- A project with several Choices controls names the one to read
  (`label_key`, the control's name); one with a single control reads it.
- Its "JSON-MIN" export (a record a task's annotation: the task's data,
  its `id`, each control's result under the control's name, a single
  choice as its string, spans as `[{"start", "end", "text", "labels"}]`,
  and `annotation_id`, `annotator`, ...) is read as the same tasks: a
  record's strings other than its text are its choices, so a project
  whose data holds more strings names the control (`label_key`). Of a
  task's records (one an annotator, Label Studio's newest first) the first
  is read; one without `annotation_id` is a task not labelled yet.
- Span offsets are Python characters (code points) as the readers count
  them. Label Studio's browser counts UTF-16 units, which differ after a
  character beyond U+FFFF (an emoji): a span whose offsets do not give its
  `text` but whose UTF-16 offsets do is read at those.
"""

import dataclasses
import json
import os
import tempfile
from typing import Any

import tensorflow as tf

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import text_classification_files

#: The `format` of a split source read from a Label Studio export.
FORMAT = "label_studio"
#: The project's names, written beside the splits of an export.
NAMES_JSON = "label_studio.json"
#: The `model_version` of the predictions `to_task` writes.
MODEL_VERSION = "mixvocab_tf student"


def is_export(path: str) -> bool:
  """Whether `path` is a .json file (a Label Studio export, if it holds one;
  `read_export` says what it holds otherwise)."""
  return path.lower().endswith(".json") and not tf.io.gfile.isdir(path)


def _utf16_to_code_points(text: str, offset: int) -> int | None:
  """The code-point offset of UTF-16 offset `offset` in `text`, or None
  if it falls inside a surrogate pair or past the end."""
  units = 0
  for index, char in enumerate(text):
    if units == offset:
      return index
    units += 2 if ord(char) > 0xFFFF else 1
  return len(text) if units == offset else None


def _utf16_offset(text: str, offset: int) -> int:
  """The UTF-16 offset of code-point offset `offset` in `text` (a
  browser's, which Label Studio's offsets are)."""
  return len(text[:offset].encode("utf-16-le")) // 2


def template_names(intent_slot: bool, slot_tagger: bool = False) -> dict:
  """The names of Label Studio's own templates (the Text tag `text` of
  `$text`; "Named Entity Recognition"'s Labels `label`; "Text
  Classification"'s Choices `sentiment`), the intent's Choices `intent`:
  `to_task`'s names where the project's are not given."""
  choices = (None if slot_tagger else "intent" if intent_slot else
             "sentiment")
  return {"text": "text", "to_name": "text", "labels": "label",
          "choices": choices}


def read_names(path: str) -> dict:
  """A project's names (`read_export`'s): from the `NAMES_JSON` that
  `mixvocab-split-data` wrote beside its splits (or the splits' directory
  holding it), or from the project's export itself."""
  if tf.io.gfile.isdir(path):
    if not tf.io.gfile.exists(os.path.join(path, NAMES_JSON)):
      raise errors.data_error(
          path, None, f"the directory holds no {NAMES_JSON}",
          "the project's JSON export, or the splits mixvocab-split-data "
          f"wrote from it (with their {NAMES_JSON})")
    path = os.path.join(path, NAMES_JSON)
  if os.path.basename(path) == NAMES_JSON:
    text = "\n".join(decoding.read_lines(path, "a Label Studio names file"))
    try:
      names = json.loads(text)
    except json.JSONDecodeError as e:
      raise errors.data_error(path, e.lineno,
                              f"the file is not valid JSON ({e.msg})",
                              "the names mixvocab-split-data wrote") from None
    keys = ("text", "to_name", "labels", "choices")
    if not (isinstance(names, dict) and set(names) >= set(keys)):
      raise errors.data_error(
          path, None, f"the file holds {errors.show(names)}",
          f"an object with the keys {list(keys)}",
          "Give the label_studio.json mixvocab-split-data wrote, or the "
          "project's JSON export.")
    return {key: names[key] for key in keys}
  return read_export(path)["names"]


def to_task(record: dict, names: dict) -> dict:
  """A predictor's record (`serving.predictor`) as a Label Studio task
  whose prediction is the record's answer (`names`: `read_export`'s)."""
  text = record["text"]
  result = [{"from_name": names["labels"], "to_name": names["to_name"],
             "type": "labels",
             "value": {"start": _utf16_offset(text, slot["start"]),
                       "end": _utf16_offset(text, slot["end"]),
                       "text": text[slot["start"]:slot["end"]],
                       "labels": [slot["type"]]}}
            for slot in record.get("slots", ())]
  if names.get("choices"):  # None: a slot tagger's project, spans alone.
    result.append({"from_name": names["choices"],
                   "to_name": names["to_name"], "type": "choices",
                   "value": {"choices": [
                       record.get("intent", record.get("label"))]}})
  return {"data": {names["text"]: text},
          "predictions": [{"model_version": MODEL_VERSION,
                           "score": record["score"], "result": result}]}


def _task_where(number: int, task: dict) -> str:
  where = f"task {number}"
  if task.get("id") is not None:
    where += f" (id {task['id']})"
  return where


def _annotation(task: dict) -> dict | None:
  """The annotation read of a task (the module docstring), or None."""
  kept = [a for a in task.get("annotations") or ()
          if isinstance(a, dict) and not a.get("was_cancelled")]
  truth = [a for a in kept if a.get("ground_truth")]
  return (truth or kept or [None])[0]


def _text(path: str, where: str, data: Any, text_key: str
          ) -> tuple[str, str]:
  """(the task's text, its data key)."""
  if not isinstance(data, dict):
    raise errors.data_error(
        path, None, f"{where}'s 'data' is a JSON {errors.json_type(data)}",
        "an object holding the task's text",
        "Export the project with Label Studio's JSON export.")
  key = text_key
  if text_key in data:
    text = data[text_key]
  else:
    strings = [key for key, value in data.items() if isinstance(value, str)]
    if len(strings) != 1:
      raise errors.data_error(
          path, None, f"{where}'s data has no key {text_key!r}; its keys "
          f"are {list(data)}", f"the text under {text_key!r}",
          "Name the key of the text (the Text tag's value, '$<key>') with "
          "--text_column.")
    key = strings[0]
    text = data[key]
  if not isinstance(text, str) or not text.strip():
    raise errors.data_error(
        path, None, f"{where}'s text is {errors.show(text)}",
        "a text of at least one word")
  return text, key


def _span(path: str, where: str, text: str, value: Any) -> list:
  """[start, end, type] of a `labels` result, offsets in code points."""
  fields = ((value.get("start"), value.get("end"), value.get("labels"))
            if isinstance(value, dict) else (None, None, None))
  if not (all(isinstance(v, int) and not isinstance(v, bool)
              for v in fields[:2]) and
          isinstance(fields[2], list) and len(fields[2]) == 1 and
          isinstance(fields[2][0], str)):
    raise errors.data_error(
        path, None, f"{where} has a span {errors.show(value)}",
        'a "labels" result\'s value {"start": 5, "end": 9, "labels": '
        '["genre"]} (one label a span)',
        "Give each span one label: the model tags each word with one slot "
        "type.")
  start, end, (label,) = fields
  marked = value.get("text")  # A dict: `fields` checked it.
  if isinstance(marked, str) and text[start:end] != marked:
    start16 = _utf16_to_code_points(text, start)
    end16 = _utf16_to_code_points(text, end)
    if None in (start16, end16) or text[start16:end16] != marked:
      raise errors.data_error(
          path, None,
          f"{where} has a span from {start} to {end} marked "
          f"{errors.show(marked)}, but the text there is "
          f"{errors.show(text[start:end])}",
          "offsets that give the span's text",
          "Was the task's text edited after it was labelled? Label it "
          "again in Label Studio.")
    start, end = start16, end16
  return [start, end, label]


#: The keys a JSON-MIN record holds besides the task's data and results.
_JSON_MIN_KEYS = frozenset({"id", "annotator", "annotation_id",
                            "created_at", "updated_at", "lead_time",
                            "agreement", "history"})


def _is_json_min(tasks: Any) -> bool:
  """Whether `tasks` is Label Studio's JSON-MIN export (records, each with
  `annotation_id`, none with the JSON export's `data`)."""
  return (isinstance(tasks, list) and bool(tasks) and
          all(isinstance(t, dict) and "data" not in t for t in tasks) and
          any("annotation_id" in t for t in tasks))


def _result_of(key: str, value: Any, text_key: str) -> list | None:
  """A JSON-MIN record's value as the JSON export's results of control
  `key`, or None if it is the task's data."""
  if key == text_key:
    return None
  if isinstance(value, str):  # A single choice, or data: read_export picks.
    return [{"type": "choices", "from_name": key,
             "value": {"choices": [value]}}]
  if (isinstance(value, list) and value and
      all(isinstance(v, dict) for v in value)):
    if all("labels" in v for v in value):
      return [{"type": "labels", "from_name": key, "value": v}
              for v in value]
    if all("choices" in v for v in value):  # Several choices.
      return [{"type": "choices", "from_name": key, "value": v}
              for v in value]
  return None


def _tasks_from_json_min(path: str, records: list[dict],
                         text_key: str) -> list[dict]:
  """JSON-MIN records as the JSON export's tasks (the module docstring)."""
  tasks, seen = [], set()
  for number, record in enumerate(records, start=1):
    task_id = record.get("id")
    if task_id is not None and task_id in seen:
      continue  # Another annotator's record of a task read already.
    seen.add(task_id)
    if text_key not in record:
      strings = sorted(k for k, v in record.items()
                       if isinstance(v, str) and k not in _JSON_MIN_KEYS)
      raise errors.data_error(
          path, None, f"{_task_where(number, record)} has no key "
          f"{text_key!r}; its keys are {strings}",
          f"the text under {text_key!r}",
          "Name the key of the text (the Text tag's value, '$<key>') with "
          "--text_column.")
    data, result = {}, []
    for key, value in record.items():
      if key in _JSON_MIN_KEYS:
        continue
      results = _result_of(key, value, text_key)
      if results is None:
        data[key] = value
      else:
        result.extend(results)
    annotated = record.get("annotation_id") is not None or result
    tasks.append({"id": task_id, "data": data,
                  "annotations": [{"result": result}] if annotated else []})
  return tasks


def read_export(path: str, text_key: str = "text",
                label_key: str | None = None) -> dict:
  """Reads and checks a Label Studio JSON or JSON-MIN export (the module
  docstring).

  Args:
    path: the export (.json).
    text_key: the data key of the text.
    label_key: the Choices control to read (its `from_name`); None: the
      project's only one.

  Returns:
    {"kind": examples.INTENT_SLOT or examples.TEXT_CLASSIFICATION,
     "records": the JSONL records, in the export's task order,
     "labels": each record's intent or label, "tasks": tasks in the file,
     "left_out": tasks without an annotation that is not cancelled,
     "names": {"text": the data key, "to_name": the Text tag's name,
     "labels": the Labels control's, "choices": the Choices control's}}.

  Raises:
    DataError: the file is not a Label Studio export, or a task's
      annotation cannot be read as one text's labels (the message names the
      task by its number and id).
  """
  text = "\n".join(decoding.read_lines(path, "a Label Studio JSON export"))
  try:
    tasks = json.loads(text)
  except json.JSONDecodeError as e:
    raise errors.data_error(
        path, e.lineno, f"the file is not valid JSON ({e.msg})",
        "Label Studio's JSON export (a list of tasks)") from None
  if _is_json_min(tasks):
    tasks = _tasks_from_json_min(path, tasks, text_key)
  if not (isinstance(tasks, list) and tasks and
          all(isinstance(t, dict) and "data" in t for t in tasks)):
    raise errors.data_error(
        path, None, "the file holds no list of tasks with 'data'",
        "Label Studio's JSON export: [{\"data\": {\"text\": ...}, "
        "\"annotations\": [...]}, ...], or its JSON-MIN export (records "
        "with 'annotation_id')",
        "Export the project with Label Studio's \"JSON\" or \"JSON-MIN\" "
        "format, or give the job CSV or JSONL files.")
  read = []  # (where, text, spans, {control: choice}).
  names = {"text": None, "to_name": None, "labels": None}
  for number, task in enumerate(tasks, start=1):
    annotation = _annotation(task)
    if annotation is None:
      continue
    where = _task_where(number, task)
    task_text, key = _text(path, where, task["data"], text_key)
    names["text"] = names["text"] or key
    spans, choices = [], {}
    for item in annotation.get("result") or ():
      kind = item.get("type") if isinstance(item, dict) else None
      if kind in ("labels", "choices"):
        names["to_name"] = names["to_name"] or item.get("to_name")
      if kind == "labels":
        names["labels"] = names["labels"] or item.get("from_name")
        spans.append(_span(path, where, task_text, item.get("value") or {}))
      elif kind == "choices":
        picked = (item.get("value") or {}).get("choices")
        control = item.get("from_name", "choices")
        if not (isinstance(picked, list) and len(picked) == 1 and
                isinstance(picked[0], str)):
          raise errors.data_error(
              path, None, f"{where}'s {control!r} choice is "
              f"{errors.show(picked)}", "one choice a text",
              "The model gives each text one label: pick its main one (a "
              "Choices control of choice=\"single\").")
        choices[control] = picked[0].strip()
    read.append((where, task_text, spans, choices))
  if not read:
    raise errors.data_error(
        path, None, f"none of its {errors.plural(len(tasks), 'task')} has an "
        "annotation that is not cancelled", "labelled tasks",
        "Label them in Label Studio first.")
  controls = sorted({c for *_, choices in read for c in choices})
  intent_slot = any(spans for _, _, spans, _ in read)
  if label_key in controls:
    control = label_key
  elif len(controls) == 1:
    control = controls[0]
  elif not controls and intent_slot:
    control = None  # Spans alone: a slot tagger's data (no intents).
  elif not controls:
    raise errors.data_error(
        path, None, "no annotation picks a choice (a class or intent)",
        "a Choices control's choice on each text",
        "The own-data job needs a label (or intent) per text, or spans "
        "(a slot tagger): add a Choices control to the project's labeling "
        "interface, or label spans.")
  else:
    raise errors.data_error(
        path, None, f"the annotations pick choices of {len(controls)} "
        f"controls, {', '.join(map(repr, controls))}",
        "the control to read", "Name it with --label_column.")
  records, labels = [], []
  for where, task_text, spans, choices in read:
    if control is None:
      records.append({"text": task_text, "spans": spans})
      labels.append(examples.NO_INTENT)
      continue
    if control not in choices:
      raise errors.data_error(
          path, None, f"{where}'s annotation picks no {control!r} choice",
          "a choice on every labelled text",
          "Pick one in Label Studio, or skip the task there.")
    label = choices[control]
    if intent_slot:
      records.append({"text": task_text, "spans": spans, "intent": label})
    else:
      records.append({"text": task_text, "label": label})
    labels.append(label)
  split = _check_as_the_job_reads(path, records,
                                  [where for where, *_ in read],
                                  intent_slot, control is not None)
  names["choices"] = control
  names["to_name"] = names["to_name"] or "text"
  names["labels"] = names["labels"] or "label"
  return {"kind": (examples.INTENT_SLOT if intent_slot else
                   examples.TEXT_CLASSIFICATION),
          "records": records, "labels": labels, "tasks": len(tasks),
          "left_out": len(tasks) - len(read), "names": names,
          "split": split}


def _check_as_the_job_reads(path: str, records: list[dict],
                            wheres: list[str], intent_slot: bool,
                            with_intents: bool = True):
  """Reads the records as the job reads a JSONL split (intents and slot
  types without spaces, spans that hold words and do not overlap, ...;
  `with_intents` False: a slot tagger's, without intents); a broken one
  raises the readers' error, naming its task. Returns the split read
  (`examples`' type; its path the export's, no line numbers; a slot
  tagger's queries given `examples.NO_INTENT`)."""
  with tempfile.TemporaryDirectory() as tmp:
    jsonl = os.path.join(tmp, "tasks.jsonl")
    with open(jsonl, "w", encoding="utf-8") as f:
      f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    try:
      if intent_slot:
        split = intent_slot_files.as_slot_tagger(
            intent_slot_files.read_intent_slot(
                jsonl, require_intents=with_intents))
      else:
        split = text_classification_files.read_text_classification(jsonl)
    except errors.DataError as e:
      message = (str(e).replace(jsonl, path) if e.line is None else
                 str(e).replace(f"{jsonl}, line {e.line}",
                                f"{path}, {wheres[e.line - 1]}"))
      raise errors.DataError(message, path=path, line=None) from None
  return dataclasses.replace(split, path=path, line_numbers=None)
