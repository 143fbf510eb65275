"""export_task_checkpoint: a task without an export module is refused."""

import pytest

from mixvocab_tf.export import checkpoint_export


def test_tasks_without_an_export_module_are_refused(tmp_path):
  class PretrainingTask:
    task_name = "stage2"

    def build_model(self):
      raise AssertionError("Refused before the model is built.")

  with pytest.raises(ValueError, match="'stage2' has no export module"):
    checkpoint_export.export_task_checkpoint(PretrainingTask(), "unused",
                                             str(tmp_path / "export"))
  assert not (tmp_path / "export").exists()
