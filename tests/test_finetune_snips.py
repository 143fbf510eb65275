"""End to end: a tiny NoKD student, fine-tuned on SNIPS with the trainer binary
and the shipped gin config, then evaluated with tools/evaluate.py on its best
checkpoint (CPU, seconds)."""

import pytest
import json
import os
import subprocess
import sys

from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args):
  # The tool imports this checkout's package, not another installed copy.
  env = dict(os.environ, PYTHONPATH=_ROOT)
  result = subprocess.run([sys.executable] + args, capture_output=True,
                          text=True, timeout=600, cwd=_ROOT, env=env)
  assert result.returncode == 0, result.stderr[-3000:]
  return result


def _tiny_student(model_dir):
  task = nokd.NoKDTask(
      student=student_spec.StudentSpec(
          preset=None, num_layers=2, hidden_size=32, num_attention_heads=2),
      inputs=mlm_inputs.MlmInputs(global_batch_size=4, seq_length=32,
                                  max_predictions=5, shuffle_buffer=8))
  trainer_lib.Trainer(
      model_dir=model_dir, task=task, train_steps=2, log_every=1,
      optimization=optimization.optimization_config(train_steps=2)).train()


def test_finetune_student_then_evaluate_best(tmp_path):
  student_dir, snips_dir = str(tmp_path / "nokd"), str(tmp_path / "snips")
  _tiny_student(student_dir)
  _run(["-m", "mixvocab_tf.train", f"--model_dir={snips_dir}",
        "--gin_file=finetune_snips_small.gin",
        f"--gin_bindings=INIT_CHECKPOINT = '{student_dir}'",
        "--gin_bindings=Trainer.train_steps = 4",
        "--gin_bindings=Trainer.evaluate_every = 2",
        "--gin_bindings=BATCH_SIZE = 8",
        "--gin_bindings=IntentSlotTask.seq_length = 32",
        "--gin_bindings=IntentSlotTask.eval_batch_size = 256"])
  best = json.load(open(os.path.join(snips_dir, "best", "metrics.json")))
  latest = json.load(open(os.path.join(snips_dir, "metrics.json")))
  assert latest["step"] == 4 and best["step"] in (2, 4)
  for record in (best, latest):
    metrics = record["metrics"]
    assert metrics["num_examples"] == 700  # All of SNIPS valid.
    for name in ("intent_accuracy", "slot_f1", "sentence_accuracy"):
      assert 0.0 <= metrics[name] <= 1.0
    assert record["model"].startswith("2x32 student")
    assert record["markdown_row"].startswith("| 2x32 student")
  assert os.path.isfile(os.path.join(snips_dir, "best", "snips_labels.json"))

  # tools/evaluate.py rebuilds the run from its operative config and gets
  # the best checkpoint's numbers again.
  output = str(tmp_path / "eval.json")
  result = _run(["tools/evaluate.py", f"--model_dir={snips_dir}",
                 "--checkpoint=best", f"--output_json={output}"])
  evaluated = json.load(open(output))
  assert evaluated["split"] == "valid"
  for name in ("intent_accuracy", "slot_f1", "sentence_accuracy"):
    assert evaluated["metrics"][name] == best["metrics"][name], name
  assert best["markdown_row"] in result.stdout
