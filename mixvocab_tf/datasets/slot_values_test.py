"""Tests of the lists of slot values."""

import os

import pytest

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import slot_values


def _lists(directory, **files):
  directory.mkdir()
  for name, text in files.items():
    (directory / name).write_bytes(text.encode("utf-8") if isinstance(
        text, str) else text)
  return str(directory)


def test_reads_each_list_as_word_tuples_once_each(tmp_path):
  path = _lists(tmp_path / "v", **{
      "artist.txt": "Madonna\n\n  john   coltrane \nMadonna\n",
      "city.txt": "paris\r\nnew york\r\n", ".DS_Store": b"\x00\x01"})
  values = slot_values.read_slot_values(path, {"artist", "city", "genre"})
  assert values == {"artist": [("Madonna",), ("john", "coltrane")],
                    "city": [("paris",), ("new", "york")]}
  assert slot_values.slot_types([["O", "B-artist", "I-artist"],
                                 ["B-city"]]) == {"artist", "city"}


def test_fingerprint_follows_the_values(tmp_path):
  one = {"artist": [("madonna",)]}
  assert slot_values.fingerprint(one) == slot_values.fingerprint(
      {"artist": [("madonna",)]})
  assert slot_values.fingerprint(one) != slot_values.fingerprint(
      {"artist": [("madonna",), ("prince",)]})
  assert slot_values.fingerprint(one) != slot_values.fingerprint(
      {"album": [("madonna",)]})


@pytest.mark.parametrize("files, message", [
    ({"artist.txt": "madonna\n", "notes.md": "x"},
     r"notes.md: the file is not a .txt list.*Rename it <slot type>.txt"),
    ({"singer.txt": "madonna\n"},
     r"singer.txt: train's tags have no slot type 'singer'. Expected one of "
     r"train's slot types: artist, city"),
    ({"artist.txt": "\n  \n"}, r"artist.txt: .*one slot value per line"),
    ({"artist.txt": "caf\xe9\n".encode("latin-1")},
     r"artist.txt, line 1: .*not valid UTF-8"),
    ({}, r"the directory holds no list"),
])
def test_bad_lists_name_the_file_and_the_fix(tmp_path, files, message):
  path = _lists(tmp_path / "v", **files)
  with pytest.raises(errors.DataError, match=message):
    slot_values.read_slot_values(path, {"artist", "city"})


def test_a_missing_directory_or_a_file_is_refused(tmp_path):
  with pytest.raises(errors.DataError, match="the directory does not exist"):
    slot_values.read_slot_values(str(tmp_path / "none"))
  (tmp_path / "artist.txt").write_text("madonna\n")
  with pytest.raises(errors.DataError, match="it is a file. Expected a "
                     "directory of .txt files"):
    slot_values.read_slot_values(os.path.join(tmp_path, "artist.txt"))


def test_the_example_lists_serve_the_example_dataset():
  root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
  train = intent_slot_files.read_intent_slot(
      os.path.join(root, "intent_slot", "train"))
  types = slot_values.slot_types(train.tags)
  values = slot_values.read_slot_values(os.path.join(root, "slot_values"),
                                        types)
  assert set(values) == types
  assert sum(len(v) for v in values.values()) > 10_000
