"""Tests of splitting: one labelled file into the own-data job's splits."""

import collections
import csv
import io
import json
import os
import subprocess
import sys

import pytest

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import layout
from mixvocab_tf.datasets import splitting
from mixvocab_tf.datasets import user_dataset
from mixvocab_testing.datasets_testing import (
    raises, write, write_goo, write_jsonl)

#: Examples per label: the shares at 0.1 are 3.0, 1.2, 0.6 (half up: 1), 0.2.
COUNTS = {"often": 30, "some": 12, "few": 6, "rare": 2}


def _labelled(counts=None):
  """(text, label) pairs, labels interleaved, some texts CSV-hostile."""
  pairs = []
  for label, count in (counts or COUNTS).items():
    for i in range(count):
      text = f"{label} {i}"
      if i % 5 == 1:
        text += ', with a comma and "quotes"'
      pairs.append((i, text, label))
  return [(text, label) for _, text, label in sorted(pairs)]


def _csv(pairs, header=("text", "label")):
  out = io.StringIO()
  writer = csv.writer(out, lineterminator="\n")
  writer.writerow(header)
  writer.writerows(pairs)
  return out.getvalue()


def _read_split(path):
  data = user_dataset.load_dataset(path).splits
  return {split: list(zip(d.texts_a, d.labels)) for split, d in data.items()}


def test_csv_stratified_complete_in_order_and_loadable(tmp_path):
  pairs = _labelled()
  pairs.insert(3, ("one line\nand another", "often"))  # A quoted line break.
  source = write(tmp_path / "all.csv", _csv(pairs))
  out = str(tmp_path / "data")
  summary = splitting.split_dataset(source, out, validation_fraction=0.1,
                                    test_fraction=0.1, seed=3)
  assert summary["files"] == {s: os.path.join(out, f"{s}.csv")
                              for s in ("train", "validation", "test")}
  splits = _read_split(out)  # The job's own reader accepts them.
  # Every example once, in some split, each split in the file's order.
  assert sorted(sum(splits.values(), [])) == sorted(pairs)
  for examples in splits.values():
    assert examples == [p for p in pairs if p in examples]
  # Half up per label, one left in train at least: 'rare' stays in train.
  for split in ("validation", "test"):
    counts = collections.Counter(label for _, label in splits[split])
    assert counts == {"often": 3, "some": 1, "few": 1}, split
  assert summary["examples"] == {"train": 41, "validation": 5, "test": 5}
  assert summary["labels_only_in_train"] == ["rare"]


def test_same_seed_same_files_other_seed_other_draw(tmp_path):
  source = write(tmp_path / "all.csv", _csv(_labelled()))
  read = lambda d: (tmp_path / d / "validation.csv").read_text()
  for name, seed in (("a", 0), ("b", 0), ("c", 1)):
    splitting.split_dataset(source, str(tmp_path / name), seed=seed)
  assert read("a") == read("b")
  assert read("a") != read("c")


def test_tsv_pairs_keep_columns_and_fields(tmp_path):
  lines = ["text_a\ttext_b\tlabel"] + [
      f"first {i} \"quoted\"\tsecond {i}\t{'yes' if i % 2 else 'no'}"
      for i in range(20)]
  source = write(tmp_path / "pairs.tsv", "\n".join(lines) + "\n")
  out = str(tmp_path / "data")
  splitting.split_dataset(source, out)
  written = sum(((tmp_path / "data" / f"{s}.tsv").read_text().splitlines()[1:]
                 for s in ("train", "validation")), [])
  assert sorted(written) == sorted(lines[1:])  # Fields as they were.
  train = user_dataset.load_dataset(out).splits["train"]
  assert train.texts_b is not None


def test_jsonl_text_classification_with_other_columns(tmp_path):
  objects = [{"utterance": text, "intent": label}
             for text, label in _labelled()]
  source = write_jsonl(tmp_path / "all.jsonl", objects)
  out = str(tmp_path / "data")
  summary = splitting.split_dataset(source, out, text_column="utterance",
                                    label_column="intent")
  assert (summary["kind"], summary["format"]) == (
      examples_lib.TEXT_CLASSIFICATION, "jsonl")
  lines = [json.loads(line) for s in ("train", "validation")
           for line in (tmp_path / "data" / f"{s}.jsonl").read_text()
           .splitlines()]
  assert sorted(map(json.dumps, lines)) == sorted(map(json.dumps, objects))
  loaded = user_dataset.load_dataset(out, text_column="utterance",
                                     label_column="intent")
  assert len(loaded.splits["validation"]) == summary["examples"]["validation"]


def test_a_conll_file_named_txt_is_told_its_name(tmp_path):
  path = write(tmp_path / "all.txt", "-DOCSTART- O\n\nEU B-ORG\nsays O\n")
  raises(r"all.txt.*rename it to all.conll", splitting.split_dataset, path,
         str(tmp_path / "data"))


def test_prodigys_rejected_and_ignored_lines_are_in_no_split(tmp_path):
  # prodigy db-out keeps every answer: the accepted lines are split as they
  # are, the others left out and counted.
  objects = [{"text": text, "label": label, "answer": "accept",
              "_input_hash": i} for i, (text, label) in enumerate(_labelled())]
  objects[3]["answer"] = "reject"
  objects[7]["answer"] = "ignore"
  source = write_jsonl(tmp_path / "db_out.jsonl", objects)
  summary = splitting.split_dataset(source, str(tmp_path / "data"))
  assert summary["lines_left_out"] == 2
  assert sum(summary["examples"].values()) == len(objects) - 2
  lines = [json.loads(line) for s in ("train", "validation")
           for line in (tmp_path / "data" / f"{s}.jsonl").read_text()
           .splitlines()]
  assert sorted(map(json.dumps, lines)) == sorted(
      json.dumps(o) for o in objects if o["answer"] == "accept")
  # Without such lines the summary has no count.
  accepted = write_jsonl(tmp_path / "accepted.jsonl",
                         [o for o in objects if o["answer"] == "accept"])
  assert "lines_left_out" not in splitting.split_dataset(
      accepted, str(tmp_path / "data2"))


def _queries():
  words = [["play", "jazz", "now"], ["book", "a", "table"], ["play", "rock"]]
  tags = [["O", "B-genre", "O"], ["O", "O", "O"], ["O", "B-genre"]]
  intents = ["PlayMusic", "BookRestaurant", "PlayMusic"]
  return [(w + [str(i)], t + ["O"], n)
          for i in range(10) for w, t, n in zip(words, tags, intents)]


@pytest.mark.parametrize("fmt", ["goo", "jsonl"])
def test_intent_slot_goo_and_jsonl(tmp_path, fmt):
  queries = _queries()
  if fmt == "goo":
    source = write_goo(tmp_path / "all",
                       seq_in=[" ".join(w) for w, _, _ in queries],
                       seq_out=[" ".join(t) for _, t, _ in queries],
                       label=[n for _, _, n in queries])
  else:
    source = write_jsonl(tmp_path / "all.jsonl", [
        {"tokens": w, "tags": t, "intent": n} for w, t, n in queries])
  out = str(tmp_path / "data")
  summary = splitting.split_dataset(source, out, validation_fraction=0.2)
  assert (summary["kind"], summary["format"]) == (examples_lib.INTENT_SLOT,
                                                  fmt)
  found = layout.find_dataset(out)
  assert (found.kind, found.format) == (examples_lib.INTENT_SLOT, fmt)
  splits = user_dataset.load_dataset(out).splits
  got = [(w, t, n) for d in splits.values()
         for w, t, n in zip(d.words, d.tags, d.intents)]
  assert sorted(map(str, got)) == sorted(map(str, queries))
  # 20 PlayMusic and 10 BookRestaurant queries at 0.2: 4 and 2.
  assert collections.Counter(splits["validation"].intents) == {
      "PlayMusic": 4, "BookRestaurant": 2}


@pytest.mark.parametrize("fmt", ["goo", "doccano", "conll"])
def test_a_slot_taggers_data_without_intents(tmp_path, fmt):
  queries = _queries()
  if fmt == "conll":
    source = write(tmp_path / "all.conll", "".join(
        "".join(f"{w} {t}\n" for w, t in zip(words, tags)) + "\n"
        for words, tags, _ in queries))
  elif fmt == "goo":  # No `label` file.
    source = write_goo(tmp_path / "all",
                       seq_in=[" ".join(w) for w, _, _ in queries],
                       seq_out=[" ".join(t) for _, t, _ in queries])
  else:  # doccano's sequence-labelling export: spans under "label".
    lines = []
    for words, tags, _ in queries:
      starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words))]
      spans = [[starts[i], starts[i] + len(words[i]), tag[2:]]
               for i, tag in enumerate(tags) if tag.startswith("B-")]
      lines.append({"text": " ".join(words), "label": spans})
    source = write_jsonl(tmp_path / "all.jsonl", lines)
  out = str(tmp_path / "data")
  summary = splitting.split_dataset(source, out, validation_fraction=0.2)
  assert summary["kind"] == examples_lib.INTENT_SLOT
  assert summary["slot_tagger"]
  dataset = user_dataset.load_dataset(out)
  assert dataset.slot_tagger
  assert sum(len(d) for d in dataset.splits.values()) == len(queries)


def test_byte_order_marks_are_not_copied(tmp_path):
  # Each Goo file as Notepad saves it; the lines are copied as read.
  queries = _queries()
  source = write_goo(tmp_path / "all",
                     seq_in=[" ".join(w) for w, _, _ in queries],
                     seq_out=[" ".join(t) for _, t, _ in queries],
                     label=[n for _, _, n in queries])
  for name in ("seq.in", "seq.out", "label"):
    path = os.path.join(source, name)
    with open(path, "rb") as f:
      data = f.read()
    write(path, b"\xef\xbb\xbf" + data)
  out = str(tmp_path / "data")
  splitting.split_dataset(source, out, validation_fraction=0.2)
  for root, _, names in os.walk(out):
    for name in names:
      with open(os.path.join(root, name), "rb") as f:
        assert b"\xef\xbb\xbf" not in f.read(), name
  splits = user_dataset.load_dataset(out).splits
  got = [(w, t, n) for d in splits.values()
         for w, t, n in zip(d.words, d.tags, d.intents)]
  assert sorted(map(str, got)) == sorted(map(str, queries))


def test_a_broken_record_stops_it_naming_the_line(tmp_path):
  source = write(tmp_path / "all.csv", "text,label\ngood,pos\n,neg\n")
  error = raises("line 3", splitting.split_dataset, source,
                 str(tmp_path / "data"))
  assert "empty" in str(error)
  assert not (tmp_path / "data").exists()


def test_an_unlabelled_file_is_refused(tmp_path):
  source = write(tmp_path / "all.csv", "text\ngood\nbad\n")
  raises("label", splitting.split_dataset, source, str(tmp_path / "data"))


@pytest.mark.parametrize("kwargs, match", [
    (dict(validation_fraction=0.0), r"validation_fraction must be in \(0, 1\)"),
    (dict(validation_fraction=1.0), r"validation_fraction must be in \(0, 1\)"),
    (dict(test_fraction=-0.1), r"test_fraction must be in \[0, 1\)"),
    (dict(validation_fraction=0.5, test_fraction=0.5), "below 1"),
])
def test_fractions_out_of_range(tmp_path, kwargs, match):
  source = write(tmp_path / "all.csv", _csv(_labelled()))
  with pytest.raises(ValueError, match=match):
    splitting.split_dataset(source, str(tmp_path / "data"), **kwargs)


def test_too_few_examples_for_a_validation_split(tmp_path):
  source = write(tmp_path / "all.csv",
                 _csv(_labelled({"a": 3, "b": 4})))
  with pytest.raises(ValueError, match="Expected at least 5 examples"):
    splitting.split_dataset(source, str(tmp_path / "data"))


def test_an_output_directory_with_splits_is_refused(tmp_path):
  source = write(tmp_path / "all.csv", _csv(_labelled()))
  write(tmp_path / "data" / "dev.tsv", "text\tlabel\n")
  write(tmp_path / "data" / "notes.txt", "kept")
  with pytest.raises(FileExistsError, match="already holds dev.tsv"):
    splitting.split_dataset(source, str(tmp_path / "data"))
  os.remove(tmp_path / "data" / "dev.tsv")
  splitting.split_dataset(source, str(tmp_path / "data"))  # Others may stay.
  assert (tmp_path / "data" / "notes.txt").read_text() == "kept"


def test_missing_input(tmp_path):
  with pytest.raises(FileNotFoundError, match="does not exist"):
    splitting.split_dataset(str(tmp_path / "nope.csv"), str(tmp_path / "d"))


def test_the_job_error_without_validation_gives_the_command(tmp_path):
  mine = tmp_path / "mine"
  write(mine / "train.csv", _csv(_labelled()))
  error = str(raises("no validation split", layout.find_dataset, str(mine)))
  command = f"mixvocab-split-data --data={mine} --output_dir={mine}_split"
  assert command in error
  assert "copy" not in error
  # Which works, and gives the job a dataset it reads.
  splitting.split_dataset(str(mine), f"{mine}_split")
  assert layout.find_dataset(f"{mine}_split").files.keys() == {
      "train", "validation"}


def test_a_dataset_directory_has_its_train_split_and_its_test_copied(
    tmp_path):
  mine = tmp_path / "mine"
  write(mine / "train.csv", _csv(_labelled()))
  test = write(mine / "test.csv", "text\nunlabelled one\n")
  assert "and a copy of test" in str(
      raises("no validation split", layout.find_dataset, str(mine)))
  out = tmp_path / "out"
  summary = splitting.split_dataset(str(mine), str(out))
  assert summary["input"] == str(mine / "train.csv")
  assert summary["copied"] == {"test": str(out / "test.csv")}
  assert (out / "test.csv").read_text() == open(test).read()
  assert layout.find_dataset(str(out)).files.keys() == {
      "train", "validation", "test"}
  # A Goo dataset directory: the test directory's files copied.
  write_goo(tmp_path / "goo" / "train",
            seq_in=[" ".join(w) for w, _, _ in _queries()],
            seq_out=[" ".join(t) for _, t, _ in _queries()],
            label=[n for _, _, n in _queries()])
  write_goo(tmp_path / "goo" / "test", seq_in=["play jazz"])
  splitting.split_dataset(str(tmp_path / "goo"), str(tmp_path / "goo_out"))
  assert (tmp_path / "goo_out" / "test" / "seq.in").read_text() == (
      "play jazz\n")
  assert layout.find_dataset(str(tmp_path / "goo_out")).format == "goo"


@pytest.mark.parametrize("entries, flags, error, match", [
    (("train.csv", "dev.csv"), {}, ValueError,
     "already has a validation split, dev.csv"),
    (("train.csv", "test.csv"), {"test_fraction": 0.1}, ValueError,
     "which is copied as it is"),
    (("train.csv", "train.tsv"), {}, ValueError,
     "2 candidates for the train split"),
    (("notes.csv",), {}, FileNotFoundError, "holds no train split"),
])
def test_a_dataset_directory_it_cannot_split(tmp_path, entries, flags, error,
                                             match):
  for name in entries:
    content = _csv(_labelled())
    write(tmp_path / "mine" / name,
          content.replace(",", "\t") if name.endswith(".tsv") else content)
  with pytest.raises(error, match=match):
    splitting.split_dataset(str(tmp_path / "mine"), str(tmp_path / "out"),
                            **flags)
  assert not (tmp_path / "out").exists()


def test_command_line(tmp_path):
  source = write(tmp_path / "all.csv", _csv(_labelled()))
  out = tmp_path / "data"
  run = lambda *flags: subprocess.run(
      [sys.executable, "-m", "mixvocab_tf.cli.split_data", f"--data={source}",
       f"--output_dir={out}", *flags], capture_output=True, text=True,
      check=False)
  done = run("--test_fraction=0.1")
  assert done.returncode == 0, done.stderr
  assert json.loads(done.stdout)["examples"] == {
      "train": 40, "validation": 5, "test": 5}
  assert "1 of 4 labels have too few examples" in done.stderr
  again = run()
  assert again.returncode == 1
  assert again.stderr.strip().splitlines()[-1].startswith(
      "error: FileExistsError:")
