"""Held-out pretraining curves end to end, tiny: the built-in corpus is split,
a NoKD student trains on the train part only, and its checkpoints are scored
on the held-out part beside the unigram floor of the same tokens."""

import pytest
import json
import os
import subprocess
import sys

import numpy as np

from mixvocab_tf import assets
from mixvocab_tf.text import unigram

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_student_is_scored_on_text_it_never_read(tmp_path):
  steps = [
      ("split", "heldout_split", [], ["heldout_every = 10"]),
      ("nokd", "train", ["nokd_small.gin"], [
          "MlmInputs.input_files = '{output_dir}/split/train.txt'",
          "Trainer.train_steps = 6", "Trainer.checkpoint_every = 3",
          "Trainer.keep_checkpoints = 3", "StudentSpec.preset = None",
          "StudentSpec.num_layers = 1", "StudentSpec.hidden_size = 32",
          "StudentSpec.num_attention_heads = 2"]),
      ("heldout", "heldout_mlm", [], ["runs = ['nokd']", "batches = 3"]),
  ]
  result = subprocess.run(
      [sys.executable, "-m", "mixvocab_tf.train", f"--model_dir={tmp_path}",
       f"--gin_bindings=pipeline.steps = {steps!r}"],
      capture_output=True, text=True, timeout=600, cwd=_ROOT)
  assert result.returncode == 0, result.stderr[-3000:]
  split = tmp_path / "split"
  train = (split / "train.txt").read_text(encoding="utf-8")
  held = (split / "heldout.txt").read_text(encoding="utf-8").split("\n")
  assert held[0] and held[0] not in train
  with open(tmp_path / "nokd" / "mlm_curve.json", encoding="utf-8") as f:
    curve = json.load(f)
  assert [p["step"] for p in curve["points"]] == [3, 6]
  # The floor: frequencies of the train part, on the held-out masked tokens.
  floor = unigram.UnigramFloor.from_files(str(split / "train.txt"),
                                          assets.default_student_vocab())
  assert abs(curve["floor"]["loss"] - floor.summary()["entropy"]) < 0.5
  for point in curve["points"]:
    assert point["unigram_loss"] == curve["floor"]["loss"]
    assert 0 < point["unigram_accuracy"] < 0.1
    # Six steps learn nothing: the student is near ln(vocabulary size),
    # far above word frequencies.
    assert point["loss"] > point["unigram_loss"] + 1.0
    assert abs(point["loss"] - np.log(4929)) < 0.5
  with open(tmp_path / "heldout" / "curves.json", encoding="utf-8") as f:
    assert json.load(f)["nokd"] == curve
