"""Tests of intent_slot_files: the Goo et al. layout and JSONL, checked."""

import os

import pytest

from mixvocab_tf.datasets import intent_slot_files
from mixvocab_testing.datasets_testing import (
    GOO_TRAIN, GOOD_QUERY, raises, write, write_goo, write_jsonl)


# -----------------------------------------------------------------------------
# read_intent_slot.
# -----------------------------------------------------------------------------


def test_read_goo_split(tmp_path):
  directory = write_goo(tmp_path / "train", **GOO_TRAIN)
  split = intent_slot_files.read_intent_slot(directory)
  assert split.words == [["play", "jazz"], ["book", "a", "table"],
                         ["play", "some", "rock"]]
  assert split.tags[2] == ["O", "O", "B-genre"]
  assert split.intents == ["PlayMusic", "BookRestaurant", "PlayMusic"]
  assert split.line_numbers == [1, 2, 3]


def test_read_goo_crlf_and_trailing_blank_lines(tmp_path):
  directory = tmp_path / "train"
  write(directory / "seq.in", "play jazz\r\nstop\r\n\r\n")
  write(directory / "seq.out", "O B-genre\r\nO\r\n")
  write(directory / "label", "PlayMusic\r\nStop")  # No final newline.
  split = intent_slot_files.read_intent_slot(str(directory))
  assert split.intents == ["PlayMusic", "Stop"]
  assert split.tags == [["O", "B-genre"], ["O"]]


def test_read_goo_test_split_without_labels(tmp_path):
  directory = write_goo(tmp_path / "test", ["play jazz", "stop"])
  split = intent_slot_files.read_intent_slot(str(directory),
                                             require_labels=False)
  assert split.words == [["play", "jazz"], ["stop"]]
  assert split.tags is None and split.intents is None


def test_goo_missing_file(tmp_path):
  directory = write_goo(tmp_path / "train", ["play jazz"], ["O B-genre"])
  error = raises("has no label; it holds seq.in, seq.out",
                 intent_slot_files.read_intent_slot, directory)
  assert error.line is None


def test_goo_tag_count_names_both_files_and_the_line(tmp_path):
  directory = write_goo(tmp_path / "train", ["play jazz", "play some rock"],
                        ["O B-genre", "O B-genre"], ["A", "A"])
  error = raises("there are 2 slot tags", intent_slot_files.read_intent_slot,
                 directory)
  message = str(error)
  assert message.startswith(os.path.join(directory, "seq.out") + ", line 2:")
  assert os.path.join(directory, "seq.in") + ", line 2, has 3 words" in message


def test_goo_files_with_different_line_counts(tmp_path):
  directory = write_goo(tmp_path / "train", ["play jazz", "stop", "go"],
                        ["O B-genre", "O"], ["A", "B", "C"])
  error = raises("seq.in has 3, seq.out has 2, label has 3",
                 intent_slot_files.read_intent_slot, directory)
  assert error.path == directory


@pytest.mark.parametrize("tag", ["B-", "X-city", "b-city", "city"])
def test_goo_tag_not_iob(tmp_path, tag):
  directory = write_goo(tmp_path / "train", ["in paris"], [f"O {tag}"],
                        ["Go"])
  raises(f"seq.out, line 1: slot tag 2 is '{tag}', which is not an IOB tag",
         intent_slot_files.read_intent_slot, directory)


def test_iob1_span_starts_are_read_as_b_and_counted(tmp_path):
  # IOB1 (CoNLL-2003): a span starts with I- unless it follows a span of
  # its own type. Read as IOB2, the task's decoding, with the same spans.
  directory = write_goo(
      tmp_path / "train",
      ["fly to new york", "from paris to nice", "play jazz"],
      ["O O I-city I-city", "O B-city O I-city", "O B-genre"],
      ["Fly", "Fly", "Play"])
  split = intent_slot_files.read_intent_slot(directory)
  assert split.tags == [["O", "O", "B-city", "I-city"],
                        ["O", "B-city", "O", "B-city"],
                        ["O", "B-genre"]]
  assert split.iob_repairs == 2
  assert split.first_iob_repair == (
      f"{os.path.join(directory, 'seq.out')}, line 1: slot tag 3 'I-city' "
      "follows 'O'")
  # An I- after a word of another type, or first in the query; JSONL too.
  path = write_jsonl(tmp_path / "valid.jsonl", [
      GOOD_QUERY,
      {"tokens": ["paris", "texas"], "tags": ["I-city", "I-state"],
       "intent": "Go"}])
  split = intent_slot_files.read_intent_slot(path)
  assert split.tags[1] == ["B-city", "B-state"]
  assert split.iob_repairs == 2
  assert split.first_iob_repair == (
      f"{path}, line 2: slot tag 1 'I-city' starts the query")
  # IOB2 data is read as it is, with nothing counted.
  split = intent_slot_files.read_intent_slot(
      write_goo(tmp_path / "iob2", **GOO_TRAIN))
  assert split.tags == [t.split() for t in GOO_TRAIN["seq_out"]]
  assert (split.iob_repairs, split.first_iob_repair) == (0, None)


@pytest.mark.parametrize("intent, match", [
    ("", "which is empty"), ("Play Music", "which holds whitespace")])
def test_goo_intent_empty_or_with_whitespace(tmp_path, intent, match):
  directory = write_goo(tmp_path / "train", ["play", "stop"], ["O", "O"],
                        ["Play", intent])
  raises(f"label, line 2: the intent is '{intent}', {match}",
         intent_slot_files.read_intent_slot, directory)


def test_goo_empty_query(tmp_path):
  directory = write_goo(tmp_path / "train", ["play", " "], ["O", ""],
                        ["A", "B"])
  raises("seq.in, line 2: the query is empty",
         intent_slot_files.read_intent_slot, directory)


def test_read_intent_slot_jsonl(tmp_path):
  path = write(tmp_path / "train.jsonl",
               '{"tokens": ["play", "jazz"], "tags": ["O", "B-genre"], '
               '"intent": "PlayMusic"}\r\n\r\n'
               '{"tokens": ["stop"], "tags": ["O"], "intent": "Stop"}\r\n')
  split = intent_slot_files.read_intent_slot(path)
  assert split.words == [["play", "jazz"], ["stop"]]
  assert split.tags == [["O", "B-genre"], ["O"]]
  assert split.intents == ["PlayMusic", "Stop"]
  assert split.line_numbers == [1, 3]


def test_read_intent_slot_jsonl_test_split_without_labels(tmp_path):
  path = write_jsonl(tmp_path / "test.jsonl",
                     [{"tokens": ["play"]}, {"tokens": ["stop"]}])
  split = intent_slot_files.read_intent_slot(path, require_labels=False)
  assert split.tags is None and split.intents is None


@pytest.mark.parametrize("change, match", [
    ({"tags": ["O"]}, "there is 1 slot tag .* but 'tokens' has 2 words"),
    ({"tags": ["O", "CITY"]}, "slot tag 2 is 'CITY', which is not an IOB"),
    ({"tokens": "in paris"}, "'tokens' is a JSON string"),
    ({"tokens": ["in", 3]}, "'tokens' holds a JSON number 3"),
    ({"tags": ["O", None]}, "'tags' holds a JSON null"),
    ({"tokens": []}, "'tokens' is empty"),
    ({"tokens": ["in", "new york"], "tags": ["O", "B-city"]},
     "token 2 is 'new york', which is several words"),
    ({"intent": "go there"}, "the intent is 'go there', which holds "
     "whitespace"),
    ({"intent": None}, "'intent' is null"),
])
def test_bad_intent_slot_jsonl_lines(tmp_path, change, match):
  path = write_jsonl(tmp_path / "train.jsonl",
                     [GOOD_QUERY, dict(GOOD_QUERY, **change)])
  raises("line 2: " + match, intent_slot_files.read_intent_slot, path)


def test_intent_slot_jsonl_missing_key(tmp_path):
  bad = {k: v for k, v in GOOD_QUERY.items() if k != "tags"}
  path = write_jsonl(tmp_path / "train.jsonl", [GOOD_QUERY, bad])
  raises(r"line 2: the object has no key 'tags'; its keys are "
         r"\['tokens', 'intent'\]", intent_slot_files.read_intent_slot, path)
