"""Tests of Rasa NLU training data read as a user's dataset."""

import json
import os

import pytest

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import layout
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import slot_values
from mixvocab_tf.datasets import splitting
from mixvocab_tf.datasets import text_classification_files
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.serving import scoring

_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                        "intent_slot")

_NLU = """\
version: "3.1"
nlu:
- intent: book_flight
  examples: |
    - fly from [Berlin]{"entity": "city", "role": "departure"} to [Rome](city)
    - book a flight

    - [New York](city:NYC), tomorrow
- intent: greet
  examples:
  - text: |
      hello   there
    metadata:
      sentiment: neutral
- synonym: New York City
  examples: |
    - New York
- lookup: city
  examples: |
    - Berlin
    - New  York
    - Berlin
- intent: book_flight
  examples: |
    - a seat to [Oslo][{"entity": "city"}, {"entity": "place"}]
stories:
- story: ignored
  steps:
  - intent: greet
"""


def _write(path, text):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(text, encoding="utf-8")
  return str(path)


def _markup(words, tags):
  """A query's words and IOB2 tags as Rasa markup: '[new york](city)'."""
  out, i = [], 0
  while i < len(words):
    if tags[i] == "O":
      out.append(words[i])
      i += 1
      continue
    j = i + 1
    while j < len(words) and tags[j] == "I-" + tags[i][2:]:
      j += 1
    out.append(f"[{' '.join(words[i:j])}]({tags[i][2:]})")
    i = j
  return " ".join(out)


def _as_rasa(data):
  """Rasa NLU YAML of a split's queries, in order (an intent item per run
  of one intent)."""
  lines, last = ['version: "3.1"', "nlu:"], None
  for words, tags, intent in zip(data.words, data.tags, data.intents):
    if intent != last:
      lines += [f"- intent: {intent}", "  examples: |"]
      last = intent
    lines.append("    - " + _markup(words, tags))
  return "\n".join(lines) + "\n"


def test_reads_markup_roles_metadata_lists_and_lines(tmp_path):
  path = _write(tmp_path / "nlu.yml", _NLU)
  found = rasa_files.read_rasa(path)
  assert [(e.text, e.spans, e.intent, e.line) for e in found] == [
      ("fly from Berlin to Rome", [(9, 15, "city.departure"),
                                   (19, 23, "city")], "book_flight", 5),
      ("book a flight", [], "book_flight", 6),
      ("New York, tomorrow", [(0, 8, "city")], "book_flight", 8),
      ("hello there", [], "greet", 12),
      ("a seat to Oslo", [(10, 14, "city")], "book_flight", 25),
  ]
  data = intent_slot_files.read_intent_slot(path)
  assert data.words[0] == ["fly", "from", "Berlin", "to", "Rome"]
  assert data.tags[0] == ["O", "O", "B-city.departure", "O", "B-city"]
  assert data.tags[2] == ["B-city", "I-city", "O"]  # 'York,' is in the slot.
  assert data.line_numbers == [5, 6, 8, 12, 25]
  assert rasa_files.read_lookups(path) == {
      "city": [("Berlin", 20), ("New  York", 21), ("Berlin", 22)]}


def test_the_readme_example_reads_the_same_as_rasa(tmp_path):
  """A Goo dataset written as Rasa markup reads back the same examples."""
  for split in ("train", "dev", "test"):
    goo = intent_slot_files.read_intent_slot(os.path.join(_EXAMPLE, split))
    path = _write(tmp_path / f"{split}.yml", _as_rasa(goo))
    rasa = intent_slot_files.read_intent_slot(path)
    assert (rasa.words, rasa.tags, rasa.intents) == (goo.words, goo.tags,
                                                      goo.intents)
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert (dataset.kind, dataset.files.format) == (examples_lib.INTENT_SLOT,
                                                  "rasa")
  assert dataset.files.files["validation"].endswith("dev.yml")


def test_without_entities_it_is_text_classification(tmp_path):
  text = ('nlu:\n- intent: greet\n  examples: |\n    - hi\n    - hello\n'
          '- intent: bye\n  examples: |\n    - bye now\n    - [see] you\n')
  for split in ("train", "validation"):
    _write(tmp_path / f"{split}.yaml", text)
  found = layout.find_dataset(str(tmp_path))
  assert (found.kind, found.format) == (examples_lib.TEXT_CLASSIFICATION,
                                        "rasa")
  data = text_classification_files.read_text_classification(
      found.files["train"])
  assert data.texts_a == ["hi", "hello", "bye now", "[see] you"]
  assert data.labels == ["greet", "greet", "bye", "bye"]
  assert data.line_numbers == [4, 5, 8, 9]
  assert user_dataset.load_dataset(str(tmp_path)).kind == (
      examples_lib.TEXT_CLASSIFICATION)


@pytest.mark.parametrize("text, message", [
    ("nlu:\n- intent: a\n  examples: |\n    - ok\n   - bad indent\n",
     r"nlu.yml, line 5: the file is not valid YAML"),
    ("nlu:\n- intent: a\n  examples: |\n    - ok\n    no dash\n",
     r"nlu.yml, line 5: the example line 'no dash' does not start with '-'"),
    ("version: '3.1'\nstories: []\n",
     r"nlu.yml: the file has no key 'nlu' \(its keys: version, stories\)"),
    ("nlu:\n- intent: a\n  examples: |\n    - [x]{entity: a}\n",
     r"nlu.yml, line 4: the entity .* does not parse as JSON"),
    ("nlu:\n- intent: a\n  examples: |\n    - [x]{\"role\": \"a\"}\n",
     r"nlu.yml, line 4: the entity .* has no 'entity'"),
    ("nlu:\n- intent: play music\n  examples: |\n    - ok\n",
     r"nlu.yml, line 2: the intent name 'play music' is several words"),
    ("nlu:\n- intent: a\n", r"nlu.yml, line 2: the intent 'a' has no "
     "examples"),
    ("nlu:\n- intent: a\n  lookup: b\n  examples: |\n    - ok\n",
     r"nlu.yml, line 2: an item of 'nlu' has the keys intent, lookup"),
    ("nlu:\n- lookup: a\n  examples: |\n    - ok\n",
     r"nlu.yml: the file has no intent with an example"),
    ("nlu:\n- intent: a\n  examples: |\n    -\n    - ok\n",
     r"nlu.yml, line 4: the example is empty"),
    ("nlu:\n- intent: a\n  examples: |\n    - [a b](x) [b](y)\n",
     None),
    ("nlu:\n- intent: a\n  examples: |\n    - [ ](x) b\n",
     r"nlu.yml, line 4: span 1 .* holds no word"),
])
def test_broken_files_name_the_line_and_the_fix(tmp_path, text, message):
  path = _write(tmp_path / "nlu.yml", text)
  if message is None:  # Two slots side by side are fine.
    assert intent_slot_files.read_intent_slot(path).tags == [
        ["B-x", "I-x", "B-y"]]
    return
  with pytest.raises(errors.DataError, match=message) as raised:
    intent_slot_files.read_intent_slot(path)
  assert "Expected" in str(raised.value)


def test_lookup_tables_are_slot_values_by_name_and_role(tmp_path):
  path = _write(tmp_path / "nlu.yml", _NLU)
  types = {"city", "city.departure", "date"}
  assert slot_values.read_slot_values(path, types) == {
      "city": [("Berlin",), ("New", "York")],
      "city.departure": [("Berlin",), ("New", "York")]}
  lookups = _write(tmp_path / "lookups.yml",
                   "nlu:\n- lookup: cities\n  examples: |\n    - Oslo\n"
                   "- lookup: date\n  examples: |\n    - today\n")
  assert slot_values.read_slot_values(lookups, types) == {
      "date": [("today",)]}
  assert slot_values.unused_lookups(lookups, types) == ["cities"]
  with pytest.raises(errors.DataError,
                     match=r"no lookup table is named after a slot type of "
                     r"train \(tables: cities, date\)"):
    slot_values.read_slot_values(lookups, {"city"})
  with pytest.raises(errors.DataError, match="none.yml: the file does not "
                     "exist. Expected a Rasa NLU file with lookup tables"):
    slot_values.read_slot_values(str(tmp_path / "none.yml"), types)
  with pytest.raises(errors.DataError, match="the file has no lookup table"):
    slot_values.read_slot_values(
        _write(tmp_path / "none.yml",
               "nlu:\n- intent: a\n  examples: |\n    - ok\n"), types)


def test_split_writes_rasa_files_that_read_back(tmp_path):
  lines = ['version: "3.1"', "nlu:"]
  for intent in ("play", "stop"):
    lines += [f"- intent: {intent}", "  examples: |"]
    lines += [f"    - {intent} [song {i}](track) now" for i in range(10)]
  lines += ["- lookup: track", "  examples: |", "    - one more"]
  source = _write(tmp_path / "nlu.yml", "\n".join(lines) + "\n")
  summary = splitting.split_dataset(source, str(tmp_path / "out"),
                                    validation_fraction=0.2, seed=1)
  assert summary["format"] == "rasa" and summary["kind"] == "intent_slot"
  assert summary["examples"] == {"train": 16, "validation": 4}
  assert summary["lookup_tables"] == ["track"]
  assert sorted(os.listdir(tmp_path / "out")) == ["lookups.yml", "train.yml",
                                                   "validation.yml"]
  assert slot_values.read_slot_values(summary["lookups"], {"track"}) == {
      "track": [("one", "more")]}
  dataset = user_dataset.load_dataset(str(tmp_path / "out"))
  whole = intent_slot_files.read_intent_slot(source)
  read = dataset.splits["train"].words + dataset.splits["validation"].words
  assert sorted(map(tuple, read)) == sorted(map(tuple, whole.words))
  assert set(dataset.splits["validation"].intents) == {"play", "stop"}


def test_scoring_reads_a_rasa_file_by_its_entities(tmp_path):
  slots = _write(tmp_path / "a.yml", "nlu:\n- intent: play\n  examples: |\n"
                 "    - play [jazz](genre)\n")
  plain = _write(tmp_path / "b.yml", "nlu:\n- intent: play\n  examples: |\n"
                 "    - play jazz\n")
  assert scoring.read_labelled(slots).kind == examples_lib.INTENT_SLOT
  labelled = scoring.read_labelled(plain)
  assert labelled.kind == examples_lib.TEXT_CLASSIFICATION
  assert labelled.gold_labels == ["play"]


def test_to_yaml_keeps_each_example_as_written(tmp_path):
  path = _write(tmp_path / "nlu.yml", _NLU)
  found = rasa_files.read_rasa(path)
  again = _write(tmp_path / "again.yml", rasa_files.to_yaml(found))
  assert [(e.text, e.spans, e.intent) for e in rasa_files.read_rasa(again)] \
      == [(e.text, e.spans, e.intent) for e in
          sorted(found, key=lambda e: e.intent != "book_flight")]
  assert json.dumps("book_flight") in open(again).read()


def test_rasa_split_names_get_a_rename_hint(tmp_path):
  """`rasa data split nlu` writes training_data.yml and test_data.yml."""
  text = "nlu:\n- intent: a\n  examples: |\n    - [x](y)\n"
  _write(tmp_path / "training_data.yml", text)
  _write(tmp_path / "test_data.yml", text)
  with pytest.raises(errors.DataError,
                     match=r"Rename training_data.yml to train.yml"):
    layout.find_dataset(str(tmp_path))


def test_answers_are_written_as_rasa_data_that_reads_back(tmp_path):
  records = [
      {"text": "fly to Berlin now", "intent": "book", "score": 0.31,
       "slots": [{"start": 7, "end": 13, "type": "city.destination"}]},
      {"text": "hi", "intent": "greet", "score": 0.4, "slots": []},
      {"text": "play Bach", "intent": "book", "score": 0.5,
       "slots": [{"start": 5, "end": 9, "type": "artist"}]},
  ]
  assert rasa_files.markup("play Bach", [(5, 9, "artist")]) == (
      "play [Bach](artist)")
  path = _write(tmp_path / "label_next.yml",
                rasa_files.answers_to_yaml(records))
  found = rasa_files.read_rasa(path)
  assert [(e.text, e.spans, e.intent) for e in found] == [
      ("fly to Berlin now", [(7, 13, "city.destination")], "book"),
      ("play Bach", [(5, 9, "artist")], "book"),
      ("hi", [], "greet")]
  assert "score: 0.3100" in open(path).read()
  classified = _write(tmp_path / "c.yml", rasa_files.answers_to_yaml(
      [{"text": 'say "hi"', "label": "greet", "score": 0.2}]))
  assert [(e.text, e.intent) for e in rasa_files.read_rasa(classified)] == [
      ('say "hi"', "greet")]


def test_a_rasa_projects_data_folder_splits_as_one_source(tmp_path):
  """As Rasa reads `data/`: every file with a key `nlu`, sub-folders too."""
  data = tmp_path / "data"
  lines = lambda intent: [f"    - {intent} [x{i}](thing)" for i in range(10)]
  _write(data / "nlu" / "a.yml", "\n".join(
      ["nlu:", "- intent: a", "  examples: |"] + lines("a")) + "\n")
  _write(data / "nlu" / "b.yaml", "\n".join(
      ["nlu:", "- intent: b", "  examples: |"] + lines("b")) + "\n")
  _write(data / "nlu" / "lookups" / "things.yml",
         "nlu:\n- lookup: thing\n  examples: |\n    - y\n")
  _write(data / "stories.yml", "stories:\n- story: s\n  steps: []\n")
  _write(data / "rules.yml", "rules: [\n")  # Not YAML: not an NLU file.
  assert [os.path.relpath(p, data) for p in rasa_files.nlu_files(str(data))] \
      == ["nlu/a.yml", "nlu/b.yaml", "nlu/lookups/things.yml"]
  with pytest.raises(errors.DataError,
                     match=r"It holds Rasa NLU files \(nlu/a.yml, nlu/b.yaml, "
                     r"nlu/lookups/things.yml\): `mixvocab-split-data"):
    layout.find_dataset(str(data))  # DATA_DIR=data: split it first.
  summary = splitting.split_dataset(str(data), str(tmp_path / "out"),
                                    validation_fraction=0.2)
  assert summary["examples"] == {"train": 16, "validation": 4}
  assert summary["lookup_tables"] == ["thing"]
  dataset = user_dataset.load_dataset(str(tmp_path / "out"))
  assert dataset.kind == examples_lib.INTENT_SLOT
  assert sorted(set(dataset.splits["train"].intents)) == ["a", "b"]


def test_parse_result_is_rasas_shape():
  record = {"text": "fly to Oslo", "intent": "book", "score": 0.9,
            "top_k": [{"label": "book", "score": 0.9},
                      {"label": "greet", "score": 0.1}],
            "slots": [{"type": "city.to", "text": "Oslo", "start": 7,
                       "end": 11, "start_word": 2, "end_word": 3,
                       "score": 0.8}]}
  assert rasa_files.parse_result(record) == {
      "text": "fly to Oslo", "intent": {"name": "book", "confidence": 0.9},
      "entities": [{"entity": "city", "role": "to", "start": 7, "end": 11,
                    "value": "Oslo", "extractor": "mixvocab_tf",
                    "confidence_entity": 0.8, "confidence_role": 0.8}],
      "intent_ranking": [{"name": "book", "confidence": 0.9},
                         {"name": "greet", "confidence": 0.1}]}
  assert rasa_files.parse_result(
      {"text": "hi", "label": "greet", "score": 0.7, "top_k": []})[
          "intent"] == {"name": "greet", "confidence": 0.7}
  with pytest.raises(ValueError, match="one text"):
    rasa_files.parse_result({"text_a": "a", "text_b": "b", "label": "x",
                             "score": 1.0})


def test_synonyms_map_values_as_rasa_does(tmp_path):
  path = _write(tmp_path / "nlu.yml", _NLU.replace(
      "stories:", "- synonym: Oslo\n  examples: |\n    - OSL\nstories:"))
  synonyms = rasa_files.read_synonyms([path])
  # `[New York](city:NYC)`, then the synonym item 'New York City' naming
  # 'New York': the last one read maps it.
  assert synonyms == {"new york": "New York City", "osl": "Oslo"}
  assert rasa_files.read_synonyms([_write(
      tmp_path / "a.yml", "nlu:\n- intent: a\n  examples: |\n"
      '    - [LA]{"entity": "city", "value": "Los Angeles"} [x](y:x)\n')]) \
      == {"la": "Los Angeles"}
  record = {"text": "to osl", "intent": "book", "score": 0.5, "top_k": [],
            "slots": [{"type": "city", "text": "osl", "start": 3, "end": 6}]}
  assert rasa_files.parse_result(record, synonyms)["entities"][0][
      "value"] == "Oslo"
  assert rasa_files.parse_result(record)["entities"][0]["value"] == "osl"
  # A slot without a score (a record of an export without slot logits):
  # no confidence, and no role's.
  assert "confidence_entity" not in rasa_files.parse_result(record)[
      "entities"][0]
