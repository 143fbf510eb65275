"""Stage I then stage II through the binary, and stage II refusing a stage I
checkpoint made with another student vocabulary."""

import pytest
import os

from mixvocab_tf import assets
from mixvocab_testing import trainer_testing as testing

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large


def _other_vocabulary(path):
  """The shipped student vocabulary with two tokens swapped: another one."""
  with open(assets.default_student_vocab(), encoding="utf-8") as f:
    tokens = f.read().split("\n")[:-1]
  tokens[-1], tokens[-2] = tokens[-2], tokens[-1]
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(tokens) + "\n")
  return path


def test_stage2_starts_from_stage1_only_with_its_vocabulary(tmp_path):
  teacher_dir = testing.write_tiny_teacher(str(tmp_path / "teacher"))
  other_vocab = _other_vocabulary(str(tmp_path / "other_vocab.txt"))
  steps = ["Trainer.train_steps = 4", "Trainer.log_every = 2",
           "Trainer.checkpoint_every = 4"]
  stage1_dir = str(tmp_path / "stage1")
  stage1 = testing.run_train(
      stage1_dir, ["stage1_small.gin"], testing.tiny_bindings() + steps + [
          f"Stage1Task.teacher_checkpoint = '{teacher_dir}'",
          f"Stage1Task.student_vocab = '{other_vocab}'"])
  assert stage1.returncode == 0, stage1.stderr[-3000:]

  stage2_bindings = testing.tiny_bindings() + steps + [
      f"STAGE1_DIR = '{stage1_dir}'"]
  refused = testing.run_train(str(tmp_path / "refused"), ["stage2_small.gin"],
                              stage2_bindings)
  assert refused.returncode == 1
  assert "Traceback" not in refused.stderr
  message = refused.stderr[refused.stderr.rindex("error: "):]
  assert "VocabularyMismatchError" in message
  assert "initialising the stage II student" in message
  assert "different student vocabulary" in message
  assert not os.path.exists(tmp_path / "refused" / "checkpoint")

  accepted = testing.run_train(
      str(tmp_path / "stage2"), ["stage2_small.gin"],
      stage2_bindings + [f"StudentSpec.vocab = '{other_vocab}'"])
  assert accepted.returncode == 0, accepted.stderr[-3000:]
  assert f"Initialised the student table from {stage1_dir}" in (
      accepted.stderr)
  losses = testing.read_scalars(str(tmp_path / "stage2"), "student_mlm/loss")
  assert sorted(losses) == [2, 4]
