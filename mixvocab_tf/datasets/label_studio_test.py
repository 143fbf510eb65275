"""Tests of label_studio: a Label Studio JSON export as the job's records."""

import json
import os
import subprocess
import sys

import pytest

from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import splitting
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.serving import scoring
from mixvocab_testing.datasets_testing import raises, write


def _span(start, end, label, text, control="label"):
  return {"value": {"start": start, "end": end, "text": text,
                    "labels": [label]},
          "id": f"s{start}", "from_name": control, "to_name": "text",
          "type": "labels", "origin": "manual"}


def _choice(name, control="intent"):
  return {"value": {"choices": [name]}, "id": "c", "from_name": control,
          "to_name": "text", "type": "choices", "origin": "manual"}


def _task(task_id, text, *results, **annotation):
  return {"id": task_id, "data": {"text": text},
          "annotations": [dict({"id": task_id, "completed_by": 1,
                                "result": list(results),
                                "was_cancelled": False,
                                "ground_truth": False}, **annotation)],
          "predictions": []}


def _export(tmp_path, tasks, name="project.json"):
  return write(tmp_path / name, json.dumps(tasks, ensure_ascii=False))


#: A project labelling intents (a Choices control 'intent') and slots (a
#: Labels control 'label'), as Label Studio's JSON export writes it.
EMOJI_TEXT = "play \U0001F3B5 jazz now"
TASKS = [
    _task(1, "play some jazz", _span(10, 14, "genre", "jazz"),
          _choice("PlayMusic")),
    _task(2, "book a table in paris", _choice("BookRestaurant"),
          _span(16, 21, "city", "paris")),
    # The emoji is two UTF-16 units: the browser's offsets 8-12 are code
    # points 7-11.
    _task(3, EMOJI_TEXT, _span(8, 12, "genre", "jazz"), _choice("PlayMusic")),
    _task(4, "stop", _choice("Stop")),
    # Not labelled yet, and a cancelled annotation: both left out.
    {"id": 5, "data": {"text": "what now"}, "annotations": []},
    _task(6, "skip me", _choice("Stop"), was_cancelled=True),
]


def test_intent_and_slot_export_reads_as_span_records(tmp_path):
  tasks = TASKS + [{
      "id": 7, "data": {"text": "play rock"},
      # Two annotators: the one marked ground truth is read.
      "annotations": [
          {"result": [_choice("Stop")], "ground_truth": False},
          {"result": [_span(5, 9, "genre", "rock"), _choice("PlayMusic")],
           "ground_truth": True}]}]
  found = label_studio.read_export(_export(tmp_path, tasks))
  assert found["kind"] == examples.INTENT_SLOT
  assert found["records"] == [
      {"text": "play some jazz", "spans": [[10, 14, "genre"]],
       "intent": "PlayMusic"},
      {"text": "book a table in paris", "spans": [[16, 21, "city"]],
       "intent": "BookRestaurant"},
      {"text": EMOJI_TEXT, "spans": [[7, 11, "genre"]],
       "intent": "PlayMusic"},
      {"text": "stop", "spans": [], "intent": "Stop"},
      {"text": "play rock", "spans": [[5, 9, "genre"]],
       "intent": "PlayMusic"}]
  assert found["labels"] == ["PlayMusic", "BookRestaurant", "PlayMusic",
                             "Stop", "PlayMusic"]
  assert (found["tasks"], found["left_out"]) == (7, 2)
  # The same tasks as the split `mixvocab-evaluate --data` scores a model
  # on: read as the job reads them, named by the export's path.
  labelled = scoring.read_labelled(str(tmp_path / "project.json"))
  assert (labelled.kind, labelled.path) == (examples.INTENT_SLOT,
                                            str(tmp_path / "project.json"))
  assert labelled.gold_labels == found["labels"]
  assert labelled.split.tags[2] == ["O", "O", "B-genre", "O"]


def test_text_classification_export_and_the_control_to_read(tmp_path):
  tasks = [_task(i, text, _choice(label, "sentiment"),
                 _choice(topic, "topic"))
           for i, (text, label, topic) in enumerate([
               ("a fine film", "Positive", "film"),
               ("dull, long", "Negative", "film"),
               ("the soup was cold", "Negative", "food")])]
  path = _export(tmp_path, tasks)
  raises("the annotations pick choices of 2 controls, 'sentiment', 'topic'. "
         "Expected the control to read. Name it with --label_column",
         label_studio.read_export, path)
  found = label_studio.read_export(path, label_key="topic")
  assert found["kind"] == examples.TEXT_CLASSIFICATION
  assert found["records"] == [{"text": "a fine film", "label": "film"},
                              {"text": "dull, long", "label": "film"},
                              {"text": "the soup was cold", "label": "food"}]
  # One control: read whatever its name.
  one = _export(tmp_path, [_task(1, "a fine film", _choice("Positive",
                                                           "sentiment"))],
                "one.json")
  assert label_studio.read_export(one)["labels"] == ["Positive"]


def _as_json_min(tasks):
  """Tasks as Label Studio's JSON-MIN export writes them: a record an
  annotation not cancelled (the newest first), a task's data flattened
  beside each control's result (a single choice as its string, spans as
  their values), a task without annotations as its data alone."""
  records = []
  meta = {"annotator": 1, "created_at": "2026-12-01T10:00:00Z",
          "updated_at": "2026-12-01T10:00:00Z", "lead_time": 3.5}
  for task in tasks:
    annotations = task.get("annotations") or []
    if not annotations:
      records.append(dict(task["data"], id=task["id"], annotation_id=None,
                          **meta))
    kept = [a for a in annotations if not a.get("was_cancelled")]
    for number, annotation in reversed(list(enumerate(kept))):
      outputs = {}
      for result in annotation["result"]:
        outputs.setdefault(result["from_name"], []).append(
            dict(result["value"], type=result["type"].capitalize()))
      record = dict(task["data"], id=task["id"])
      for name, values in outputs.items():
        values = [{k: v for k, v in value.items() if k != "type"}
                  for value in values]
        if (values[0].keys() == {"choices"} and len(values) == 1 and
            len(values[0]["choices"]) == 1):
          record[name] = values[0]["choices"][0]
        else:
          record[name] = values
      records.append(dict(record, annotation_id=100 * task["id"] + number,
                          **meta))
  return records


def test_json_min_export_reads_as_the_json_export(tmp_path):
  # Intents and slots; the cancelled task and the unlabelled one left out.
  path = _export(tmp_path, _as_json_min(TASKS), "min.json")
  found = label_studio.read_export(path)
  full = label_studio.read_export(_export(tmp_path, TASKS, "full.json"))
  for key in ("kind", "records", "labels", "names"):
    assert found[key] == full[key], key
  # As mixvocab-split-data reads it (--label_column's default 'label' names
  # the project's Labels control here, not a choice).
  assert label_studio.read_export(path, "text", "label")["records"] == (
      full["records"])
  # JSON-MIN leaves a task of cancelled annotations out itself.
  assert (found["tasks"], found["left_out"]) == (5, 1)
  # Two annotators: a task is read once, at its first (newest) record.
  twice = [{"id": 7, "data": {"text": "play rock"}, "annotations": [
      {"result": [_choice("Stop")]},
      {"result": [_span(5, 9, "genre", "rock"), _choice("PlayMusic")]}]}]
  found = label_studio.read_export(
      _export(tmp_path, _as_json_min(twice), "twice.json"))
  assert found["records"] == [{"text": "play rock", "spans": [[5, 9,
                                                               "genre"]],
                               "intent": "PlayMusic"}]
  assert found["tasks"] == 1
  # Text classification, a project whose data holds another string: the
  # control named; a slot tagger's spans alone.
  tasks = [dict(_task(i, text, _choice(label, "sentiment")),
                data={"text": text, "source": "web"})
           for i, (text, label) in enumerate([("a fine film", "Positive"),
                                              ("dull, long", "Negative")])]
  path = _export(tmp_path, _as_json_min(tasks), "sentiment.json")
  raises("the annotations pick choices of 2 controls, 'sentiment', "
         "'source'.*--label_column", label_studio.read_export, path)
  found = label_studio.read_export(path, label_key="sentiment")
  assert found["kind"] == examples.TEXT_CLASSIFICATION
  assert found["records"] == [{"text": "a fine film", "label": "Positive"},
                              {"text": "dull, long", "label": "Negative"}]
  tagger = [_task(1, "play jazz", _span(5, 9, "genre", "jazz")),
            _task(2, "stop it")]
  found = label_studio.read_export(
      _export(tmp_path, _as_json_min(tagger), "ner.json"))
  assert found["records"] == [{"text": "play jazz", "spans": [[5, 9,
                                                               "genre"]]},
                              {"text": "stop it", "spans": []}]
  assert found["names"]["labels"] == "label"


@pytest.mark.parametrize("tasks, match", [
    ('[{"data": ', "line 1: the file is not valid JSON"),
    # Neither the JSON export (no 'data') nor JSON-MIN (no 'annotation_id').
    ([{"text": "play jazz", "intent": "PlayMusic"}],
     "the file holds no list of tasks with 'data'.*or \"JSON-MIN\""),
    # JSON-MIN: the text under another key; two choices in one control.
    ([{"id": 3, "query": "play jazz", "intent": "PlayMusic",
       "annotation_id": 1}],
     r"task 1 \(id 3\) has no key 'text'; its keys are \['intent', "
     r"'query'\].*--text_column"),
    ([{"id": 3, "text": "play jazz", "annotation_id": 1,
       "intent": [{"choices": ["A", "B"]}]}],
     r"task 1 \(id 3\)'s 'intent' choice is \['A', 'B'\]"),
    ([_task(1, "play jazz", {"value": {"choices": ["A", "B"]},
                             "from_name": "intent", "type": "choices"})],
     r"task 1 \(id 1\)'s 'intent' choice is \['A', 'B'\]. Expected one "
     "choice a text"),
    ([_task(1, "play jazz", {"value": {"start": 5, "end": 9,
                                       "labels": ["genre", "style"]},
                             "type": "labels"}, _choice("PlayMusic"))],
     r"task 1 \(id 1\) has a span .*one label a span"),
    ([_task(1, "play jazz", _span(5, 9, "genre", "jaz"),
            _choice("PlayMusic"))],
     "span from 5 to 9 marked 'jaz', but the text there is 'jazz'"),
    ([_task(1, "play jazz"), _task(2, "stop")],
     "no annotation picks a choice.*or spans \\(a slot tagger\\)"),
    ([{"id": 1, "data": {"text": "play jazz"}, "annotations": []}],
     "none of its 1 task has an annotation that is not cancelled"),
    ([{"id": 1, "data": {"query": "a", "source": "b"},
       "annotations": [{"result": [_choice("A")]}]}],
     r"task 1 \(id 1\)'s data has no key 'text'.*--text_column"),
    ([_task(1, "play jazz", _choice("PlayMusic")),
      _task(2, "play rock", _span(5, 9, "genre", "rock"))],
     r"task 2 \(id 2\)'s annotation picks no 'intent' choice"),
    # The job's own checks, naming the task: an intent with a space, a span
    # over whitespace only.
    ([_task(1, "play jazz", _span(5, 9, "genre", "jazz"),
            _choice("Play Music"))],
     r"project.json, task 1 \(id 1\): the intent is 'Play Music'"),
    ([_task(1, "stop", _choice("Stop")),
      _task(9, "play  jazz", _span(5, 6, "genre", " "),
            _choice("PlayMusic"))],
     r"project.json, task 2 \(id 9\): span 1 \(5 to 6, ' '\) holds no word"),
])
def test_what_is_refused_names_the_task(tmp_path, tasks, match):
  path = (write(tmp_path / "project.json", tasks) if isinstance(tasks, str)
          else _export(tmp_path, tasks))
  raises(match, label_studio.read_export, path)


def test_split_data_writes_jsonl_splits_the_job_reads(tmp_path):
  tasks = [_task(i, f"play {genre} {i}", _span(5, 5 + len(genre), "genre",
                                                genre), _choice("PlayMusic"))
           for i, genre in enumerate(["jazz", "rock", "pop"] * 4)]
  tasks += [_task(100 + i, f"stop it {i}", _choice("Stop")) for i in range(8)]
  tasks += TASKS[4:]  # Left out.
  out = str(tmp_path / "data")
  summary = splitting.split_dataset(_export(tmp_path, tasks), out,
                                    validation_fraction=0.25, seed=0)
  assert summary["format"] == label_studio.FORMAT
  assert summary["kind"] == examples.INTENT_SLOT
  assert summary["tasks_left_out"] == 2
  assert summary["examples"] == {"train": 15, "validation": 5}
  assert sorted(os.listdir(out)) == [label_studio.NAMES_JSON, "train.jsonl",
                                     "validation.jsonl"]
  with open(os.path.join(out, label_studio.NAMES_JSON)) as f:
    assert json.load(f) == {"text": "text", "to_name": "text",
                            "labels": "label", "choices": "intent"}
  # The names, as mixvocab-predict reads them: from the file, the splits'
  # directory or the export itself.
  for source in (os.path.join(out, label_studio.NAMES_JSON), out,
                 str(tmp_path / "project.json")):
    assert label_studio.read_names(source) == {
        "text": "text", "to_name": "text", "labels": "label",
        "choices": "intent"}
  raises("the directory holds no label_studio.json", label_studio.read_names,
         str(tmp_path))
  dataset = user_dataset.load_dataset(out)
  train = dataset.splits["train"]
  assert train.words[0] == ["play", "jazz", "0"]
  assert train.tags[0] == ["O", "B-genre", "O"]
  assert set(train.intents) == {"PlayMusic", "Stop"}
  with pytest.raises(ValueError, match="not as pairs"):
    splitting.split_dataset(_export(tmp_path, tasks, "p2.json"),
                            str(tmp_path / "d2"), text_b_column="b")


def test_answers_as_tasks_the_project_imports_and_reads_back(tmp_path):
  # The model's answers (a predictor's records) as pre-annotated tasks: the
  # project's own names, offsets in UTF-16 units as its browser counts
  # them; read back as annotations, they are the answers again.
  names = {"text": "query", "to_name": "q", "labels": "slot",
           "choices": "intent"}
  records = [
      {"text": EMOJI_TEXT, "intent": "PlayMusic", "score": 0.41,
       "slots": [{"type": "genre", "start": 7, "end": 11, "text": "jazz"}]},
      {"text": "stop", "intent": "Stop", "score": 0.9, "slots": []}]
  tasks = [label_studio.to_task(r, names) for r in records]
  value = tasks[0]["predictions"][0]["result"][0]["value"]
  assert (value["start"], value["end"], value["text"]) == (8, 12, "jazz")
  assert tasks[0]["data"] == {"query": EMOJI_TEXT}
  assert tasks[0]["predictions"][0]["score"] == 0.41
  for task in tasks:  # As annotations, the way an export holds them.
    task["annotations"] = [{"result": task.pop("predictions")[0]["result"]}]
  found = label_studio.read_export(_export(tmp_path, tasks), "query")
  assert found["records"] == [
      {"text": EMOJI_TEXT, "spans": [[7, 11, "genre"]], "intent": "PlayMusic"},
      {"text": "stop", "spans": [], "intent": "Stop"}]
  assert found["names"] == names
  task = label_studio.to_task({"text": "dull", "label": "neg", "score": 0.6},
                              dict(names, choices="sentiment"))
  assert task["predictions"][0]["result"] == [
      {"from_name": "sentiment", "to_name": "q", "type": "choices",
       "value": {"choices": ["neg"]}}]


def test_a_project_of_spans_alone_is_a_slot_taggers_data(tmp_path):
  # Label Studio's "Named Entity Recognition" template: a Labels control,
  # no Choices. Its records have no intent; split, they load as a slot
  # tagger's dataset, and answers go back as tasks of spans alone.
  tasks = [_task(i, f"play {genre} {i}", _span(5, 5 + len(genre), "genre",
                                                genre))
           for i, genre in enumerate(["jazz", "rock", "pop"] * 4)]
  tasks.append(_task(50, "stop it"))  # Labelled: no span in it.
  found = label_studio.read_export(_export(tmp_path, tasks))
  assert found["kind"] == examples.INTENT_SLOT
  assert found["records"][0] == {"text": "play jazz 0",
                                 "spans": [[5, 9, "genre"]]}
  assert found["records"][-1] == {"text": "stop it", "spans": []}
  assert found["names"]["choices"] is None
  out = str(tmp_path / "data")
  splitting.split_dataset(_export(tmp_path, tasks, "p.json"), out,
                          validation_fraction=0.25, seed=0)
  dataset = user_dataset.load_dataset(out)
  assert dataset.slot_tagger
  assert dataset.labels == [examples.NO_INTENT]
  task = label_studio.to_task(
      {"text": "play jazz", "intent": examples.NO_INTENT, "score": 0.3,
       "slots": [{"type": "genre", "start": 5, "end": 9, "text": "jazz"}]},
      found["names"])
  assert [r["type"] for r in task["predictions"][0]["result"]] == ["labels"]


def test_command_line_counts_the_tasks_left_out(tmp_path):
  tasks = [_task(i, f"stop it {i}", _choice("Stop")) for i in range(6)]
  tasks += [_task(10 + i, f"go {i}", _choice("Go")) for i in range(6)]
  source = _export(tmp_path, tasks + TASKS[4:5])
  done = subprocess.run(
      [sys.executable, "-m", "mixvocab_tf.cli.split_data", f"--data={source}",
       f"--output_dir={tmp_path / 'data'}", "--validation_fraction=0.2"],
      capture_output=True, text=True, check=False)
  assert done.returncode == 0, done.stderr
  summary = json.loads(done.stdout)
  assert (summary["kind"], summary["tasks_left_out"]) == (
      examples.TEXT_CLASSIFICATION, 1)
  assert ("1 task of the Label Studio export has no annotation (or only "
          "cancelled ones): left out.") in done.stderr
  assert summary["label_studio"].endswith(label_studio.NAMES_JSON)
