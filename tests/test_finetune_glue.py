"""End to end: GLUE fine-tuning of a tiny student on real MRPC (train.py and
the shipped gin config) and on the MNLI sample (the trainer in process), with
dev-split metrics and the best checkpoint (CPU, seconds)."""

import json
import os
import subprocess
import sys

import pytest

from mixvocab_tf.datasets import catalog
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_tf.core import optimization
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_testing import testing_utils


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLUE_DIR = testing_utils.shared_data("glue")

# Runs only with --run_large (the full suite), and with the GLUE data.
pytestmark = [pytest.mark.large, pytest.mark.skipif(
    not os.path.isdir(GLUE_DIR), reason=f"no GLUE data at {GLUE_DIR}")]

_TINY = ["TextClassificationTask.student_preset = None",
         "TextClassificationTask.num_layers = 1",
         "TextClassificationTask.hidden_size = 32",
         "TextClassificationTask.num_attention_heads = 2"]


def test_mrpc_with_the_trainer_binary(tmp_path):
  model_dir = str(tmp_path / "mrpc")
  bindings = _TINY + [
      "DATASET = 'glue/mrpc'", f"DATA_DIR = '{GLUE_DIR}'", "BATCH_SIZE = 8",
      "Trainer.train_steps = 3", "Trainer.evaluate_every = 3",
      "TextClassificationTask.seq_length = 32",
      "TextClassificationTask.eval_batch_size = 256"]
  result = subprocess.run(
      [sys.executable, "-m", "mixvocab_tf.train", f"--model_dir={model_dir}",
       "--gin_file=finetune_glue_small.gin"] +
      [f"--gin_bindings={b}" for b in bindings],
      capture_output=True, text=True, timeout=600, cwd=_ROOT)
  assert result.returncode == 0, result.stderr[-3000:]
  record = json.load(open(os.path.join(model_dir, "best", "metrics.json")))
  metrics = record["metrics"]
  assert record["step"] == 3 and record["best_metric"] == "f1"
  assert metrics["num_examples"] == 408  # All of MRPC dev.
  assert 0.0 <= metrics["f1"] <= 1.0 and 0.0 <= metrics["accuracy"] <= 1.0
  assert record["markdown_header"].split("\n")[0].endswith(
      "| f1 | accuracy |")
  assert record["model"] == "1x32 fresh student mrpc"


def test_mnli_sample_in_process(tmp_path):
  task = text_classification_task.TextClassificationTask(
      dataset=catalog.text_classification("glue/mnli", GLUE_DIR),
      seq_length=32,
      global_batch_size=8, eval_batch_size=64, shuffle_buffer=256,
      student_preset=None,
      num_layers=1, hidden_size=32, num_attention_heads=2)
  trainer = trainer_lib.Trainer(
      model_dir=str(tmp_path), task=task, train_steps=2, log_every=1,
      evaluate_every=2, eval_max_batches=2,
      optimization=optimization.optimization_config(
          train_steps=2, learning_rate=1e-4))
  trainer.train()
  (results,) = trainer.eval_results
  assert results["num_examples"] == 128 and results["eval_batches"] == 2
  assert 0.0 <= results["accuracy"] <= 1.0
  assert results["is_best"]
  assert os.path.isfile(os.path.join(str(tmp_path), "best", "ckpt-2.index"))
