"""Users' own datasets: finding, reading and checking them before training.

Data contract
-------------

A dataset is one directory. Two kinds of task are recognised.

**Text classification** (one text, or a pair of texts, to one label):

- files `train`, `validation` (or `dev`, or `valid`) and, optionally, `test`,
  each ending in `.csv`, `.tsv` or `.jsonl`, all splits in the same format;
- CSV and TSV files start with a header row naming the columns, once (a
  later row equal to the header, as when two files are joined, is refused).
  CSV follows the usual quoting rules (a field holding commas, double quotes
  or line breaks is quoted, and its double quotes are doubled). TSV is split
  on tabs only: quotes are ordinary characters, and a text may not contain a
  tab;
- JSONL files hold one JSON object per line; their keys are the columns;
- the text is in column `text`, or, for sentence pairs, in columns `text_a`
  and `text_b`; the label is in column `label`. Other names can be chosen with
  `text_column`, `text_b_column` and `label_column`. Other columns are
  ignored;
- a label is a class name, read as a string; surrounding spaces are dropped.
  In JSONL it may also be an integer (`0` reads as '0'), a whole float
  (`1.0` reads as '1', as pandas writes integers beside missing values) or a
  boolean (`true` reads as 'true');
- the `test` split may have no label column (or an empty label on every
  example): it is then used for predictions only.

**Intent detection and slot filling** (a query to one intent, and each word
of the query to one IOB slot tag), in one of two layouts:

- the Goo et al. (2018) / JointBERT layout: directories `train/`, `valid/`
  (or `dev/`, or `validation/`) and, optionally, `test/`, each holding three
  files with one query per line: `seq.in` (the words, separated by spaces),
  `seq.out` (one slot tag per word) and `label` (the intent). A `test/`
  directory may hold `seq.in` alone;
- JSONL files `train.jsonl`, `validation.jsonl` (or `dev.jsonl`, or
  `valid.jsonl`) and, optionally, `test.jsonl`, one object per line:
  `{"tokens": ["play", "jazz"], "tags": ["O", "B-genre"], "intent":
  "PlayMusic"}`. Test lines may leave out `tags` and `intent`;
- a JSONL dataset is read as intent-slot when the first object of its
  train file has a key `tokens` or `tags`, as text classification otherwise
  (so `{"text": ..., "intent": ...}` is text classification, with
  `label_column="intent"`);
- slot tags are `O`, `B-<type>` or `I-<type>`; there is one per word;
- an intent is one name without spaces; a word holds no spaces.

**For every file**:

- UTF-8 without a byte-order mark; line ends `\\n` or `\\r\\n`;
- blank lines in CSV, TSV and JSONL files are skipped (line numbers in
  messages still count them); the three files of a Goo split are read line by
  line together, so they have no blank lines, except at their end;
- train and validation carry labels; every split has at least one example;
  train has at least two labels (an intent-slot train set may have a single
  intent if it has slot tags other than `O`);
- labels, intents and slot tags that occur in validation or test but not in
  train are allowed: the model cannot predict them, so they count as errors
  in the scores, and `UserDataset.warning()` lists them;
- texts may be in any script, but the student reads English: its WordPiece
  vocabulary turns a word of Chinese, Arabic, Cyrillic, ... or an emoji
  wholly into [UNK]. Such words are counted per split (whitespace words of
  the queries, or of `text` / `text_a` / `text_b`; `text.unreadable`), and
  `UserDataset.unreadable_warning()` names the splits where they are more
  than 2% of the words.

A file that breaks the contract raises `DataError`, whose message names the
file and the line, what was found there, what was expected, and how to fix it.

Example:
  dataset = load_dataset("/data/my_intents")
  print(dataset.summary())
  for warning in (dataset.warning(), dataset.unreadable_warning()):
    if warning:
      print(warning)
  train = dataset.splits["train"]  # IntentSlotSplit: words, tags, intents
"""

import collections
import csv
import dataclasses
import json
import math
import os
from typing import Any, Iterator

import tensorflow as tf

from mixvocab_tf import data as data_lib
from mixvocab_tf.text import unreadable as unreadable_lib

TEXT_CLASSIFICATION = "text_classification"
INTENT_SLOT = "intent_slot"
SPLITS = ("train", "validation", "test")
OUTSIDE_TAG = "O"

#: File (or directory) names accepted for each split, before the extension.
SPLIT_NAMES = {
    "train": ("train",),
    "validation": ("validation", "dev", "valid"),
    "test": ("test",),
}
_TABLE_FORMATS = ("csv", "tsv", "jsonl")
_GOO_FILES = ("seq.in", "seq.out", "label")
_INTENT_SLOT_KEYS = ("tokens", "tags", "intent")
_PAIR_COLUMNS = ("text_a", "text_b")
_BOM = b"\xef\xbb\xbf"
# Names users give to splits that are not accepted, and the split meant.
_NEAR_MISSES = {
    "training": "train",
    "val": "validation",
    "eval": "validation",
    "evaluation": "validation",
    "testing": "test",
}
# Characters of a value quoted in a message, and entries of a directory listed.
_MAX_SHOWN = 80
_MAX_LISTED = 30
#: `UserDataset.unreadable_warning` names a split when more than this share
#: of its words are wholly [UNK] to the student.
UNREADABLE_SHARE = 0.02


# Files go through tf.io.gfile, as everywhere in the package: a dataset may be
# on any file system TensorFlow reads (a local disk, gs://).
def _isfile(path: str) -> bool:
  return tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path)


def _listdir(directory: str) -> list[str]:
  # Object stores list sub-directories with a trailing '/'.
  return [name.rstrip("/") for name in tf.io.gfile.listdir(directory)]


class DataError(ValueError):
  """A user's dataset breaks the data contract of `user_data`.

  The message is one paragraph: the file (and the 1-based line, when there is
  one), what was found, what is expected, and how to fix it. `path` and `line`
  hold the place for programs (`line` is None for a whole file or directory).
  """

  def __init__(self, message: str, path: str | None = None,
               line: int | None = None):
    super().__init__(message)
    self.path = path
    self.line = line


def _error(path: str, line: int | None, found: str, expected: str,
           fix: str | None = None) -> DataError:
  """A `DataError`: '<path>, line <n>: <found>. Expected <expected>. <fix>'."""
  where = path if line is None else f"{path}, line {line}"
  message = f"{where}: {found}. Expected {expected}."
  if fix:
    message += f" {fix}"
  # One paragraph, whatever the values quoted.
  message = message.replace("\r", "\\r").replace("\n", "\\n")
  return DataError(message, path=path, line=line)


def _show(value: Any, limit: int = _MAX_SHOWN) -> str:
  """`repr(value)`, cut to `limit` characters."""
  text = repr(value)
  return text if len(text) <= limit else text[:limit - 3] + "..."


def _plural(count: int, noun: str) -> str:
  """'1 word', '2 words'."""
  return f"{count} {noun}" + ("" if count == 1 else "s")


def _json_type(value: Any) -> str:
  """The JSON name of a decoded value's type ('array', 'number', ...)."""
  if value is None:
    return "null"
  if isinstance(value, bool):
    return "boolean"
  if isinstance(value, (int, float)):
    return "number"
  if isinstance(value, str):
    return "string"
  if isinstance(value, list):
    return "array"
  return "object"


def _list_directory(directory: str) -> str:
  """'a.csv, b/' (directories end in '/'), or 'nothing'."""
  try:
    names = sorted(_listdir(directory))
  except (OSError, tf.errors.OpError):
    return "nothing readable"
  if not names:
    return "nothing"
  shown = [
      name + "/" if tf.io.gfile.isdir(os.path.join(directory, name)) else name
      for name in names[:_MAX_LISTED]
  ]
  if len(names) > _MAX_LISTED:
    shown.append(f"and {len(names) - _MAX_LISTED} more")
  return ", ".join(shown)


# -----------------------------------------------------------------------------
# Lines.
# -----------------------------------------------------------------------------


def _read_lines(path: str, expected: str,
                allow_bom: bool = False) -> list[str]:
  """The lines of a UTF-8 file, without '\\n' or a final '\\r'.

  A final newline ends the last line; it does not start an empty one. The
  file is split on '\\n' only (`str.splitlines` would also split texts at
  the Unicode separators they may hold).

  Args:
    path: the file.
    expected: what the file should hold, for the message of an empty file.
    allow_bom: drop a leading UTF-8 byte-order mark instead of refusing it.

  Raises:
    DataError: the file is missing, starts with a byte-order mark (unless
      `allow_bom`), is not UTF-8 (the message gives the line and the byte
      offset), or holds nothing but blank lines.
  """
  if not _isfile(path):
    raise _error(path, None, "the file does not exist", expected)
  with tf.io.gfile.GFile(path, "rb") as f:
    data = f.read()
  if data.startswith(_BOM) and not allow_bom:
    raise _error(
        path, 1,
        "the file starts with a UTF-8 byte-order mark (as Excel writes); "
        "save it as UTF-8 without BOM",
        "UTF-8 text without a byte-order mark",
        "For example, choose 'UTF-8' rather than 'UTF-8 with BOM' when "
        "saving, or remove the mark with `sed -i '1s/^\\xEF\\xBB\\xBF//' "
        "FILE`.")
  try:
    text = data.decode("utf-8")
  except UnicodeDecodeError as e:
    line = data.count(b"\n", 0, e.start) + 1
    line_start = data.rfind(b"\n", 0, e.start) + 1
    before = data[max(line_start, e.start - 30):e.start].decode(
        "utf-8", errors="replace")
    raise _error(
        path, line,
        f"byte offset {e.start} of the file (byte {e.start - line_start} of "
        f"the line, counting from 0) holds {data[e.start:e.end]!r}, which is "
        f"not valid UTF-8 ({e.reason}); the text before it is {_show(before)}",
        "a file encoded as UTF-8",
        "The file is probably in another encoding (Latin-1 or Windows-1252 "
        "are common): convert it, e.g. `iconv -f cp1252 -t utf-8 FILE > "
        "NEW_FILE`, or save it again as UTF-8.") from None
  # Dropped after decoding, so that a UTF-8 error's byte offset is the file's.
  if allow_bom and text.startswith("\ufeff"):
    text = text[1:]
  lines = text.split("\n")
  if lines[-1] == "":
    lines.pop()
  lines = [line.rstrip("\r") for line in lines]
  if not any(line.strip() for line in lines):
    raise _error(path, None, "the file is empty (or holds only blank lines)",
                 expected)
  return lines


# -----------------------------------------------------------------------------
# CSV, TSV and JSONL records.
# -----------------------------------------------------------------------------


def _format_of(path: str, allowed: tuple[str, ...] = _TABLE_FORMATS) -> str:
  ext = os.path.splitext(path)[1].lower().lstrip(".")
  if ext not in allowed:
    raise _error(
        path, None,
        f"the file name {os.path.basename(path)!r} does not end in a known "
        "extension",
        "one of " + ", ".join("." + a for a in allowed),
        "Rename the file to say its format (a file of JSON objects, one per "
        "line, is .jsonl).")
  return ext


def _table_records(
    path: str, lines: list[str],
    fmt: str) -> Iterator[tuple[int, int, list[str]]]:
  """Yields (first line, last line, fields) of each non-blank CSV/TSV record.

  A CSV record spans several lines when a quoted field holds line breaks; its
  first line is the one where it starts.
  """
  if fmt == "csv":
    # Lines go in with their '\n', so that quoted line breaks survive.
    reader = csv.reader((line + "\n" for line in lines), strict=True)
  else:
    reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE,
                        strict=True)
  while True:
    start = reader.line_num + 1
    try:
      row = next(reader)
    except StopIteration:
      return
    except csv.Error as e:
      end = reader.line_num
      if "\r" in lines[start - 1]:
        found = (f"the line holds a carriage return (\\r) inside it: "
                 f"{_show(lines[start - 1])}")
        fix = "Remove the carriage return, or quote the field that holds it."
      elif fmt == "csv":
        found = (f"the CSV record starting here (and read up to line {end}) "
                 f"is malformed: {e}")
        fix = ("A field that starts with a double quote must end with one, "
               "followed by a comma or the end of the line; a double quote "
               "inside a quoted field is written twice (\"\"). Check for an "
               "unbalanced quote on this line.")
      else:
        found = f"the TSV line is malformed: {e}: {_show(lines[start - 1])}"
        fix = "Fix the line."
      raise _error(path, start, found,
                   f"well-formed {fmt.upper()} (fields separated by "
                   f"{'commas' if fmt == 'csv' else 'tabs'})", fix) from None
    end = reader.line_num
    if start == end and not lines[start - 1].strip():
      continue  # A blank line.
    yield start, end, row


def _read_table(
    path: str, fmt: str, allow_bom: bool = False
) -> tuple[int, list[str], list[tuple[int, dict[str, str]]]]:
  """Reads a CSV/TSV file: (header line, header, [(line, {column: field})]).
  """
  lines = _read_lines(path, f"a {fmt.upper()} file: a header row, then one "
                      "example per row", allow_bom)
  header, header_line = None, None
  rows = []
  for start, end, row in _table_records(path, lines, fmt):
    if header is None:
      header, header_line = [name.strip() for name in row], start
      continue
    stripped = [field.strip() for field in row]
    if stripped:
      stripped[0] = stripped[0].lstrip("\ufeff")
    if stripped == header:
      raise _error(
          path, start,
          f"the row repeats the header {header} of line {header_line} (as "
          "when two files with headers are joined)",
          "the header on the first row only",
          f"Delete line {start}, or write the joined files without their "
          "headers.")
    if len(row) != len(header):
      spans = (f" (the record runs from line {start} to line {end}: a quoted "
               "field holds line breaks, perhaps because of an unbalanced "
               "double quote)" if end > start else "")
      if fmt == "csv":
        fix = ("Quote fields that hold commas (\"like, this\"), and double "
               "the quotes inside them.")
      else:
        fix = ("A TSV field may not hold a tab: replace tabs inside texts "
               "with spaces.")
      raise _error(
          path, start,
          f"the row has {len(row)} fields{spans}: {_show(row)}",
          f"{len(header)} fields, one per column of the header {header}",
          fix)
    rows.append((start, dict(zip(header, row))))
  return header_line, header, rows


def _read_jsonl(path: str, expected: str,
                allow_bom: bool = False) -> list[tuple[int, dict[str, Any]]]:
  """Reads a JSONL file: [(line, object)], blank lines skipped."""
  lines = _read_lines(path, expected, allow_bom)
  records = []
  for line_number, line in enumerate(lines, start=1):
    if not line.strip():
      continue
    try:
      value = json.loads(line)
    except json.JSONDecodeError as e:
      raise _error(
          path, line_number,
          f"the line is not valid JSON ({e.msg} at column {e.colno}): "
          f"{_show(line)}", expected,
          "JSONL holds one complete JSON object per line: no object spread "
          "over several lines, no enclosing [ ], no commas between lines."
      ) from None
    if not isinstance(value, dict):
      raise _error(
          path, line_number,
          f"the line holds a JSON {_json_type(value)}, not an object: "
          f"{_show(line)}", expected,
          "Write each example as a JSON object {...} on its own line.")
    records.append((line_number, value))
  return records


# -----------------------------------------------------------------------------
# Text classification.
# -----------------------------------------------------------------------------


@dataclasses.dataclass
class TextClassificationSplit:
  """One split of a text classification dataset.

  Attributes:
    path: the file read.
    texts_a: the text (or the first text of a pair) of each example.
    texts_b: the second text of each pair; None for single texts.
    labels: the label of each example; None for a test split without labels.
    line_numbers: the 1-based line where each example starts in `path`.
  """
  path: str
  texts_a: list[str]
  texts_b: list[str] | None
  labels: list[str] | None
  line_numbers: list[int]

  def __len__(self) -> int:
    return len(self.texts_a)


def _choose_columns(
    path: str, line: int, found: list[str], what: str, text_column: str,
    text_b_column: str | None, label_column: str,
    require_labels: bool) -> tuple[str, str | None, str | None]:
  """(text column, second text column or None, label column or None)."""
  text_a = text_column
  text_b = text_b_column
  if text_b is None:
    if (text_column not in found and text_column == "text" and
        all(c in found for c in _PAIR_COLUMNS)):
      text_a, text_b = _PAIR_COLUMNS
  elif text_column == "text" and "text" not in found and "text_a" in found:
    text_a = "text_a"
  label = label_column if label_column in found else None
  wanted = [text_a] + ([text_b] if text_b else [])
  wanted += [label_column] if require_labels else []
  missing = [c for c in wanted if c not in found]
  if missing:
    noun = "key" if what == "keys" else "column"
    if text_b_column is None:
      expected = f"a {noun} {text_column!r} (one text per example)"
      if text_column == "text":
        expected += f" or the {noun}s 'text_a' and 'text_b' (a pair of texts)"
    else:
      expected = f"the {noun}s {text_a!r} and {text_b!r} (a pair of texts)"
    if require_labels:
      expected += f", and a label {noun} {label_column!r}"
    there = (f"there is no {noun} {missing[0]!r}" if len(missing) == 1 else
             f"there are no {noun}s {', '.join(map(repr, missing))}")
    raise _error(
        path, line, f"{there}; the {what} are {found}", expected,
        f"Rename the {noun}s, or name yours with the text_column, "
        "text_b_column and label_column arguments.")
  for column in [c for c in (text_a, text_b, label) if c]:
    if what != "keys" and found.count(column) > 1:
      raise _error(
          path, line, f"the header names the column {column!r} twice: {found}",
          "each column name once", "Rename or delete one of them.")
  return text_a, text_b, label


def _json_label(path: str, line: int, key: str, value: Any) -> str | None:
  """A label read from JSON, as a string; None when null."""
  if value is None:
    return None
  if isinstance(value, bool):
    return "true" if value else "false"
  if isinstance(value, int):
    return str(value)
  if isinstance(value, float):
    if math.isfinite(value) and value.is_integer():
      return str(int(value))
    raise _error(
        path, line, f"{key!r} is the number {value!r}",
        "a class name (a string), an integer or a boolean",
        "Class labels are names, not measurements; this reader does no "
        "regression.")
  if isinstance(value, str):
    return value
  raise _error(path, line, f"{key!r} is a JSON {_json_type(value)}: "
               f"{_show(value)}",
               "a class name (a string), an integer or a boolean")


def _text_field(path: str, line: int, record: dict[str, Any], key: str,
                is_json: bool, allow_empty: bool = False) -> str:
  if is_json and key not in record:
    raise _error(path, line,
                 f"the object has no key {key!r}; its keys are "
                 f"{list(record)}",
                 f"every line to have the key {key!r}",
                 "Add the key, or name the text key with text_column / "
                 "text_b_column.")
  value = record[key]
  if not isinstance(value, str):
    raise _error(path, line,
                 f"{key!r} is a JSON {_json_type(value)}: {_show(value)}",
                 "a string", "Write the text as a JSON string.")
  if not value.strip() and not allow_empty:
    raise _error(path, line, f"the text {key!r} is empty ({value!r})",
                 "a text with at least one non-space character",
                 "Fill it in or delete the example.")
  return value


def read_text_classification(
    path: str,
    text_column: str = "text",
    text_b_column: str | None = None,
    label_column: str = "label",
    require_labels: bool = True,
    allow_bom: bool = False,
    allow_empty_text: bool = False) -> TextClassificationSplit:
  """Reads and checks one split of a text classification dataset.

  The format follows the extension: `.csv`, `.tsv` (split on tabs, quotes
  are text, as in GLUE) or `.jsonl`.

  `allow_bom` and `allow_empty_text` loosen two checks of the data contract
  for files that others publish, which may break them without being wrong:
  the GLUE TSV files (`text_classification.data.read_glue_tsv`), read with a
  byte-order mark and an empty sentence accepted, as GLUE tools read them.
  A user's dataset (`load_dataset`) is read with both False.

  Args:
    path: the file.
    text_column: the column (or JSON key) of the text, or of the first text
      of a pair.
    text_b_column: the column of the second text of a pair. With None, a file
      with no `text_column` 'text' but with columns `text_a` and `text_b`
      reads as pairs; otherwise texts are single.
    label_column: the column of the label.
    require_labels: whether every example must have a label. If False (a
      test split), the label column may be missing, or empty on every row:
      `labels` is then None.
    allow_bom: drop a leading UTF-8 byte-order mark instead of refusing the
      file.
    allow_empty_text: accept a text that is empty or only spaces (kept as
      it is) instead of refusing the example.

  Returns:
    A `TextClassificationSplit`.

  Raises:
    DataError: the file breaks the data contract (see the module docstring).
  """
  fmt = _format_of(path)
  if fmt == "jsonl":
    expected = ("one JSON object per line, with keys for the text(s) and the "
                "label")
    records = _read_jsonl(path, expected, allow_bom)
    first_line, first = records[0]
    columns, what = list(first), "keys"
  else:
    first_line, columns, records = _read_table(path, fmt, allow_bom)
    if not records:
      raise _error(path, None,
                   f"the file has a header {columns} but no examples",
                   "at least one example after the header")
    what = "columns"
  is_json = fmt == "jsonl"
  col_a, col_b, col_label = _choose_columns(
      path, first_line, columns, what, text_column, text_b_column,
      label_column, require_labels)
  if is_json:
    col_label = label_column  # Looked up on every line.
  texts_a, texts_b, labels, line_numbers = [], [], [], []
  for line, record in records:
    texts_a.append(_text_field(path, line, record, col_a, is_json,
                               allow_empty_text))
    if col_b:
      texts_b.append(_text_field(path, line, record, col_b, is_json,
                                 allow_empty_text))
    label = None
    if col_label and col_label in record:
      value = record[col_label]
      label = (_json_label(path, line, col_label, value)
               if is_json else value)
      label = label.strip() if label is not None else None
    if require_labels and not label:
      found = (f"the object has no key {label_column!r}; its keys are "
               f"{list(record)}" if is_json and col_label not in record else
               f"the label {label_column!r} is empty")
      raise _error(path, line, found, f"a label {label_column!r} on every "
                   "example",
                   "Fill in the label or delete the example.")
    labels.append(label or None)
    line_numbers.append(line)
  _check_all_or_none(path, labels, line_numbers, f"label {label_column!r}")
  return TextClassificationSplit(
      path=path,
      texts_a=texts_a,
      texts_b=texts_b if col_b else None,
      labels=labels if any(labels) else None,
      line_numbers=line_numbers)


def _check_all_or_none(path: str, values: list[Any], line_numbers: list[int],
                       what: str) -> None:
  """Refuses a split where some examples have `what` and others not."""
  missing = [i for i, value in enumerate(values) if value is None]
  if missing and len(missing) < len(values):
    present = next(i for i, value in enumerate(values) if value is not None)
    raise _error(
        path, line_numbers[missing[0]],
        f"the example has no {what}, but the one on line "
        f"{line_numbers[present]} has one",
        f"{what} on every example of a test split, or on none (predictions "
        "only)", "Fill it in, or remove it from every example.")


# -----------------------------------------------------------------------------
# Intent detection and slot filling.
# -----------------------------------------------------------------------------


@dataclasses.dataclass
class IntentSlotSplit:
  """One split of an intent detection and slot filling dataset.

  Attributes:
    path: the directory (Goo layout) or the JSONL file read.
    words: the words of each query.
    tags: one IOB slot tag per word of each query; None for a test split
      without tags.
    intents: the intent of each query; None for a test split without
      intents.
    line_numbers: the 1-based line of each query.
  """
  path: str
  words: list[list[str]]
  tags: list[list[str]] | None
  intents: list[str] | None
  line_numbers: list[int]

  def __len__(self) -> int:
    return len(self.words)


def _is_iob_tag(tag: str) -> bool:
  if tag == OUTSIDE_TAG:
    return True
  return (tag[:2] in ("B-", "I-") and len(tag) > 2 and
          len(tag.split()) == 1)


def _check_tags(path: str, line: int, words: list[str], tags: list[str],
                words_where: str) -> None:
  """Checks one tag per word, each an IOB tag."""
  if len(tags) != len(words):
    raise _error(
        path, line,
        f"there {'is' if len(tags) == 1 else 'are'} "
        f"{_plural(len(tags), 'slot tag')} {_show(tags)} but {words_where} "
        f"has {_plural(len(words), 'word')} {_show(words)}",
        "one slot tag per word",
        "Add or remove tags so that the i-th tag is the tag of the i-th word "
        "(words are separated by whitespace).")
  for position, tag in enumerate(tags, start=1):
    if not _is_iob_tag(tag):
      raise _error(
          path, line,
          f"slot tag {position} is {_show(tag)}, which is not an IOB tag",
          "'O', 'B-<type>' or 'I-<type>' (e.g. 'B-city')",
          "Rename the tag; BIO tags mark the first word of a slot B- and the "
          "following words I-.")


def _check_intent(path: str, line: int, intent: str) -> None:
  if not intent or len(intent.split()) != 1:
    raise _error(
        path, line,
        f"the intent is {_show(intent)}" + (", which is empty" if not intent
                                            else ", which holds whitespace"),
        "one intent name without spaces (e.g. 'PlayMusic')",
        "Write the intent, joining its words with '_' if needed.")


def _read_goo(path: str, require_labels: bool) -> IntentSlotSplit:
  """Reads a Goo et al. split directory (`seq.in`, `seq.out`, `label`)."""
  required = _GOO_FILES if require_labels else ("seq.in",)
  missing = [name for name in required
             if not _isfile(os.path.join(path, name))]
  if missing:
    raise _error(
        path, None,
        f"the directory has no {', '.join(missing)}; it holds "
        f"{_list_directory(path)}",
        "the files seq.in (the queries), seq.out (their slot tags) and label "
        "(their intents)" + ("" if require_labels else
                             "; a test split may hold seq.in alone"),
        "Add the missing files.")
  expected = {
      "seq.in": "one query per line, words separated by spaces",
      "seq.out": "one line of slot tags per query, one tag per word",
      "label": "one intent per line, one line per query",
  }
  lines = {}
  for name in _GOO_FILES:
    file_path = os.path.join(path, name)
    if _isfile(file_path):
      lines[name] = _read_lines(file_path, expected[name])
  # Blank lines at the end of the files are dropped, up to the last line that
  # is not blank in one of them (so an empty last intent is still reported).
  num_lines = max(
      max(i + 1 for i, line in enumerate(file_lines) if line.strip())
      for file_lines in lines.values())
  lines = {name: file_lines[:num_lines] for name, file_lines in lines.items()}
  counts = {name: len(file_lines) for name, file_lines in lines.items()}
  if len(set(counts.values())) != 1:
    first_mismatch = ""
    if "seq.out" in lines:
      for i, (query, tag_line) in enumerate(
          zip(lines["seq.in"], lines["seq.out"])):
        if len(query.split()) != len(tag_line.split()):
          first_mismatch = (
              f" (the first line where seq.in and seq.out disagree on the "
              f"number of words is line {i + 1})")
          break
    raise _error(
        path, None,
        "the files have different numbers of lines: " +
        ", ".join(f"{name} has {count}" for name, count in counts.items()) +
        first_mismatch,
        "one line per query in each file, in the same order",
        "Find the query whose line is missing or doubled (a blank line in "
        "the middle of a file, or a query holding a line break, are common "
        "causes).")
  seq_in = os.path.join(path, "seq.in")
  seq_out = os.path.join(path, "seq.out")
  label_path = os.path.join(path, "label")
  words, tags, intents, line_numbers = [], [], [], []
  for i, query in enumerate(lines["seq.in"]):
    line = i + 1
    query_words = query.split()
    if not query_words:
      raise _error(seq_in, line, "the query is empty",
                   "one query per line, with at least one word",
                   "Delete the line and the same line of seq.out and label, "
                   "or fill it in.")
    if "seq.out" in lines:
      query_tags = lines["seq.out"][i].split()
      _check_tags(seq_out, line, query_words, query_tags,
                  f"{seq_in}, line {line},")
      tags.append(query_tags)
    if "label" in lines:
      intent = lines["label"][i].strip()
      _check_intent(label_path, line, intent)
      intents.append(intent)
    words.append(query_words)
    line_numbers.append(line)
  return IntentSlotSplit(
      path=path,
      words=words,
      tags=tags if "seq.out" in lines else None,
      intents=intents if "label" in lines else None,
      line_numbers=line_numbers)


def _string_list(path: str, line: int, record: dict[str, Any],
                 key: str) -> list[str]:
  value = record[key]
  if not isinstance(value, list) or not all(
      isinstance(item, str) for item in value):
    if isinstance(value, list):
      bad = next(item for item in value if not isinstance(item, str))
      found = (f"{key!r} holds a JSON {_json_type(bad)} {_show(bad)}")
    else:
      found = f"{key!r} is a JSON {_json_type(value)}: {_show(value)}"
    raise _error(path, line, found, f"{key!r} to be a list of strings",
                 'Write it as ["a", "b", ...].')
  return value


def _read_intent_slot_jsonl(path: str,
                            require_labels: bool) -> IntentSlotSplit:
  """Reads a JSONL intent-slot split ({"tokens", "tags", "intent"})."""
  expected = ('one JSON object per line with keys "tokens" (list of words), '
              '"tags" (one IOB tag per word) and "intent"')
  records = _read_jsonl(path, expected)
  required = _INTENT_SLOT_KEYS if require_labels else ("tokens",)
  words, tags, intents, line_numbers = [], [], [], []
  for line, record in records:
    missing = [key for key in required if key not in record]
    if missing:
      raise _error(
          path, line,
          f"the object has no key {', '.join(map(repr, missing))}; its keys "
          f"are {list(record)}",
          f"the keys {list(required)}" +
          ("" if require_labels else " (a test split may leave out 'tags' "
           "and 'intent')"),
          "Add the missing keys.")
    tokens = _string_list(path, line, record, "tokens")
    if not tokens:
      raise _error(path, line, "'tokens' is empty",
                   "a query of at least one word",
                   "Fill it in or delete the line.")
    for position, token in enumerate(tokens, start=1):
      if not token or len(token.split()) != 1:
        raise _error(
            path, line,
            f"token {position} is {_show(token)}, which is "
            f"{'empty' if not token.strip() else 'several words'}",
            "one word per token, without spaces (queries are split into "
            "words at whitespace when the model is used)",
            "Split it into words, each with its own tag, or drop it.")
    query_tags = None
    if record.get("tags") is not None:
      query_tags = _string_list(path, line, record, "tags")
      _check_tags(path, line, tokens, query_tags, "'tokens'")
    elif require_labels:
      raise _error(path, line, "'tags' is null", "a list of IOB tags")
    intent = None
    if record.get("intent") is not None:
      intent = _json_label(path, line, "intent", record["intent"]).strip()
      _check_intent(path, line, intent)
    elif require_labels:
      raise _error(path, line, "'intent' is null", "an intent name")
    words.append(tokens)
    tags.append(query_tags)
    intents.append(intent)
    line_numbers.append(line)
  _check_all_or_none(path, tags, line_numbers, "'tags'")
  _check_all_or_none(path, intents, line_numbers, "'intent'")
  return IntentSlotSplit(
      path=path,
      words=words,
      tags=tags if tags[0] is not None else None,
      intents=intents if intents[0] is not None else None,
      line_numbers=line_numbers)


def read_intent_slot(path: str, require_labels: bool = True) -> IntentSlotSplit:
  """Reads and checks one split of an intent detection and slot filling set.

  Args:
    path: a Goo et al. split directory (`seq.in`, `seq.out`, `label`) or a
      `.jsonl` file of `{"tokens": [...], "tags": [...], "intent": "..."}`.
    require_labels: whether every query must have tags and an intent. If
      False (a test split), `seq.out` / `label` (or the keys `tags` /
      `intent`) may be missing: `tags` / `intents` are then None.

  Returns:
    An `IntentSlotSplit`.

  Raises:
    DataError: the data breaks the data contract (see the module docstring).
  """
  if tf.io.gfile.isdir(path):
    return _read_goo(path, require_labels)
  if not tf.io.gfile.exists(path):
    raise _error(path, None, "the path does not exist",
                 "a directory with seq.in, seq.out and label, or a .jsonl "
                 "file")
  _format_of(path, ("jsonl",))
  return _read_intent_slot_jsonl(path, require_labels)


# -----------------------------------------------------------------------------
# Datasets.
# -----------------------------------------------------------------------------


@dataclasses.dataclass
class DatasetFiles:
  """Where the splits of a dataset are.

  Attributes:
    kind: TEXT_CLASSIFICATION or INTENT_SLOT.
    data_dir: the dataset directory.
    files: split ('train', 'validation', 'test') -> file, or directory for
      the Goo layout; 'test' is absent when there is none.
    format: 'csv', 'tsv', 'jsonl' or 'goo'.
  """
  kind: str
  data_dir: str
  files: dict
  format: str


def _accepted_names(split: str) -> str:
  names = SPLIT_NAMES[split]
  names = (" or ".join(map(repr, names)) if len(names) < 3 else
           ", ".join(map(repr, names[:-1])) + f" or {names[-1]!r}")
  return (f"a file or directory named {names}: a .csv, .tsv or .jsonl file, "
          "or a directory holding seq.in, seq.out and label")


def _near_miss_hint(data_dir: str, split: str) -> str:
  """Advice on entries that look like `split` but are not accepted names."""
  hints = []
  for name in sorted(_listdir(data_dir)):
    full = os.path.join(data_dir, name)
    lower = name.lower()
    stem, ext = lower.split(".", 1) if "." in lower else (lower, "")
    if stem not in SPLIT_NAMES[split] and _NEAR_MISSES.get(stem) != split:
      continue
    if tf.io.gfile.isdir(full):
      if any(_isfile(os.path.join(full, f)) for f in _GOO_FILES):
        hints.append(f"Rename {name}/ to {SPLIT_NAMES[split][-1]}/.")
      else:
        hints.append(f"The directory {name}/ holds none of seq.in, seq.out "
                     "and label.")
    elif ext == "json":
      hints.append(f"The file {name} is not an accepted name: if it holds "
                   f"one JSON object per line, rename it to {stem}.jsonl.")
    elif ext in _TABLE_FORMATS:
      hints.append(f"Rename {name} to {SPLIT_NAMES[split][0]}.{ext}.")
    else:
      hints.append(f"The file {name} does not end in .csv, .tsv or .jsonl.")
  return " ".join(hints)


def _peek_jsonl_kind(path: str) -> str:
  """INTENT_SLOT if the first object of `path` has a key 'tokens' or 'tags'.

  ('intent' alone is not enough: {"text": ..., "intent": ...} is a text
  classification file read with label_column='intent'.)
  """
  _, first = _read_jsonl(path, "one JSON object per line")[0]
  if "tokens" in first or "tags" in first:
    return INTENT_SLOT
  return TEXT_CLASSIFICATION


def find_dataset(data_dir: str) -> DatasetFiles:
  """Finds the splits of the dataset in `data_dir`, and its kind and format.

  Split names: `train`; `validation`, `dev` or `valid`; `test` (optional).
  A split is a `.csv`, `.tsv` or `.jsonl` file (text classification, or
  intent-slot JSONL when the first object of train has a key `tokens` or
  `tags`), or a directory holding `seq.in`, `seq.out` or `label`
  (intent-slot, Goo et al. layout).

  Raises:
    DataError: `data_dir` is missing, has no train or validation split, has
      two candidates for one split, or mixes formats.
  """
  if not tf.io.gfile.isdir(data_dir):
    found = ("the path is a file, not a directory"
             if tf.io.gfile.exists(data_dir)
             else "the directory does not exist")
    raise _error(data_dir, None, found,
                 "a dataset directory holding the splits train, validation "
                 "(or dev, or valid) and optionally test",
                 "Check the path.")
  candidates = {split: [] for split in SPLITS}
  for name in sorted(_listdir(data_dir)):
    full = os.path.join(data_dir, name)
    lower = name.lower()
    if tf.io.gfile.isdir(full):
      stem, fmt = lower, "goo"
      if not any(_isfile(os.path.join(full, f)) for f in _GOO_FILES):
        continue
    else:
      stem, ext = os.path.splitext(lower)
      fmt = ext.lstrip(".")
      if fmt not in _TABLE_FORMATS:
        continue
    for split, names in SPLIT_NAMES.items():
      if stem in names:
        candidates[split].append((name, fmt))
  for split in SPLITS:
    if len(candidates[split]) > 1:
      names = [name + ("/" if fmt == "goo" else "")
               for name, fmt in candidates[split]]
      raise _error(
          data_dir, None,
          f"there are {len(names)} candidates for the {split} split: "
          f"{', '.join(names)}",
          f"one {split} split", "Remove or rename all but one of them.")
  for split in ("train", "validation"):
    if not candidates[split]:
      hint = _near_miss_hint(data_dir, split)
      raise _error(
          data_dir, None,
          f"there is no {split} split; the directory holds "
          f"{_list_directory(data_dir)}",
          f"for the {split} split {_accepted_names(split)}",
          (hint + " " if hint else "") +
          "Name the split's file or directory with one of these names.")
  chosen = {split: found[0] for split, found in candidates.items() if found}
  formats = {fmt for _, fmt in chosen.values()}
  if len(formats) > 1:
    raise _error(
        data_dir, None,
        "the splits are in different formats: " +
        ", ".join(name + ("/" if fmt == "goo" else "")
                  for name, fmt in chosen.values()),
        "all splits in one format (CSV, TSV, JSONL or the seq.in / seq.out / "
        "label directories)", "Convert the odd ones out.")
  fmt = formats.pop()
  files = {split: os.path.join(data_dir, name)
           for split, (name, _) in chosen.items()}
  if fmt == "goo":
    kind = INTENT_SLOT
  elif fmt == "jsonl":
    kind = _peek_jsonl_kind(files["train"])
  else:
    kind = TEXT_CLASSIFICATION
  return DatasetFiles(kind=kind, data_dir=data_dir, files=files, format=fmt)


def _counts(values) -> dict[str, int]:
  """{value: count}, most frequent first, then by name."""
  counter = collections.Counter(values)
  return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def _split_words(data) -> Iterator[str]:
  """The whitespace words of a split: of its queries, or of its texts."""
  if isinstance(data, IntentSlotSplit):
    for words in data.words:
      yield from words
    return
  for texts in (data.texts_a, data.texts_b or ()):
    for text in texts:
      yield from text.split()


@dataclasses.dataclass
class UserDataset:
  """A checked dataset: its splits, label names, unseen labels, and words the
  student cannot read.

  Attributes:
    files: where the splits were found.
    splits: split name -> `TextClassificationSplit` or `IntentSlotSplit`.
    labels: the label names (text classification) or intents (intent-slot),
      sorted, from train only.
    slot_tags: intent-slot: 'O' first, then the other slot tags of train,
      sorted; None for text classification.
    unseen: split ('validation', 'test') -> {"labels": {name: examples},
      "slot_tags": {name: words}}: the labels (or intents) and slot tags of
      that split that train lacks, with their counts.
    unreadable: split -> {"words": its whitespace words, "unreadable": those
      the student vocabulary turns wholly into [UNK], "distinct_unreadable",
      "examples": {word: count} of the most frequent of them}
      (`text.unreadable.count_unreadable`); empty if not counted.
  """
  files: DatasetFiles
  splits: dict
  labels: list[str]
  slot_tags: list[str] | None
  unseen: dict
  unreadable: dict = dataclasses.field(default_factory=dict)

  @property
  def kind(self) -> str:
    return self.files.kind

  def summary(self) -> dict:
    """Examples per split, label counts, pairs or not, unseen labels, words
    the student cannot read (JSON)."""
    train = self.splits["train"]
    if self.kind == TEXT_CLASSIFICATION:
      labeled = {split: data.labels is not None
                 for split, data in self.splits.items()}
      pair = train.texts_b is not None
    else:
      labeled = {split: data.intents is not None
                 for split, data in self.splits.items()}
      pair = None
    return {
        "kind": self.kind,
        "format": self.files.format,
        "data_dir": self.files.data_dir,
        "files": dict(self.files.files),
        "examples": {split: len(data) for split, data in self.splits.items()},
        "labeled": labeled,
        "pair": pair,
        "num_labels": len(self.labels),
        "num_slot_tags": (len(self.slot_tags)
                          if self.slot_tags is not None else None),
        "unseen": {
            split: {
                "labels": dict(found["labels"]),
                "slot_tags": dict(found["slot_tags"]),
            } for split, found in self.unseen.items()
        },
        "unreadable_words": {
            split: dict(found, share=round(self._unreadable_share(split), 6),
                        examples=dict(found["examples"]))
            for split, found in self.unreadable.items()
        },
    }

  def _unreadable_share(self, split: str) -> float:
    found = self.unreadable[split]
    return found["unreadable"] / found["words"] if found["words"] else 0.0

  def warning(self, most: int = 10) -> str | None:
    """One message on every unseen label and slot tag; None if there is none.

    Per split: how many examples (and words) it costs, then the `most` most
    frequent unseen labels and tags; the rest are counted, not listed (all
    of them are in `unseen` and `summary()`).
    """
    label_word = "intent" if self.kind == INTENT_SLOT else "label"
    parts = []
    for split, found in self.unseen.items():
      items = [
          (count, f"{label_word} {name!r} ({count} example{'s' * (count != 1)})")
          for name, count in found["labels"].items()
      ]
      items += [
          (count, f"slot tag {name!r} ({count} word{'s' * (count != 1)})")
          for name, count in found["slot_tags"].items()
      ]
      if not items:
        continue
      items.sort(key=lambda item: -item[0])
      listed = ", ".join(text for _, text in items[:most])
      if len(items) > most:
        listed += f" and {len(items) - most} more"
      examples = sum(found["labels"].values())
      total = len(self.splits[split])
      cost = (f"{examples} of {total} examples ({examples / total:.1%}) have "
              f"{'an' if label_word == 'intent' else 'a'} {label_word} train "
              "lacks" if examples else "")
      words = sum(found["slot_tags"].values())
      if words:
        cost += ("; " if cost else "") + (
            f"{words} word{'s have' if words != 1 else ' has'} a slot tag "
            "train lacks")
      parts.append(f"{split} ({self.splits[split].path}): {cost}: {listed}")
    if not parts:
      return None
    subject = ("intents or slot tags" if self.kind == INTENT_SLOT else
               "labels")
    return (
        f"Some {subject} of validation or test are not in train, so the model "
        "cannot predict them; they are mapped to an unknown label and counted "
        "as errors in the scores. " + "; ".join(parts) + ". To learn them, "
        "add examples of them to train.")

  def unreadable_warning(self, threshold: float = UNREADABLE_SHARE,
                         most: int = 10) -> str | None:
    """One message on the splits whose words the student cannot read.

    A split is named when more than `threshold` of its whitespace words are
    wholly [UNK] to the student (`unreadable`), with its counts and its
    `most` most frequent such words; None if no split is.
    """
    names, parts = [], []
    for split, found in self.unreadable.items():
      share = self._unreadable_share(split)
      if share <= threshold:
        continue
      listed = ", ".join(f"{_show(word, 40)} ({count})" for word, count in
                         list(found["examples"].items())[:most])
      others = found["distinct_unreadable"] - min(most, len(found["examples"]))
      if others > 0:
        listed += f" and {_plural(others, 'other')}"
      names.append(split)
      parts.append(
          f"{split} ({self.splits[split].path}): {found['unreadable']} of "
          f"{found['words']} words ({share:.1%}) are [UNK], most often "
          f"{listed}")
    if not parts:
      return None
    return (
        f"More than {threshold:.0%} of the words of {' and '.join(names)} "
        "are unreadable to the student: it reads English (its vocabulary "
        "holds WordPieces of English text), so these words (other scripts, "
        "emoji) reach the model as [UNK], and it cannot tell them apart or "
        "learn from them. " + "; ".join(parts) + ". Where such words decide "
        "the label, expect low scores: the package has no student for other "
        "languages. Translate these texts into English, or carry on if these "
        "words are noise.")


def load_dataset(data_dir: str,
                 text_column: str = "text",
                 text_b_column: str | None = None,
                 label_column: str = "label",
                 vocab=None) -> UserDataset:
  """Finds, reads and checks every split of the dataset in `data_dir`.

  Args:
    data_dir: the dataset directory (see the module docstring).
    text_column: text classification: the column of the text (or the first
      text of a pair).
    text_b_column: text classification: the column of the second text of a
      pair (None: `text_a` and `text_b` are a pair when there is no `text`).
    label_column: text classification: the column of the label.
    vocab: the student's WordPiece vocabulary (a vocab.txt path or tokens),
      against which the words of each split are read (`unreadable`); None:
      the shipped student's (`data.default_student_vocab()`).

  Returns:
    A `UserDataset`. Train and validation carry labels; test may not.

  Raises:
    DataError: the dataset breaks the data contract: a file is malformed,
      splits disagree on single texts versus pairs, or train has a single
      class (an intent-slot train set may have one intent if it has slot
      tags other than 'O').
  """
  files = find_dataset(data_dir)
  splits = {}
  for split in SPLITS:
    if split not in files.files:
      continue
    path = files.files[split]
    require_labels = split != "test"
    if files.kind == TEXT_CLASSIFICATION:
      splits[split] = read_text_classification(
          path, text_column=text_column, text_b_column=text_b_column,
          label_column=label_column, require_labels=require_labels)
    else:
      splits[split] = read_intent_slot(path, require_labels=require_labels)
  train = splits["train"]
  unseen = {}
  if files.kind == TEXT_CLASSIFICATION:
    train_pair = train.texts_b is not None
    for split, data in splits.items():
      if (data.texts_b is not None) != train_pair:
        describe = {True: "pairs of texts", False: "single texts"}
        raise _error(
            data.path, None,
            f"the file holds {describe[not train_pair]}, but train "
            f"({train.path}) holds {describe[train_pair]}",
            "the same text columns in every split",
            "Give every split the same text columns, or name them with "
            "text_column and text_b_column.")
    labels = sorted(set(train.labels))
    known = set(labels)
    if len(labels) < 2:
      raise _error(
          train.path, None,
          f"all {len(train)} examples have the label {labels[0]!r}",
          "at least two different labels in train",
          "A classifier learns to tell labels apart: add examples of the "
          "other labels to train.")
    slot_tags = None
    for split in ("validation", "test"):
      if split in splits:
        found = splits[split].labels or []
        unseen[split] = {
            "labels": _counts(l for l in found if l not in known),
            "slot_tags": {},
        }
  else:
    labels = sorted(set(train.intents))
    tags = {tag for query_tags in train.tags for tag in query_tags}
    tags.discard(OUTSIDE_TAG)
    if len(labels) < 2 and not tags:
      raise _error(
          train.path, None,
          f"all {len(train)} queries have the intent {labels[0]!r} and every "
          "slot tag is 'O'",
          "at least two intents, or slot tags other than 'O', in train",
          "There is nothing to learn: add queries with other intents, or tag "
          "the slots of the queries.")
    slot_tags = [OUTSIDE_TAG] + sorted(tags)
    known, known_tags = set(labels), set(slot_tags)
    for split in ("validation", "test"):
      if split in splits:
        data = splits[split]
        unseen[split] = {
            "labels": _counts(i for i in data.intents or []
                              if i not in known),
            "slot_tags": _counts(t for query_tags in data.tags or []
                                 for t in query_tags if t not in known_tags),
        }
  # Each distinct word of the dataset is tokenized once, as the student's
  # fine-tuning featurizer tokenizes it.
  unreadable = unreadable_lib.count_unreadable(
      {split: _split_words(data) for split, data in splits.items()},
      vocab if vocab is not None else data_lib.default_student_vocab())
  return UserDataset(files=files, splits=splits, labels=labels,
                     slot_tags=slot_tags, unseen=unseen,
                     unreadable=unreadable)
