"""The scaling study's job end to end, tiny: split, vocabulary, stage I,
stage II, NoKD (step- and compute-matched), the distillation arm, held-out
curves, SNIPS runs and the results step, on the built-in corpus (about three
minutes on 2 idle cores)."""

import pytest
import json
import os
import subprocess
import sys

from mixvocab_tf import assets
from projects.scaling import scaling

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))


def test_tiny_scaling_job_resumes_and_writes_its_results(tmp_path):
  corpus = assets.builtin_corpus_files()[0]
  command = [
      sys.executable, "-m", "mixvocab_tf.train",
      "--gin_file=projects/scaling/scaling_cpu.gin",
      f"--model_dir={tmp_path}",
      f"--gin_bindings=CORPUS = '{corpus}'",
      "--gin_bindings=scaling_steps.budgets = [1]",
      "--gin_bindings=scaling_steps.seeds = [0]",
      "--gin_bindings=scaling_steps.stage1_steps = 4",
      "--gin_bindings=scaling_steps.student_steps = 8",
      "--gin_bindings=scaling_steps.glue_dir = None",
      "--gin_bindings=scaling_steps.mlm_eval_batches = 2",
      "--gin_bindings=scaling_steps.curve_points = 2",
      "--gin_bindings=scaling_steps.extra_finetune_bindings = ["
      "'Trainer.train_steps = 4', 'Trainer.evaluate_every = 4', "
      "'Trainer.checkpoint_every = 4', "
      "'Trainer.early_stopping_patience = None']",
  ]
  result = subprocess.run(command, capture_output=True, text=True,
                          timeout=1800, cwd=_ROOT)
  assert result.returncode == 0, result.stderr[-3000:]
  matched = scaling.matched_nokd_steps(4, 8)
  for arm, steps in (("stage2", 8), ("nokd", 8), ("nokd_matched", matched),
                     ("stage2_distill", 8)):
    with open(tmp_path / f"{arm}_b1" / scaling.MLM_CURVE_FILE,
              encoding="utf-8") as f:
      points = json.load(f)["points"]
    assert [p["step"] for p in points][-1] == steps
    assert points[-1]["tokens"] == steps * 32 * 64
    assert all(p["masked_tokens"] > 0 and p["loss"] > 0 for p in points)
    assert os.path.exists(tmp_path / f"ft_snips_{arm}_b1_seed0" / "best" /
                          "metrics.json")
  heldout = (tmp_path / "split" / "heldout.txt").read_text(encoding="utf-8")
  train = (tmp_path / "split" / "train.txt").read_text(encoding="utf-8")
  assert heldout.strip() and heldout.split("\n")[0] not in train
  table = (tmp_path / scaling.RESULTS_FILE).read_text(encoding="utf-8")
  assert "| 1x | NoKD, + stage I FLOPs | 1 |" in table
  assert "| distill/attention_mse |" in table
  assert os.path.getsize(tmp_path / scaling.MLM_PLOT) > 1000
  # A second run skips every finished step and rewrites the results.
  os.remove(tmp_path / scaling.RESULTS_FILE)
  again = subprocess.run(command, capture_output=True, text=True,
                         timeout=300, cwd=_ROOT)
  assert again.returncode == 0, again.stderr[-3000:]
  assert "done already, skipped" in again.stderr
  assert os.path.exists(tmp_path / scaling.RESULTS_FILE)
