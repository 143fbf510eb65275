"""A user's text classification files: CSV, TSV or JSONL, read and checked.

One split is one file; the format follows the extension. The text is in a
column (or JSONL key) `text`, or a pair in `text_a` and `text_b`, and the
label in `label`, unless other names are given (the data contract:
`user_dataset`'s docstring). The GLUE TSV files are read here too
(`glue.read_glue_tsv`), so SST-2 given as a user's file and SST-2 by name are
read, and refused, by the same code. Prodigy's JSONL export (`prodigy
db-out`) is read as it is: a label as `label`, or picked in a choice as
`"accept": [label]`; lines answered 'reject' or 'ignore' are left out
(`records.accepted_rows`).
"""

from typing import Any

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import records

_PAIR_COLUMNS = ("text_a", "text_b")


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
    fix = _separator_fix(path, found) if what == "columns" else None
    raise errors.data_error(
        path, line, f"{there}; the {what} are {found}", expected,
        fix or f"Rename the {noun}s, or name yours with the text_column, "
        "text_b_column and label_column arguments (in the own-data job: "
        "--gin_bindings=\"own_data_steps.text_column = '<name>'\", and "
        "the same for text_b_column and label_column).")
  for column in [c for c in (text_a, text_b, label) if c]:
    if what != "keys" and found.count(column) > 1:
      raise errors.data_error(
          path, line, f"the header names the column {column!r} twice: {found}",
          "each column name once", "Rename or delete one of them.")
  return text_a, text_b, label


_SEPARATORS = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "'|'"}


def _separator_fix(path: str, found: list[str]) -> str | None:
  """The fix for a one-column header split on another separator, or None.

  A CSV file saved with semicolons (Excel in many European locales) or
  tabs, or a TSV file with commas, reads as one column whose name holds the
  real header.
  """
  if len(found) != 1:
    return None
  fmt = records.format_of(path)
  expected = "," if fmt == "csv" else "\t"
  counts = {sep: found[0].count(sep) for sep in _SEPARATORS if sep != expected}
  separator = max(counts, key=counts.get)
  if not counts[separator]:
    return None
  seen = f"The header is separated by {_SEPARATORS[separator]}"
  if separator == "\t":
    return f"{seen}: name the file .tsv instead of .{fmt}."
  if separator == ",":
    return f"{seen}: name the file .csv instead of .{fmt}."
  excel = " (in Excel: 'CSV UTF-8 (Comma delimited)')" if fmt == "csv" else ""
  return (f"{seen}, not {_SEPARATORS[expected]}: save the file again with "
          f"{_SEPARATORS[expected]} between fields{excel}, or convert it "
          f"with Python's csv module (read with delimiter={separator!r}, "
          f"write with delimiter={expected!r}).")


def _text_field(path: str, line: int, record: dict[str, Any], key: str,
                is_json: bool, allow_empty: bool = False) -> str:
  if is_json and key not in record:
    raise errors.data_error(
        path, line,
        f"the object has no key {key!r}; its keys are {list(record)}",
        f"every line to have the key {key!r}",
        "Add the key, or name the text key with text_column / "
        "text_b_column.")
  value = record[key]
  if not isinstance(value, str):
    raise errors.data_error(
        path, line,
        f"{key!r} is a JSON {errors.json_type(value)}: {errors.show(value)}",
        "a string", "Write the text as a JSON string.")
  if not value.strip() and not allow_empty:
    raise errors.data_error(
        path, line, f"the text {key!r} is empty ({value!r})",
        "a text with at least one non-space character",
        "Fill it in or delete the example.")
  return value


def _check_label_line(path: str, line: int, column: str, label: str,
                      fmt: str) -> None:
  """Refuses a label that holds a line break.

  A label is a class name. A quoted CSV field may span lines (and a JSON
  string may hold '\\n'), so a stray line break, or a double quote closed a
  line late, would make the label a class of its own that no other example
  has.
  """
  if len(label.splitlines()) < 2:
    return
  if fmt == "csv":
    fix = ("A quoted CSV field may span lines, but a label may not: remove "
           "the line break, or close the double quote that opens the label "
           "where the label ends.")
  else:
    fix = "Remove the line break ('\\n' in JSON) from the label."
  raise errors.data_error(
      path, line,
      f"the label {column!r} holds a line break: {errors.show(label)}",
      "a label on one line (a class name)", fix)


def read_text_classification(
    path: str,
    text_column: str = "text",
    text_b_column: str | None = None,
    label_column: str = "label",
    require_labels: bool = True,
    allow_empty_text: bool = False) -> examples.TextClassificationExamples:
  """Reads and checks one split of a text classification dataset.

  The format follows the extension: `.csv`, `.tsv` (split on tabs, quotes
  are text, as in GLUE), `.jsonl`, or `.yml` / `.yaml` for Rasa NLU data
  (`rasa_files`: each example's text and intent; the columns do not
  apply).

  `allow_empty_text` loosens a check of the data contract for files that
  others publish, which may break it without being wrong: the GLUE TSV
  files (`glue.read_glue_tsv`), read with an empty sentence accepted, as
  GLUE tools read them. A user's dataset (`user_dataset.load_dataset`) is
  read with it False.

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
    allow_empty_text: accept a text that is empty or only spaces (kept as
      it is) instead of refusing the example.

  Returns:
    `TextClassificationExamples`.

  Raises:
    DataError: the file breaks the data contract (`user_dataset`'s
      docstring), or a label holds a line break.
  """
  if rasa_files.is_rasa(path):
    # An intent classifier's Rasa NLU data: each example's text (markup
    # removed) and its intent; the columns do not apply.
    found = rasa_files.read_rasa(path)
    return examples.TextClassificationExamples(
        path=path, texts_a=[e.text for e in found], texts_b=None,
        labels=[e.intent for e in found],
        line_numbers=[e.line for e in found])
  fmt = records.format_of(path)
  if fmt == "jsonl":
    expected = ("one JSON object per line, with keys for the text(s) and the "
                "label")
    rows, left_out = records.accepted_rows(
        path, records.read_jsonl(path, expected))
    first_line, first = rows[0]
    columns, what = list(first), "keys"
    if (label_column == "label" and "label" not in first and
        "accept" in first):
      # Prodigy's choice interface (textcat.manual): the picked label in a
      # list of one.
      label_column = "accept"
  else:
    first_line, columns, rows = records.read_table(path, fmt)
    left_out = []
    if not rows:
      raise errors.data_error(
          path, None, f"the file has a header {columns} but no examples",
          "at least one example after the header")
    what = "columns"
  is_json = fmt == "jsonl"
  col_a, col_b, col_label = _choose_columns(
      path, first_line, columns, what, text_column, text_b_column,
      label_column, require_labels)
  if is_json:
    col_label = label_column  # Looked up on every line.
  texts_a, texts_b, labels, line_numbers = [], [], [], []
  for line, record in rows:
    texts_a.append(_text_field(path, line, record, col_a, is_json,
                               allow_empty_text))
    if col_b:
      texts_b.append(_text_field(path, line, record, col_b, is_json,
                                 allow_empty_text))
    label = None
    if col_label and col_label in record:
      value = record[col_label]
      label = (records.json_label(path, line, col_label, value)
               if is_json else value)
      label = label.strip() if label is not None else None
    if require_labels and not label:
      found = (f"the object has no key {label_column!r}; its keys are "
               f"{list(record)}" if is_json and col_label not in record else
               f"the label {label_column!r} is empty")
      raise errors.data_error(
          path, line, found, f"a label {label_column!r} on every example",
          "Fill in the label or delete the example.")
    if label:
      _check_label_line(path, line, label_column, label, fmt)
    labels.append(label or None)
    line_numbers.append(line)
  records.check_all_or_none(path, labels, line_numbers,
                            f"label {label_column!r}")
  return examples.TextClassificationExamples(
      path=path,
      texts_a=texts_a,
      texts_b=texts_b if col_b else None,
      labels=labels if any(labels) else None,
      line_numbers=line_numbers, left_out=left_out)

