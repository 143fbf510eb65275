"""Tests of layout: finding a dataset's splits, kind and format."""

import pytest

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import layout
from mixvocab_testing.datasets_testing import (
    CSV, GOO_TRAIN, raises, write, write_goo, write_jsonl)


# -----------------------------------------------------------------------------
# find_dataset.
# -----------------------------------------------------------------------------


def test_find_dataset_csv_with_test(tmp_path):
  for split in ("train", "validation", "test"):
    write(tmp_path / f"{split}.csv", CSV)
  found = layout.find_dataset(str(tmp_path))
  assert found.kind == examples_lib.TEXT_CLASSIFICATION
  assert found.format == "csv"
  assert found.files == {s: str(tmp_path / f"{s}.csv")
                         for s in layout.SPLITS}



def test_find_dataset_goo_layout_with_dev(tmp_path):
  write_goo(tmp_path / "train", **GOO_TRAIN)
  write_goo(tmp_path / "dev", **GOO_TRAIN)
  (tmp_path / "notes").mkdir()  # Not a split: ignored.
  found = layout.find_dataset(str(tmp_path))
  assert (found.kind, found.format) == (examples_lib.INTENT_SLOT, "goo")
  assert found.files == {"train": str(tmp_path / "train"),
                         "validation": str(tmp_path / "dev")}


@pytest.mark.parametrize("first, kind", [
    ({"tokens": ["hi"], "tags": ["O"], "intent": "Greet"},
     examples_lib.INTENT_SLOT),
    ({"text": "hi", "label": 1}, examples_lib.TEXT_CLASSIFICATION),
    # 'intent' as a label column is text classification.
    ({"text": "hi", "intent": "Greet"}, examples_lib.TEXT_CLASSIFICATION),
])
def test_find_dataset_jsonl_kind_from_the_first_line(tmp_path, first, kind):
  write_jsonl(tmp_path / "train.jsonl", [first])
  write_jsonl(tmp_path / "valid.jsonl", [first])
  assert layout.find_dataset(str(tmp_path)).kind == kind


def test_find_dataset_missing_directory(tmp_path):
  error = raises("does not exist", layout.find_dataset,
                 str(tmp_path / "nope"))
  assert error.path == str(tmp_path / "nope")


def test_find_dataset_no_train(tmp_path):
  write(tmp_path / "training.csv", CSV)
  write(tmp_path / "dev.csv", CSV)
  error = raises("no train split", layout.find_dataset, str(tmp_path))
  assert "training.csv" in str(error)  # Listed, with a hint to rename it.
  assert "rename training.csv to train.csv" in str(error).lower()


def test_find_dataset_a_conll_file_named_txt_is_told_its_name(tmp_path):
  # CoNLL corpora often come as train.txt: a word and its tag a line
  # (IOB or BIOES), -DOCSTART- and blank lines.
  write(tmp_path / "train.txt",
        "-DOCSTART- O\n\nEU NNP I-ORG\nrejects VBZ O\n\nPeter S-PER\n")
  write(tmp_path / "dev.txt", "EU B-ORG\n")
  error = str(raises("there is no train split", layout.find_dataset,
                     str(tmp_path)))
  assert ("The file train.txt looks like CoNLL (a word and its tag a line): "
          "rename it to train.conll.") in error
  # Text that is not CoNLL's is only told the extensions.
  write(tmp_path / "train.txt", "EU rejects German calls\nPeter O\n")
  error = str(raises("there is no train split", layout.find_dataset,
                     str(tmp_path)))
  assert ("The file train.txt does not end in .csv, .tsv, .jsonl, .yml or "
          ".conll.") in error
  write(tmp_path / "train.txt", "\n\n")
  assert "looks like CoNLL" not in str(raises(
      "there is no train split", layout.find_dataset, str(tmp_path)))


def test_find_dataset_a_label_studio_export_gives_the_split_command(
    tmp_path):
  write(tmp_path / "project.json", '\ufeff [{"id": 1, "data": {}}]')
  write(tmp_path / "train.json", '{"text": "a", "label": "x"}\n')
  error = raises("there is no train split", layout.find_dataset,
                 str(tmp_path))
  assert (f"project.json holds a JSON list, as Label Studio's JSON export "
          f"does: `mixvocab-split-data --data={tmp_path}/project.json "
          f"--output_dir={tmp_path}_split`") in str(error)
  # A file of JSON objects a line is still told to be renamed.
  assert "if it holds one JSON object per line, rename it to train.jsonl" in (
      str(error))


def test_find_dataset_no_validation_names_accepted_names_and_contents(
    tmp_path):
  write(tmp_path / "train.csv", CSV)
  write(tmp_path / "val.csv", CSV)
  write(tmp_path / "README.md", "hello")
  error = str(raises("no validation split", layout.find_dataset,
                     str(tmp_path)))
  for name in ("'validation'", "'dev'", "'valid'", ".csv", ".tsv", ".jsonl",
               "README.md, train.csv, val.csv", "validation.csv"):
    assert name in error


def test_find_dataset_two_candidates_for_a_split(tmp_path):
  for name in ("train.csv", "dev.csv", "valid.csv"):
    write(tmp_path / name, CSV)
  error = raises("2 candidates for the validation split",
                 layout.find_dataset, str(tmp_path))
  assert "dev.csv, valid.csv" in str(error)


def test_find_dataset_mixed_formats(tmp_path):
  write(tmp_path / "train.csv", CSV)
  write(tmp_path / "dev.tsv", "text\tlabel\na\tb\n")
  raises("different formats: train.csv, dev.tsv", layout.find_dataset,
         str(tmp_path))
