"""CSV, TSV and JSONL records: the table formats of a user's files.

A CSV or TSV file is a header row, then one record per row (a CSV record may
span lines when a quoted field holds line breaks; it is numbered by the line
where it starts). A JSONL file is one JSON object per line. Both give each
record with its 1-based line, so that every `DataError` names the line.
Blank lines are skipped; line numbers still count them.
"""

import csv
import io
import json
import math
import os
from typing import Any, Callable, Iterator

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors

#: The table formats, by file extension.
FORMATS = ("csv", "tsv", "jsonl")


def format_of(path: str, allowed: tuple[str, ...] = FORMATS,
              hint: Callable[[str], str | None] | None = None) -> str:
  """The format of `path`, from its extension; `hint(path)`: a fix that
  its content suggests, where the extension is none of `allowed`."""
  ext = os.path.splitext(path)[1].lower().lstrip(".")
  if ext not in allowed:
    raise errors.data_error(
        path, None,
        f"the file name {os.path.basename(path)!r} does not end in a known "
        "extension",
        "one of " + ", ".join("." + a for a in allowed),
        (hint and errors.isfile(path) and hint(path)) or
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
                 f"{errors.show(lines[start - 1])}")
        fix = "Remove the carriage return, or quote the field that holds it."
      elif fmt == "csv":
        found = (f"the CSV record starting here (and read up to line {end}) "
                 f"is malformed: {e}")
        fix = ("A field that starts with a double quote must end with one, "
               "followed by a comma or the end of the line; a double quote "
               "inside a quoted field is written twice (\"\"). Check for an "
               "unbalanced quote on this line.")
      else:
        found = (f"the TSV line is malformed: {e}: "
                 f"{errors.show(lines[start - 1])}")
        fix = "Fix the line."
      raise errors.data_error(
          path, start, found,
          f"well-formed {fmt.upper()} (fields separated by "
          f"{'commas' if fmt == 'csv' else 'tabs'})", fix) from None
    end = reader.line_num
    if start == end and not lines[start - 1].strip():
      continue  # A blank line.
    yield start, end, row


def read_table(
    path: str, fmt: str
) -> tuple[int, list[str], list[tuple[int, dict[str, str]]]]:
  """Reads a CSV/TSV file: (header line, header, [(line, {column: field})]).
  """
  lines = decoding.read_lines(
      path, f"a {fmt.upper()} file: a header row, then one example per row")
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
      raise errors.data_error(
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
      raise errors.data_error(
          path, start,
          f"the row has {len(row)} fields{spans}: {errors.show(row)}",
          f"{len(header)} fields, one per column of the header {header}",
          fix)
    rows.append((start, dict(zip(header, row))))
  return header_line, header, rows


def write_table(header: list[str], rows: list[list[str]], fmt: str) -> str:
  """A CSV or TSV file's text: `header`, then `rows`, each a line.

  CSV quotes a field only where it must (commas, double quotes, line
  breaks); TSV is written as GLUE's, unquoted, so its fields may hold no
  tab or line break (ValueError).
  """
  text = io.StringIO()
  if fmt == "csv":
    writer = csv.writer(text, lineterminator="\n")
  else:
    writer = csv.writer(text, delimiter="\t", quoting=csv.QUOTE_NONE,
                        quotechar=None, lineterminator="\n")
  for row in [header] + list(rows):
    if fmt != "csv" and any("\t" in f or "\n" in f for f in row):
      raise ValueError(f"A TSV field may hold no tab or line break: {row}")
    writer.writerow(row)
  return text.getvalue()


def read_jsonl(path: str,
               expected: str) -> list[tuple[int, dict[str, Any]]]:
  """Reads a JSONL file: [(line, object)], blank lines skipped."""
  lines = decoding.read_lines(path, expected)
  rows = []
  for line_number, line in enumerate(lines, start=1):
    if not line.strip():
      continue
    try:
      value = json.loads(line)
    except json.JSONDecodeError as e:
      raise errors.data_error(
          path, line_number,
          f"the line is not valid JSON ({e.msg} at column {e.colno}): "
          f"{errors.show(line)}", expected,
          "JSONL holds one complete JSON object per line: no object spread "
          "over several lines, no enclosing [ ], no commas between lines."
      ) from None
    if not isinstance(value, dict):
      raise errors.data_error(
          path, line_number,
          f"the line holds a JSON {errors.json_type(value)}, not an object: "
          f"{errors.show(line)}", expected,
          "Write each example as a JSON object {...} on its own line.")
    rows.append((line_number, value))
  return rows


#: Prodigy's answers that leave a line out: the annotator rejected the task,
#: or skipped it. Its export (`prodigy db-out`) keeps every answer.
LEFT_OUT_ANSWERS = ("reject", "ignore")


def accepted_rows(
    path: str, rows: list[tuple[int, dict[str, Any]]]
) -> tuple[list[tuple[int, dict[str, Any]]], list[int]]:
  """(the rows to read, the lines left out) of a JSONL file: a line whose
  "answer" is 'reject' or 'ignore' (Prodigy's) is left out; one answered
  'accept', or without an answer, is read."""
  kept, left_out = [], []
  for line, record in rows:
    if record.get("answer") in LEFT_OUT_ANSWERS:
      left_out.append(line)
    else:
      kept.append((line, record))
  if not kept:
    raise errors.data_error(
        path, left_out[0], f"every line's \"answer\" is 'reject' or "
        f"'ignore' ({errors.plural(len(left_out), 'line')})",
        "lines answered 'accept' (Prodigy's annotations; the others are "
        "left out)", "Accept the annotations in Prodigy, or export the "
        "dataset that holds them.")
  return kept, left_out


def json_label(path: str, line: int, key: str, value: Any) -> str | None:
  """A label read from JSON, as a string; None when null.

  A list of one label is that label, an empty list None: annotation tools
  export a text's labels as a list (doccano's `"label": ["positive"]`, its
  `"cats"`), empty when the text has none.
  """
  if isinstance(value, list) and len(value) <= 1:
    value = value[0] if value else None
  if value is None:
    return None
  if isinstance(value, bool):
    return "true" if value else "false"
  if isinstance(value, int):
    return str(value)
  if isinstance(value, float):
    if math.isfinite(value) and value.is_integer():
      return str(int(value))
    raise errors.data_error(
        path, line, f"{key!r} is the number {value!r}",
        "a class name (a string), an integer or a boolean",
        "Class labels are names, not measurements; this reader does no "
        "regression.")
  if isinstance(value, str):
    return value
  raise errors.data_error(
      path, line,
      f"{key!r} is a JSON {errors.json_type(value)}: {errors.show(value)}",
      "a class name (a string), an integer or a boolean",
      "The model gives each text one label: give its main one, or join "
      "several into one name ('a;b'), each combination then a class of its "
      "own." if isinstance(value, list) and len(value) > 1 else None)


def check_all_or_none(path: str, values: list[Any], line_numbers: list[int],
                      what: str, expected: str | None = None) -> None:
  """Refuses a split where some examples have `what` and others not
  (`expected`: what the message says is expected; None: a test split's
  rule)."""
  missing = [i for i, value in enumerate(values) if value is None]
  if missing and len(missing) < len(values):
    present = next(i for i, value in enumerate(values) if value is not None)
    raise errors.data_error(
        path, line_numbers[missing[0]],
        f"the example has no {what}, but the one on line "
        f"{line_numbers[present]} has one",
        expected or f"{what} on every example of a test split, or on none "
        "(predictions only)", "Fill it in, or remove it from every example.")
