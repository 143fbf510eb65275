"""Tests of text_classification_files: reading and checking one split."""

import pytest

from mixvocab_tf.datasets import text_classification_files
from mixvocab_testing.datasets_testing import CSV, raises, write, write_jsonl


# -----------------------------------------------------------------------------
# read_text_classification: reading.
# -----------------------------------------------------------------------------


def test_read_csv_quoted_fields_line_numbers_crlf_and_blank_lines(tmp_path):
  path = write(
      tmp_path / "train.csv",
      'text,label\r\n'
      '"a film, long",pos\r\n'
      '\r\n'
      '"two\r\nlines, ""quoted""",neg\r\n'
      '   \r\n'
      'last,pos\r\n')
  split = text_classification_files.read_text_classification(path)
  assert split.texts_a == ["a film, long", 'two\nlines, "quoted"', "last"]
  assert split.texts_b is None
  assert split.labels == ["pos", "neg", "pos"]
  assert split.line_numbers == [2, 4, 7]


def test_read_pair_csv(tmp_path):
  path = write(tmp_path / "train.csv",
               "text_a,text_b,label\nA man sleeps.,A man rests.,yes\n"
               "It rains.,It is sunny., no \n")
  split = text_classification_files.read_text_classification(path)
  assert split.texts_a == ["A man sleeps.", "It rains."]
  assert split.texts_b == ["A man rests.", "It is sunny."]
  assert split.labels == ["yes", "no"]  # Labels are stripped.


def test_read_tsv_keeps_quotes(tmp_path):
  path = write(tmp_path / "dev.tsv",
               'sentence\tlabel\n"it\'s" a "film\t1\n')
  split = text_classification_files.read_text_classification(
      path, text_column="sentence")
  assert split.texts_a == ['"it\'s" a "film']
  assert split.labels == ["1"]


def test_read_csv_column_overrides(tmp_path):
  path = write(tmp_path / "train.csv",
               "id,premise,hypothesis,gold\n1,p1,h1,e\n2,p2,h2,c\n")
  split = text_classification_files.read_text_classification(
      path, text_column="premise", text_b_column="hypothesis",
      label_column="gold")
  assert (split.texts_a, split.texts_b, split.labels) == (
      ["p1", "p2"], ["h1", "h2"], ["e", "c"])


def test_read_jsonl_labels_numbers_and_booleans(tmp_path):
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"text": "a", "label": 0}, {"text": "b", "label": 1.0},
      {"text": "c", "label": True}, {"text": "d", "label": " neg "}])
  split = text_classification_files.read_text_classification(path)
  assert split.labels == ["0", "1", "true", "neg"]
  assert split.line_numbers == [1, 2, 3, 4]


def test_read_jsonl_a_list_of_one_label_as_doccano_exports_it(tmp_path):
  # doccano's text classification JSONL: {"id", "text", "label": [...]}.
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"id": 1, "text": "a", "label": ["positive"], "Comments": []},
      {"id": 2, "text": "b", "label": [0]}, {"text": "c", "label": "neg"}])
  split = text_classification_files.read_text_classification(path)
  assert split.labels == ["positive", "0", "neg"]


def test_read_jsonl_prodigys_export_as_it_is(tmp_path):
  # prodigy db-out: every answer kept; textcat.manual's choice as "accept",
  # textcat.teach's label with its answer.
  options = [{"id": "POS", "text": "POS"}, {"id": "NEG", "text": "NEG"}]
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"text": "great", "options": options, "accept": ["POS"],
       "answer": "accept", "_input_hash": 1, "_view_id": "choice"},
      {"text": "meh", "options": options, "accept": [], "answer": "ignore"},
      {"text": "awful", "options": options, "accept": ["NEG"],
       "answer": "accept"},
      {"text": "wrong", "options": options, "accept": ["POS"],
       "answer": "reject"}])
  split = text_classification_files.read_text_classification(path)
  assert (split.texts_a, split.labels) == (["great", "awful"], ["POS", "NEG"])
  assert (split.line_numbers, split.left_out) == ([1, 3], [2, 4])
  binary = write_jsonl(tmp_path / "binary.jsonl", [
      {"text": "goal!", "label": "SPORTS", "answer": "accept"},
      {"text": "stocks fell", "label": "SPORTS", "answer": "reject"}])
  split = text_classification_files.read_text_classification(binary)
  assert (split.labels, split.left_out) == (["SPORTS"], [2])
  # An accepted choice without a label is refused, naming the key.
  empty = write_jsonl(tmp_path / "empty.jsonl", [
      {"text": "great", "accept": [], "answer": "accept"}])
  raises("line 1: the label 'accept' is empty",
         text_classification_files.read_text_classification, empty)
  # Nothing accepted: nothing to read.
  rejected = write_jsonl(tmp_path / "rejected.jsonl", [
      {"text": "great", "accept": ["POS"], "answer": "reject"}])
  raises("line 1: every line's \"answer\" is 'reject' or 'ignore' \\(1 line\\)",
         text_classification_files.read_text_classification, rejected)


def test_read_jsonl_blank_lines_and_crlf(tmp_path):
  path = write(tmp_path / "train.jsonl",
               '{"text": "a", "label": "x"}\r\n\r\n'
               '{"text": "b", "label": "y"}\r\n')
  split = text_classification_files.read_text_classification(path)
  assert split.texts_a == ["a", "b"]
  assert split.line_numbers == [1, 3]


@pytest.mark.parametrize("name, content", [
    ("test.csv", "text\nfirst\nsecond\n"),
    ("test.csv", "text,label\nfirst,\nsecond,\n"),
    ("test.jsonl", '{"text": "first"}\n{"text": "second", "label": null}\n'),
])
def test_read_test_split_without_labels(tmp_path, name, content):
  path = write(tmp_path / name, content)
  split = text_classification_files.read_text_classification(
      path, require_labels=False)
  assert split.texts_a == ["first", "second"]
  assert split.labels is None


def test_read_test_split_with_some_labels_refused(tmp_path):
  path = write(tmp_path / "test.csv", "text,label\nfirst,a\nsecond,\n")
  error = raises("line 3: the example has no label 'label', but the one on "
                 "line 2 has one",
                 text_classification_files.read_text_classification,
                 path, require_labels=False)
  assert error.line == 3


# -----------------------------------------------------------------------------
# read_text_classification: errors.
# -----------------------------------------------------------------------------


def test_missing_column_lists_the_columns_found(tmp_path):
  path = write(tmp_path / "train.csv", "sentence,label\na,b\n")
  error = raises(r"line 1: there is no column 'text'; the columns are "
                 r"\['sentence', 'label'\]",
                 text_classification_files.read_text_classification, path)
  assert "'text_a' and 'text_b'" in str(error)
  # The job's users name their columns with gin bindings, not arguments.
  assert ("--gin_bindings=\"own_data_steps.text_column = '<name>'\""
          in str(error))


def test_missing_label_column(tmp_path):
  path = write(tmp_path / "train.tsv", "text\tgold\na\tb\n")
  raises(r"no column 'label'; the columns are \['text', 'gold'\]",
         text_classification_files.read_text_classification, path)


def test_missing_key_in_a_later_jsonl_line(tmp_path):
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"text": "a", "label": "x"}, {"txt": "b", "label": "y"}])
  raises(r"line 2: the object has no key 'text'; its keys are "
         r"\['txt', 'label'\]",
         text_classification_files.read_text_classification, path)


@pytest.mark.parametrize("name, content, line, fields", [
    ("train.csv", "text,label\na,x\nb, c,y\n", 3, 3),
    ("train.tsv", "text\tlabel\na\tx\nb\n", 3, 1),
])
def test_row_with_wrong_number_of_fields(tmp_path, name, content, line,
                                         fields):
  path = write(tmp_path / name, content)
  error = raises(f"line {line}: the row has {fields} fields",
                 text_classification_files.read_text_classification, path)
  assert "2 fields, one per column of the header ['text', 'label']" in str(
      error)


def test_unbalanced_quote_in_csv(tmp_path):
  path = write(tmp_path / "train.csv",
               'text,label\na,x\n"oops,y\nc,z\n')
  raises("line 3: the CSV record starting here",
         text_classification_files.read_text_classification, path)


@pytest.mark.parametrize("content, line, match", [
    ("text,label\ngood,pos\n  ,neg\n", 3, "the text 'text' is empty"),
    ("text,label\ngood,pos\nbad, \n", 3, "the label 'label' is empty"),
    ("text_a,text_b,label\na,b,x\nc,,y\n", 3, "the text 'text_b' is empty"),
])
def test_empty_text_or_label(tmp_path, content, line, match):
  path = write(tmp_path / "train.csv", content)
  error = raises(f"line {line}: {match}",
                 text_classification_files.read_text_classification, path)
  assert error.line == line


@pytest.mark.parametrize("name, content, line", [
    # A quoted label may span lines in CSV; it would be a class of its own.
    ("train.csv", 'text,label\ngood film,pos\nbad film,"neg\native"\n', 3),
    # A quote closed a line late takes the next row into the label.
    ("train.csv", 'text,label\ngood film,pos\nbad film,"neg\r\n'
     'dull film,neg"\n', 3),
    ("train.jsonl", '{"text": "good film", "label": "pos"}\n'
     '{"text": "bad film", "label": "neg\\native"}\n', 2),
])
def test_label_holding_a_line_break(tmp_path, name, content, line):
  path = write(tmp_path / name, content)
  error = raises(f"line {line}: the label 'label' holds a line break: "
                 r"'neg\\n.*'\. Expected a label on one line \(a class "
                 r"name\)\. .*line break",
                 text_classification_files.read_text_classification, path)
  assert (error.path, error.line) == (path, line)
  if name.endswith(".csv"):
    assert "close the double quote" in str(error)
  # A text may hold one: only labels are names.
  write(tmp_path / "ok.csv", 'text,label\n"two\nlines",pos\n')
  split = text_classification_files.read_text_classification(
      str(tmp_path / "ok.csv"))
  assert (split.texts_a, split.labels) == (["two\nlines"], ["pos"])


def test_invalid_utf8_reports_line_and_byte_offset(tmp_path):
  data = "text,label\ngood,pos\ncaf".encode() + b"\xe9,neg\n"
  path = write(tmp_path / "train.csv", data)
  error = raises(r"line 3: byte offset 23 of the file \(byte 3 of the line",
                 text_classification_files.read_text_classification, path)
  assert "not valid UTF-8" in str(error)
  assert "iconv" in str(error)


def test_byte_order_mark_dropped(tmp_path):
  # Excel's "CSV UTF-8" starts the file with one.
  plain = text_classification_files.read_text_classification(
      write(tmp_path / "plain.csv", CSV.encode()))
  split = text_classification_files.read_text_classification(
      write(tmp_path / "train.csv", b"\xef\xbb\xbf" + CSV.encode()))
  assert (split.texts_a, split.labels, split.line_numbers) == (
      plain.texts_a, plain.labels, plain.line_numbers)
  path = write(tmp_path / "train.tsv",
               b"\xef\xbb\xbftext\tlabel\r\na\tx\r\n \ty\r\n")
  split = text_classification_files.read_text_classification(
      path, allow_empty_text=True)
  assert (split.texts_a, split.labels) == (["a", " "], ["x", "y"])
  raises("line 3: the text 'text' is empty",
         text_classification_files.read_text_classification, path)
  path = write(tmp_path / "train.jsonl",
               b'\xef\xbb\xbf{"text": "a", "label": 1}\n')
  assert text_classification_files.read_text_classification(
      path).labels == ["1"]
  # A byte offset still counts the mark: it is the file's.
  path = write(tmp_path / "bad.csv", b"\xef\xbb\xbftext,label\ncaf\xe9,x\n")
  raises(r"line 2: byte offset 17 of the file",
         text_classification_files.read_text_classification, path)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_refused_with_the_conversion(tmp_path, encoding):
  # With its byte-order mark (Excel's 'Unicode Text'), or without one.
  path = write(tmp_path / "train.csv", CSV.encode(encoding))
  error = raises("UTF-16" if encoding == "utf-16" else
                 r"byte offset 0 of the file is a NUL byte",
                 text_classification_files.read_text_classification, path)
  assert error.line == 1
  assert "iconv -f utf-16 -t utf-8" in str(error)
  path = write(tmp_path / "nul.csv", CSV.encode() + b"b\x00c,neg\n")
  error = raises("is a NUL byte",
                 text_classification_files.read_text_classification, path)
  assert error.line == CSV.count("\n") + 1


@pytest.mark.parametrize("name, content, fix", [
    ("train.csv", "text;label\na;x\nb;y\n",
     r"separated by semicolons, not commas: save the file again with commas "
     r"between fields \(in Excel"),
    ("train.csv", "text\tlabel\na\tx\n",
     r"separated by tabs: name the file .tsv instead of .csv"),
    ("train.tsv", "text,label\na,x\n",
     r"separated by commas: name the file .csv instead of .tsv"),
    ("train.tsv", "text|label\na|x\n",
     r"separated by '\|', not tabs: save the file again with tabs between "
     r"fields, or convert"),
])
def test_another_separator_is_named(tmp_path, name, content, fix):
  error = raises(fix, text_classification_files.read_text_classification,
                 write(tmp_path / name, content.encode()))
  assert "there are no columns 'text', 'label'" in str(error)
  # A header that is only wrong names the columns to rename.
  raises("Rename the columns",
                 text_classification_files.read_text_classification,
                 write(tmp_path / "words.csv", b"sentence\nhi\n"))


@pytest.mark.parametrize("name, content, line", [
    ("train.csv", CSV + "text,label\nfine,neg\n", 4),
    ("train.tsv", "text\tlabel\na\tx\n text \tlabel\nb\ty\n", 3),
])
def test_duplicated_header(tmp_path, name, content, line):
  path = write(tmp_path / name, content)
  raises(f"line {line}: the row repeats the header \\['text', 'label'\\]",
         text_classification_files.read_text_classification, path)


@pytest.mark.parametrize("line, match", [
    ('{"text": "a", "label": "x"', "the line is not valid JSON"),
    ('["a", "x"]', "the line holds a JSON array, not an object"),
    ('{"text": ["a"], "label": "x"}', "'text' is a JSON array"),
    ('{"text": "a", "label": 0.5}', "'label' is the number 0.5"),
    ('{"text": "a", "label": {"y": 1}}', "'label' is a JSON object"),
    # Several labels: the model gives one; the fix says how to give it.
    ('{"text": "a", "label": ["x", "y"]}',
     "'label' is a JSON array: .*The model gives each text one label: give "
     "its main one, or join several into one name"),
    ('{"text": "a"}', "the object has no key 'label'"),
    # doccano's export of a text not labelled.
    ('{"text": "a", "label": []}', "the label 'label' is empty"),
    ('{"text": "a", "label": [["x"]]}', r"'label' is a JSON array: \['x'\]"),
])
def test_bad_jsonl_lines(tmp_path, line, match):
  path = write(tmp_path / "train.jsonl",
               '{"text": "ok", "label": "x"}\n\n' + line + "\n")
  error = raises("line 3: " + match,
                 text_classification_files.read_text_classification, path)
  assert error.line == 3


@pytest.mark.parametrize("name, content, match", [
    ("train.csv", "", "the file is empty"),
    ("train.jsonl", "\n  \n", "the file is empty"),
    ("train.csv", "text,label\n\n", "has a header .* but no examples"),
])
def test_empty_file_or_split(tmp_path, name, content, match):
  path = write(tmp_path / name, content)
  raises(match, text_classification_files.read_text_classification, path)


def test_unknown_extension(tmp_path):
  path = write(tmp_path / "train.txt", CSV)
  raises(r"'train.txt' does not end in a known extension",
         text_classification_files.read_text_classification, path)
