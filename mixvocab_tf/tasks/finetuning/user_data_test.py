"""Tests for user_data: finding, reading and checking users' datasets."""

import json
import os
import shutil

import pytest
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.tasks.finetuning import user_data
from mixvocab_tf.tasks.finetuning.user_data import DataError

SNIPS_DIR = testing_utils.shared_data("snips")
SST2_DIR = testing_utils.shared_data("glue", "SST-2")


def _write(path, content):
  """Writes str (as UTF-8, newlines as given) or bytes to `path`."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  data = content.encode("utf-8") if isinstance(content, str) else content
  with open(path, "wb") as f:
    f.write(data)
  return str(path)


def _write_jsonl(path, objects):
  return _write(path, "".join(json.dumps(o) + "\n" for o in objects))


def _write_goo(directory, seq_in, seq_out=None, label=None):
  """Writes a Goo et al. split directory; None leaves a file out."""
  files = {"seq.in": seq_in, "seq.out": seq_out, "label": label}
  for name, lines in files.items():
    if lines is not None:
      _write(os.path.join(directory, name), "".join(l + "\n" for l in lines))
  return str(directory)


def _raises(match, function, *args, **kwargs):
  """Calls `function`, expects a one-paragraph DataError; returns it."""
  with pytest.raises(DataError, match=match) as info:
    function(*args, **kwargs)
  assert "\n" not in str(info.value)
  return info.value


_CSV = "text,label\ngood film,pos\nbad film,neg\n"
_GOO_TRAIN = dict(
    seq_in=["play jazz", "book a table", "play  some rock"],
    seq_out=["O B-genre", "O O O", "O O B-genre"],
    label=["PlayMusic", "BookRestaurant", "PlayMusic"])

# -----------------------------------------------------------------------------
# find_dataset.
# -----------------------------------------------------------------------------


def test_find_dataset_csv_with_test(tmp_path):
  for split in ("train", "validation", "test"):
    _write(tmp_path / f"{split}.csv", _CSV)
  found = user_data.find_dataset(str(tmp_path))
  assert found.kind == user_data.TEXT_CLASSIFICATION
  assert found.format == "csv"
  assert found.files == {s: str(tmp_path / f"{s}.csv")
                         for s in user_data.SPLITS}


def test_dataset_on_another_file_system_reads_through_gfile():
  # ram:// is TensorFlow's in-memory file system: only tf.io.gfile sees it,
  # as only it sees gs://.
  root = "ram://user_data_test/csv"
  tf.io.gfile.makedirs(os.path.join(root, "dev"))  # not a split file
  for split in ("train", "dev"):
    with tf.io.gfile.GFile(os.path.join(root, f"{split}.csv"), "w") as f:
      f.write(_CSV)
  dataset = user_data.load_dataset(root)
  assert dataset.kind == user_data.TEXT_CLASSIFICATION
  assert dataset.splits["validation"].texts_a == ["good film", "bad film"]
  goo = "ram://user_data_test/goo"
  for split in ("train", "valid"):
    tf.io.gfile.makedirs(os.path.join(goo, split))
    for name, lines in (("seq.in", _GOO_TRAIN["seq_in"]),
                        ("seq.out", _GOO_TRAIN["seq_out"]),
                        ("label", _GOO_TRAIN["label"])):
      with tf.io.gfile.GFile(os.path.join(goo, split, name), "w") as f:
        f.write("".join(l + "\n" for l in lines))
  assert user_data.load_dataset(goo).kind == user_data.INTENT_SLOT
  _raises("does not exist", user_data.load_dataset, "ram://user_data_test/no")


def test_find_dataset_goo_layout_with_dev(tmp_path):
  _write_goo(tmp_path / "train", **_GOO_TRAIN)
  _write_goo(tmp_path / "dev", **_GOO_TRAIN)
  (tmp_path / "notes").mkdir()  # Not a split: ignored.
  found = user_data.find_dataset(str(tmp_path))
  assert (found.kind, found.format) == (user_data.INTENT_SLOT, "goo")
  assert found.files == {"train": str(tmp_path / "train"),
                         "validation": str(tmp_path / "dev")}


@pytest.mark.parametrize("first, kind", [
    ({"tokens": ["hi"], "tags": ["O"], "intent": "Greet"},
     user_data.INTENT_SLOT),
    ({"text": "hi", "label": 1}, user_data.TEXT_CLASSIFICATION),
    # 'intent' as a label column is text classification.
    ({"text": "hi", "intent": "Greet"}, user_data.TEXT_CLASSIFICATION),
])
def test_find_dataset_jsonl_kind_from_the_first_line(tmp_path, first, kind):
  _write_jsonl(tmp_path / "train.jsonl", [first])
  _write_jsonl(tmp_path / "valid.jsonl", [first])
  assert user_data.find_dataset(str(tmp_path)).kind == kind


def test_find_dataset_missing_directory(tmp_path):
  error = _raises("does not exist", user_data.find_dataset,
                  str(tmp_path / "nope"))
  assert error.path == str(tmp_path / "nope")


def test_find_dataset_no_train(tmp_path):
  _write(tmp_path / "training.csv", _CSV)
  _write(tmp_path / "dev.csv", _CSV)
  error = _raises("no train split", user_data.find_dataset, str(tmp_path))
  assert "training.csv" in str(error)  # Listed, with a hint to rename it.
  assert "rename training.csv to train.csv" in str(error).lower()


def test_find_dataset_no_validation_names_accepted_names_and_contents(
    tmp_path):
  _write(tmp_path / "train.csv", _CSV)
  _write(tmp_path / "val.csv", _CSV)
  _write(tmp_path / "README.md", "hello")
  error = str(_raises("no validation split", user_data.find_dataset,
                      str(tmp_path)))
  for name in ("'validation'", "'dev'", "'valid'", ".csv", ".tsv", ".jsonl",
               "README.md, train.csv, val.csv", "validation.csv"):
    assert name in error


def test_find_dataset_two_candidates_for_a_split(tmp_path):
  for name in ("train.csv", "dev.csv", "valid.csv"):
    _write(tmp_path / name, _CSV)
  error = _raises("2 candidates for the validation split",
                  user_data.find_dataset, str(tmp_path))
  assert "dev.csv, valid.csv" in str(error)


def test_find_dataset_mixed_formats(tmp_path):
  _write(tmp_path / "train.csv", _CSV)
  _write(tmp_path / "dev.tsv", "text\tlabel\na\tb\n")
  _raises("different formats: train.csv, dev.tsv", user_data.find_dataset,
          str(tmp_path))


# -----------------------------------------------------------------------------
# read_text_classification: reading.
# -----------------------------------------------------------------------------


def test_read_csv_quoted_fields_line_numbers_crlf_and_blank_lines(tmp_path):
  path = _write(
      tmp_path / "train.csv",
      'text,label\r\n'
      '"a film, long",pos\r\n'
      '\r\n'
      '"two\r\nlines, ""quoted""",neg\r\n'
      '   \r\n'
      'last,pos\r\n')
  split = user_data.read_text_classification(path)
  assert split.texts_a == ["a film, long", 'two\nlines, "quoted"', "last"]
  assert split.texts_b is None
  assert split.labels == ["pos", "neg", "pos"]
  assert split.line_numbers == [2, 4, 7]


def test_read_pair_csv(tmp_path):
  path = _write(tmp_path / "train.csv",
                "text_a,text_b,label\nA man sleeps.,A man rests.,yes\n"
                "It rains.,It is sunny., no \n")
  split = user_data.read_text_classification(path)
  assert split.texts_a == ["A man sleeps.", "It rains."]
  assert split.texts_b == ["A man rests.", "It is sunny."]
  assert split.labels == ["yes", "no"]  # Labels are stripped.


def test_read_tsv_keeps_quotes(tmp_path):
  path = _write(tmp_path / "dev.tsv",
                'sentence\tlabel\n"it\'s" a "film\t1\n')
  split = user_data.read_text_classification(path, text_column="sentence")
  assert split.texts_a == ['"it\'s" a "film']
  assert split.labels == ["1"]


def test_read_csv_column_overrides(tmp_path):
  path = _write(tmp_path / "train.csv",
                "id,premise,hypothesis,gold\n1,p1,h1,e\n2,p2,h2,c\n")
  split = user_data.read_text_classification(
      path, text_column="premise", text_b_column="hypothesis",
      label_column="gold")
  assert (split.texts_a, split.texts_b, split.labels) == (
      ["p1", "p2"], ["h1", "h2"], ["e", "c"])


def test_read_jsonl_labels_numbers_and_booleans(tmp_path):
  path = _write_jsonl(tmp_path / "train.jsonl", [
      {"text": "a", "label": 0}, {"text": "b", "label": 1.0},
      {"text": "c", "label": True}, {"text": "d", "label": " neg "}])
  split = user_data.read_text_classification(path)
  assert split.labels == ["0", "1", "true", "neg"]
  assert split.line_numbers == [1, 2, 3, 4]


def test_read_jsonl_blank_lines_and_crlf(tmp_path):
  path = _write(tmp_path / "train.jsonl",
                '{"text": "a", "label": "x"}\r\n\r\n'
                '{"text": "b", "label": "y"}\r\n')
  split = user_data.read_text_classification(path)
  assert split.texts_a == ["a", "b"]
  assert split.line_numbers == [1, 3]


@pytest.mark.parametrize("name, content", [
    ("test.csv", "text\nfirst\nsecond\n"),
    ("test.csv", "text,label\nfirst,\nsecond,\n"),
    ("test.jsonl", '{"text": "first"}\n{"text": "second", "label": null}\n'),
])
def test_read_test_split_without_labels(tmp_path, name, content):
  path = _write(tmp_path / name, content)
  split = user_data.read_text_classification(path, require_labels=False)
  assert split.texts_a == ["first", "second"]
  assert split.labels is None


def test_read_test_split_with_some_labels_refused(tmp_path):
  path = _write(tmp_path / "test.csv", "text,label\nfirst,a\nsecond,\n")
  error = _raises("line 3: the example has no label 'label', but the one on "
                  "line 2 has one", user_data.read_text_classification,
                  path, require_labels=False)
  assert error.line == 3


# -----------------------------------------------------------------------------
# read_text_classification: errors.
# -----------------------------------------------------------------------------


def test_missing_column_lists_the_columns_found(tmp_path):
  path = _write(tmp_path / "train.csv", "sentence,label\na,b\n")
  error = _raises(r"line 1: there is no column 'text'; the columns are "
                  r"\['sentence', 'label'\]",
                  user_data.read_text_classification, path)
  assert "'text_a' and 'text_b'" in str(error)
  assert "text_column" in str(error)


def test_missing_label_column(tmp_path):
  path = _write(tmp_path / "train.tsv", "text\tgold\na\tb\n")
  _raises(r"no column 'label'; the columns are \['text', 'gold'\]",
          user_data.read_text_classification, path)


def test_missing_key_in_a_later_jsonl_line(tmp_path):
  path = _write_jsonl(tmp_path / "train.jsonl", [
      {"text": "a", "label": "x"}, {"txt": "b", "label": "y"}])
  _raises(r"line 2: the object has no key 'text'; its keys are "
          r"\['txt', 'label'\]", user_data.read_text_classification, path)


@pytest.mark.parametrize("name, content, line, fields", [
    ("train.csv", "text,label\na,x\nb, c,y\n", 3, 3),
    ("train.tsv", "text\tlabel\na\tx\nb\n", 3, 1),
])
def test_row_with_wrong_number_of_fields(tmp_path, name, content, line,
                                         fields):
  path = _write(tmp_path / name, content)
  error = _raises(f"line {line}: the row has {fields} fields",
                  user_data.read_text_classification, path)
  assert "2 fields, one per column of the header ['text', 'label']" in str(
      error)


def test_unbalanced_quote_in_csv(tmp_path):
  path = _write(tmp_path / "train.csv",
                'text,label\na,x\n"oops,y\nc,z\n')
  _raises("line 3: the CSV record starting here",
          user_data.read_text_classification, path)


@pytest.mark.parametrize("content, line, match", [
    ("text,label\ngood,pos\n  ,neg\n", 3, "the text 'text' is empty"),
    ("text,label\ngood,pos\nbad, \n", 3, "the label 'label' is empty"),
    ("text_a,text_b,label\na,b,x\nc,,y\n", 3, "the text 'text_b' is empty"),
])
def test_empty_text_or_label(tmp_path, content, line, match):
  path = _write(tmp_path / "train.csv", content)
  error = _raises(f"line {line}: {match}",
                  user_data.read_text_classification, path)
  assert error.line == line


def test_invalid_utf8_reports_line_and_byte_offset(tmp_path):
  data = "text,label\ngood,pos\ncaf".encode() + b"\xe9,neg\n"
  path = _write(tmp_path / "train.csv", data)
  error = _raises(r"line 3: byte offset 23 of the file \(byte 3 of the line",
                  user_data.read_text_classification, path)
  assert "not valid UTF-8" in str(error)
  assert "iconv" in str(error)


def test_byte_order_mark_refused(tmp_path):
  path = _write(tmp_path / "train.csv", b"\xef\xbb\xbf" + _CSV.encode())
  error = _raises(r"starts with a UTF-8 byte-order mark \(as Excel writes\); "
                  "save it as UTF-8 without BOM",
                  user_data.read_text_classification, path)
  assert error.line == 1


def test_byte_order_mark_and_empty_text_allowed_when_asked(tmp_path):
  # For files others publish (GLUE's TSV files); a user's file is refused.
  path = _write(tmp_path / "train.tsv",
                b"\xef\xbb\xbftext\tlabel\r\na\tx\r\n \ty\r\n")
  split = user_data.read_text_classification(path, allow_bom=True,
                                             allow_empty_text=True)
  assert (split.texts_a, split.labels) == (["a", " "], ["x", "y"])
  _raises("line 3: the text 'text' is empty",
          user_data.read_text_classification, path, allow_bom=True)
  _raises("byte-order mark", user_data.read_text_classification, path,
          allow_empty_text=True)
  path = _write(tmp_path / "train.jsonl",
                b'\xef\xbb\xbf{"text": "a", "label": 1}\n')
  assert user_data.read_text_classification(
      path, allow_bom=True).labels == ["1"]
  # A byte offset still counts the mark: it is the file's.
  path = _write(tmp_path / "bad.csv", b"\xef\xbb\xbftext,label\ncaf\xe9,x\n")
  _raises(r"line 2: byte offset 17 of the file",
          user_data.read_text_classification, path, allow_bom=True)


@pytest.mark.parametrize("name, content, line", [
    ("train.csv", _CSV + "text,label\nfine,neg\n", 4),
    ("train.tsv", "text\tlabel\na\tx\n text \tlabel\nb\ty\n", 3),
])
def test_duplicated_header(tmp_path, name, content, line):
  path = _write(tmp_path / name, content)
  _raises(f"line {line}: the row repeats the header \\['text', 'label'\\]",
          user_data.read_text_classification, path)


@pytest.mark.parametrize("line, match", [
    ('{"text": "a", "label": "x"', "the line is not valid JSON"),
    ('["a", "x"]', "the line holds a JSON array, not an object"),
    ('{"text": ["a"], "label": "x"}', "'text' is a JSON array"),
    ('{"text": "a", "label": 0.5}', "'label' is the number 0.5"),
    ('{"text": "a", "label": {"y": 1}}', "'label' is a JSON object"),
    ('{"text": "a"}', "the object has no key 'label'"),
])
def test_bad_jsonl_lines(tmp_path, line, match):
  path = _write(tmp_path / "train.jsonl",
                '{"text": "ok", "label": "x"}\n\n' + line + "\n")
  error = _raises("line 3: " + match, user_data.read_text_classification,
                  path)
  assert error.line == 3


@pytest.mark.parametrize("name, content, match", [
    ("train.csv", "", "the file is empty"),
    ("train.jsonl", "\n  \n", "the file is empty"),
    ("train.csv", "text,label\n\n", "has a header .* but no examples"),
])
def test_empty_file_or_split(tmp_path, name, content, match):
  path = _write(tmp_path / name, content)
  _raises(match, user_data.read_text_classification, path)


def test_unknown_extension(tmp_path):
  path = _write(tmp_path / "train.txt", _CSV)
  _raises(r"'train.txt' does not end in a known extension",
          user_data.read_text_classification, path)


# -----------------------------------------------------------------------------
# read_intent_slot.
# -----------------------------------------------------------------------------


def test_read_goo_split(tmp_path):
  directory = _write_goo(tmp_path / "train", **_GOO_TRAIN)
  split = user_data.read_intent_slot(directory)
  assert split.words == [["play", "jazz"], ["book", "a", "table"],
                         ["play", "some", "rock"]]
  assert split.tags[2] == ["O", "O", "B-genre"]
  assert split.intents == ["PlayMusic", "BookRestaurant", "PlayMusic"]
  assert split.line_numbers == [1, 2, 3]


def test_read_goo_crlf_and_trailing_blank_lines(tmp_path):
  directory = tmp_path / "train"
  _write(directory / "seq.in", "play jazz\r\nstop\r\n\r\n")
  _write(directory / "seq.out", "O B-genre\r\nO\r\n")
  _write(directory / "label", "PlayMusic\r\nStop")  # No final newline.
  split = user_data.read_intent_slot(str(directory))
  assert split.intents == ["PlayMusic", "Stop"]
  assert split.tags == [["O", "B-genre"], ["O"]]


def test_read_goo_test_split_without_labels(tmp_path):
  directory = _write_goo(tmp_path / "test", ["play jazz", "stop"])
  split = user_data.read_intent_slot(str(directory), require_labels=False)
  assert split.words == [["play", "jazz"], ["stop"]]
  assert split.tags is None and split.intents is None


def test_goo_missing_file(tmp_path):
  directory = _write_goo(tmp_path / "train", ["play jazz"], ["O B-genre"])
  error = _raises("has no label; it holds seq.in, seq.out",
                  user_data.read_intent_slot, directory)
  assert error.line is None


def test_goo_tag_count_names_both_files_and_the_line(tmp_path):
  directory = _write_goo(tmp_path / "train", ["play jazz", "play some rock"],
                         ["O B-genre", "O B-genre"], ["A", "A"])
  error = _raises("there are 2 slot tags", user_data.read_intent_slot,
                  directory)
  message = str(error)
  assert message.startswith(os.path.join(directory, "seq.out") + ", line 2:")
  assert os.path.join(directory, "seq.in") + ", line 2, has 3 words" in message


def test_goo_files_with_different_line_counts(tmp_path):
  directory = _write_goo(tmp_path / "train", ["play jazz", "stop", "go"],
                         ["O B-genre", "O"], ["A", "B", "C"])
  error = _raises("seq.in has 3, seq.out has 2, label has 3",
                  user_data.read_intent_slot, directory)
  assert error.path == directory


@pytest.mark.parametrize("tag", ["B-", "X-city", "b-city", "city"])
def test_goo_tag_not_iob(tmp_path, tag):
  directory = _write_goo(tmp_path / "train", ["in paris"], [f"O {tag}"],
                         ["Go"])
  _raises(f"seq.out, line 1: slot tag 2 is '{tag}', which is not an IOB tag",
          user_data.read_intent_slot, directory)


@pytest.mark.parametrize("intent, match", [
    ("", "which is empty"), ("Play Music", "which holds whitespace")])
def test_goo_intent_empty_or_with_whitespace(tmp_path, intent, match):
  directory = _write_goo(tmp_path / "train", ["play", "stop"], ["O", "O"],
                         ["Play", intent])
  _raises(f"label, line 2: the intent is '{intent}', {match}",
          user_data.read_intent_slot, directory)


def test_goo_empty_query(tmp_path):
  directory = _write_goo(tmp_path / "train", ["play", " "], ["O", ""],
                         ["A", "B"])
  _raises("seq.in, line 2: the query is empty", user_data.read_intent_slot,
          directory)


def test_read_intent_slot_jsonl(tmp_path):
  path = _write(tmp_path / "train.jsonl",
                '{"tokens": ["play", "jazz"], "tags": ["O", "B-genre"], '
                '"intent": "PlayMusic"}\r\n\r\n'
                '{"tokens": ["stop"], "tags": ["O"], "intent": "Stop"}\r\n')
  split = user_data.read_intent_slot(path)
  assert split.words == [["play", "jazz"], ["stop"]]
  assert split.tags == [["O", "B-genre"], ["O"]]
  assert split.intents == ["PlayMusic", "Stop"]
  assert split.line_numbers == [1, 3]


def test_read_intent_slot_jsonl_test_split_without_labels(tmp_path):
  path = _write_jsonl(tmp_path / "test.jsonl",
                      [{"tokens": ["play"]}, {"tokens": ["stop"]}])
  split = user_data.read_intent_slot(path, require_labels=False)
  assert split.tags is None and split.intents is None


_GOOD = {"tokens": ["in", "paris"], "tags": ["O", "B-city"], "intent": "Go"}


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
  path = _write_jsonl(tmp_path / "train.jsonl",
                      [_GOOD, dict(_GOOD, **change)])
  _raises("line 2: " + match, user_data.read_intent_slot, path)


def test_intent_slot_jsonl_missing_key(tmp_path):
  bad = {k: v for k, v in _GOOD.items() if k != "tags"}
  path = _write_jsonl(tmp_path / "train.jsonl", [_GOOD, bad])
  _raises(r"line 2: the object has no key 'tags'; its keys are "
          r"\['tokens', 'intent'\]", user_data.read_intent_slot, path)


# -----------------------------------------------------------------------------
# load_dataset.
# -----------------------------------------------------------------------------


def test_load_dataset_snips_like_with_unseen_intent_and_tag(tmp_path):
  _write_goo(tmp_path / "train", **_GOO_TRAIN)
  _write_goo(tmp_path / "valid",
             ["play jazz", "rate this book", "book at noon", "book at nine"],
             ["O B-genre", "O O B-object", "O O B-time", "O O B-time"],
             ["PlayMusic", "RateBook", "BookRestaurant", "RateBook"])
  _write_goo(tmp_path / "test", ["play pop"])  # Queries only.
  dataset = user_data.load_dataset(str(tmp_path))
  assert dataset.labels == ["BookRestaurant", "PlayMusic"]
  assert dataset.slot_tags == ["O", "B-genre"]
  assert dataset.unseen == {
      "validation": {"labels": {"RateBook": 2},
                     "slot_tags": {"B-time": 2, "B-object": 1}},
      "test": {"labels": {}, "slot_tags": {}},
  }
  warning = dataset.warning()
  assert "\n" not in warning
  assert "counted as errors" in warning
  for part in ("intent 'RateBook' (2 examples)", "slot tag 'B-time' (2 words)",
               "slot tag 'B-object' (1 word)", "validation ("):
    assert part in warning
  summary = dataset.summary()
  assert json.loads(json.dumps(summary)) == summary
  assert summary["examples"] == {"train": 3, "validation": 4, "test": 1}
  assert summary["labeled"] == {"train": True, "validation": True,
                                "test": False}
  assert (summary["num_labels"], summary["num_slot_tags"]) == (2, 2)
  assert summary["unseen"]["validation"]["labels"] == {"RateBook": 2}


def test_warning_counts_the_cost_and_lists_the_most_frequent(tmp_path):
  _write(tmp_path / "train.csv", "text,label\na,x\nb,y\n")
  rows = [f"q{i},new{i % 15}" for i in range(30)] + ["c,x"] * 10
  _write(tmp_path / "validation.csv", "text,label\n" + "\n".join(rows) + "\n")
  dataset = user_data.load_dataset(str(tmp_path))
  assert len(dataset.unseen["validation"]["labels"]) == 15
  warning = dataset.warning(most=10)
  assert "30 of 40 examples (75.0%) have a label train lacks" in warning
  assert warning.count("(2 examples)") == 10
  assert "and 5 more" in warning
  assert "new14" not in dataset.warning(most=3)
  assert "and 0 more" not in dataset.warning(most=15)


def test_load_dataset_pair_csv(tmp_path):
  content = ("text_a,text_b,label\nA man sleeps.,A man rests.,entail\n"
             "It rains.,\"Sunny, warm.\",contradict\n")
  _write(tmp_path / "train.csv", content)
  _write(tmp_path / "validation.csv", content + "Hi.,Hello.,neutral\n")
  dataset = user_data.load_dataset(str(tmp_path))
  assert dataset.labels == ["contradict", "entail"]
  assert dataset.slot_tags is None
  assert dataset.splits["train"].texts_b == ["A man rests.", "Sunny, warm."]
  assert dataset.summary()["pair"] is True
  assert dataset.unseen["validation"]["labels"] == {"neutral": 1}
  assert "label 'neutral' (1 example)" in dataset.warning()


def test_load_dataset_dev_tsv(tmp_path):
  _write(tmp_path / "train.tsv", "text\tlabel\ngreat\t1\nawful\t0\nfine\t1\n")
  _write(tmp_path / "dev.tsv", "text\tlabel\nsuperb\t1\n")
  _write(tmp_path / "test.tsv", "text\nso-so\n")
  dataset = user_data.load_dataset(str(tmp_path))
  assert dataset.files.files["validation"] == str(tmp_path / "dev.tsv")
  assert dataset.labels == ["0", "1"]
  assert dataset.splits["test"].labels is None
  assert dataset.warning() is None
  assert dataset.summary()["examples"] == {"train": 3, "validation": 1,
                                           "test": 1}


def test_load_dataset_jsonl_intent_slot(tmp_path):
  _write_jsonl(tmp_path / "train.jsonl", [
      _GOOD, {"tokens": ["hello"], "tags": ["O"], "intent": "Greet"}])
  _write_jsonl(tmp_path / "dev.jsonl", [
      {"tokens": ["to", "rome"], "tags": ["O", "B-town"], "intent": "Go"}])
  dataset = user_data.load_dataset(str(tmp_path))
  assert dataset.files.format == "jsonl"
  assert dataset.labels == ["Go", "Greet"]
  assert dataset.slot_tags == ["O", "B-city"]
  assert dataset.unseen["validation"] == {"labels": {},
                                          "slot_tags": {"B-town": 1}}


def test_load_dataset_single_label_in_train(tmp_path):
  _write(tmp_path / "train.csv", "text,label\na,pos\nb,pos\n")
  _write(tmp_path / "dev.csv", _CSV)
  error = _raises("all 2 examples have the label 'pos'",
                  user_data.load_dataset, str(tmp_path))
  assert error.path == str(tmp_path / "train.csv")


def test_load_dataset_one_intent_allowed_with_slot_tags(tmp_path):
  _write_goo(tmp_path / "train", ["play jazz", "play"], ["O B-genre", "O"],
             ["PlayMusic", "PlayMusic"])
  _write_goo(tmp_path / "valid", ["play rock"], ["O B-genre"], ["PlayMusic"])
  dataset = user_data.load_dataset(str(tmp_path))
  assert dataset.labels == ["PlayMusic"]
  assert dataset.slot_tags == ["O", "B-genre"]


def test_load_dataset_one_intent_without_slot_tags_refused(tmp_path):
  _write_goo(tmp_path / "train", ["play jazz", "play"], ["O O", "O"],
             ["PlayMusic", "PlayMusic"])
  _write_goo(tmp_path / "valid", ["play rock"], ["O O"], ["PlayMusic"])
  _raises("all 2 queries have the intent 'PlayMusic' and every slot tag is "
          "'O'", user_data.load_dataset, str(tmp_path))


def test_load_dataset_validation_must_have_labels(tmp_path):
  _write(tmp_path / "train.csv", _CSV)
  _write(tmp_path / "dev.csv", "text\nunlabelled\n")
  _raises("dev.csv, line 1: there is no column 'label'",
          user_data.load_dataset, str(tmp_path))


def test_load_dataset_pairs_and_single_texts_mixed(tmp_path):
  _write(tmp_path / "train.csv", "text_a,text_b,label\na,b,x\nc,d,y\n")
  _write(tmp_path / "dev.csv", _CSV)
  _raises("the file holds single texts, but train .* holds pairs of texts",
          user_data.load_dataset, str(tmp_path))


def test_load_dataset_column_names(tmp_path):
  content = "sentence,sentiment\ngood,pos\nbad,neg\n"
  _write(tmp_path / "train.csv", content)
  _write(tmp_path / "valid.csv", content)
  dataset = user_data.load_dataset(str(tmp_path), text_column="sentence",
                                   label_column="sentiment")
  assert dataset.splits["validation"].texts_a == ["good", "bad"]


# -----------------------------------------------------------------------------
# Words the student cannot read.
# -----------------------------------------------------------------------------


def test_unreadable_words_warn_above_two_percent_with_counts(tmp_path):
  # train: 40 queries, 4 of them in other scripts or emoji. Words: 36 x 3
  # English + '北京 天气' + '播放 周杰伦 的 歌' + 'مرحبا بك' + 'play 😀 😀' = 119,
  # of which 2 + 4 + 2 + 2 = 10 are [UNK] ('play' is read).
  english = ["play some jazz", "book a table", "what is weather"] * 12
  queries = english + ["北京 天气", "播放 周杰伦 的 歌", "مرحبا بك",
                       "play 😀 😀"]
  _write_goo(tmp_path / "train", queries,
             [" ".join(["O"] * len(q.split())) for q in queries],
             ["A", "B"] * 20)
  # validation: 50 words, one of them Cyrillic: 2.0%, not above.
  valid = ["play some jazz now"] * 12 + ["play москва"]
  _write_goo(tmp_path / "valid", valid,
             [" ".join(["O"] * len(q.split())) for q in valid],
             ["A"] * len(valid))
  dataset = user_data.load_dataset(str(tmp_path))
  train = dataset.unreadable["train"]
  assert (train["words"], train["unreadable"]) == (119, 10)
  assert train["distinct_unreadable"] == 9
  # Most frequent first, then alphabetically.
  assert list(train["examples"].items())[:2] == [("😀", 2), ("بك", 1)]
  assert set(train["examples"]) == {"😀", "北京", "天气", "播放", "周杰伦",
                                    "的", "歌", "مرحبا", "بك"}
  assert dataset.unreadable["validation"] == {
      "words": 50, "unreadable": 1, "distinct_unreadable": 1,
      "examples": {"москва": 1}}
  warning = dataset.unreadable_warning()
  assert "\n" not in warning
  assert warning.startswith("More than 2% of the words of train are "
                            "unreadable to the student: it reads English")
  assert "reach the model as [UNK]" in warning
  assert (f"train ({tmp_path / 'train'}): 10 of 119 words (8.4%) are [UNK], "
          "most often '😀' (2), 'بك' (1)") in warning
  assert "validation (" not in warning  # 2.0% is not above 2%.
  assert "and 6 others" in dataset.unreadable_warning(most=3)
  assert "москва" in dataset.unreadable_warning(threshold=0.01)
  summary = dataset.summary()
  assert json.loads(json.dumps(summary)) == summary
  assert summary["unreadable_words"]["train"]["share"] == round(10 / 119, 6)
  assert summary["unreadable_words"]["validation"]["unreadable"] == 1


def test_english_data_does_not_warn_and_pairs_count_both_texts(tmp_path):
  content = ("text_a,text_b,label\nA man sleeps.,A man rests.,entail\n"
             "Café au lait?,\"Sunny, warm.\",contradict\n")
  _write(tmp_path / "english" / "train.csv", content)
  _write(tmp_path / "english" / "dev.csv", content)
  dataset = user_data.load_dataset(str(tmp_path / "english"))
  # Words of text_a and text_b: 3 + 3 + 3 + 2.
  assert dataset.unreadable["train"] == {
      "words": 11, "unreadable": 0, "distinct_unreadable": 0, "examples": {}}
  assert dataset.unreadable_warning() is None
  assert dataset.summary()["unreadable_words"]["validation"]["share"] == 0.0
  _write(tmp_path / "mixed" / "train.csv", content)
  _write(tmp_path / "mixed" / "dev.csv", content + "Hi.,你好,neutral\n")
  dataset = user_data.load_dataset(str(tmp_path / "mixed"))
  assert dataset.unreadable["validation"] == {
      "words": 13, "unreadable": 1, "distinct_unreadable": 1,
      "examples": {"你好": 1}}
  warning = dataset.unreadable_warning()
  assert "1 of 13 words (7.7%) are [UNK], most often '你好' (1)." in warning
  assert "train (" not in warning


def test_unreadable_words_are_read_with_the_vocabulary_given(tmp_path):
  _write(tmp_path / "train.csv", "text,label\nplay 北京,a\nplay jazz,b\n")
  _write(tmp_path / "dev.csv", "text,label\nplay 北京,a\n")
  # The shipped student vocabulary has no '北' or '京'.
  assert user_data.load_dataset(
      str(tmp_path)).unreadable["train"]["examples"] == {"北京": 1}
  tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "北", "##京",
            "play"]
  dataset = user_data.load_dataset(str(tmp_path), vocab=tokens)
  assert dataset.unreadable["train"]["examples"] == {"jazz": 1}
  assert dataset.unreadable["validation"]["unreadable"] == 0


# -----------------------------------------------------------------------------
# Real data, read as a user's files (skipped where ../shared/data is absent).
# -----------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.isdir(SNIPS_DIR),
                    reason="../shared/data/snips is not beside the project")
def test_load_dataset_shared_snips():
  dataset = user_data.load_dataset(SNIPS_DIR)
  assert dataset.files.format == "goo"
  assert dataset.summary()["examples"] == {"train": 13084, "validation": 700}
  assert len(dataset.labels) == 7
  assert dataset.slot_tags[0] == "O"
  assert dataset.warning() is None


@pytest.mark.skipif(not os.path.isdir(SST2_DIR),
                    reason="../shared/data/glue/SST-2 is not beside the "
                    "project")
def test_load_dataset_shared_sst2(tmp_path):
  for name in ("train.tsv", "dev.tsv"):
    shutil.copy(os.path.join(SST2_DIR, name), tmp_path / name)
  dataset = user_data.load_dataset(str(tmp_path), text_column="sentence")
  assert dataset.summary()["examples"] == {"train": 67349, "validation": 872}
  assert dataset.labels == ["0", "1"]
  assert dataset.splits["train"].texts_b is None
  assert dataset.warning() is None
  # English movie reviews: a handful of unreadable words ('næss').
  assert dataset.unreadable["train"]["words"] == 633724
  assert dataset.unreadable_warning() is None
