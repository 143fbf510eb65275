"""Tests of the train / held-out split of pretraining text."""

import json
import os

import pytest

from mixvocab_tf.text import heldout


def _documents():
  # Three documents of 250, 30 and 5 lines.
  return [[f"d{d} line {i}" for i in range(n)]
          for d, n in enumerate((250, 30, 5))]


def test_blocks_are_cut_then_every_kth_is_held_out():
  train, held = heldout.split_documents(_documents(), heldout_every=2,
                                        block_lines=100)
  # Blocks: d0 [0:100], d0 [100:200], d0 [200:250], d1, d2 -> 1st, 3rd, 5th.
  assert [b[0] for b in held] == ["d0 line 0", "d0 line 200", "d2 line 0"]
  assert [b[0] for b in train] == ["d0 line 100", "d1 line 0"]
  every_line = sorted(line for b in train + held for line in b)
  assert every_line == sorted(line for d in _documents() for line in d)
  assert not set(map(tuple, train)) & set(map(tuple, held))


@pytest.mark.parametrize("kwargs, message", [
    ({"heldout_every": 1}, "heldout_every must be at least 2"),
    ({"block_lines": 0}, "block_lines must be positive"),
])
def test_bad_arguments_are_refused(kwargs, message):
  with pytest.raises(ValueError, match=message):
    heldout.split_documents(_documents(), **kwargs)


def test_one_block_cannot_be_split():
  with pytest.raises(ValueError, match="needs two or more"):
    heldout.split_documents([["only line"]], heldout_every=2)


def test_split_files_writes_both_parts_as_documents(tmp_path):
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("\n\n".join("\n".join(d) for d in _documents()) + "\n")
  summary = heldout.split_files(str(corpus), str(tmp_path / "split"),
                                heldout_every=2, block_lines=100)
  assert summary["train_blocks"] == 2 and summary["heldout_blocks"] == 3
  assert summary["train_lines"] + summary["heldout_lines"] == 285
  with open(tmp_path / "split" / heldout.SUMMARY_JSON) as f:
    assert json.load(f) == summary
  text = (tmp_path / "split" / heldout.HELDOUT_TEXT).read_text()
  # Blocks come back as documents: blank lines between them.
  assert text.count("\n\n") == 2
  assert os.path.getsize(tmp_path / "split" / heldout.TRAIN_TEXT) > 0
