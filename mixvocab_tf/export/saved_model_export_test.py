"""Tests of reading an export's description (export_info.json)."""

import pytest

from mixvocab_tf.export import saved_model_export


def test_missing_or_foreign_directories_are_named(tmp_path):
  with pytest.raises(FileNotFoundError,
                     match=r"SavedModel directory .*/nope does not exist"):
    saved_model_export.read_export_info(str(tmp_path / "nope"))
  with pytest.raises(FileNotFoundError, match="was not written by"):
    saved_model_export.read_export_info(str(tmp_path))
