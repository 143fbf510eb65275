"""export_run and export_encoder_run: runs exported in process, from anywhere."""

import json
import os
import shutil
import subprocess
import sys

import gin
import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import serving_tokenizer
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.serving import export_run
from mixvocab_tf.text import vocab as vocab_lib

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: finetune_snips_small.gin cut to two steps of a 1x32 student.
_TINY_SNIPS = [
    "IntentSlotTask.student_preset = None",
    "IntentSlotTask.num_layers = 1",
    "IntentSlotTask.hidden_size = 32",
    "IntentSlotTask.num_attention_heads = 2",
    "IntentSlotTask.seq_length = 24",
    "IntentSlotTask.global_batch_size = 8",
    "IntentSlotTask.shuffle_buffer = 16",
    "Trainer.train_steps = 2",
    "Trainer.checkpoint_every = 2",
    "Trainer.log_every = 2",
    "Trainer.evaluate_every = None",
]


@pytest.fixture(scope="module")
def snips_run(tmp_path_factory):
  model_dir = str(tmp_path_factory.mktemp("snips_run"))
  gin.clear_config()
  try:
    gin_utils.parse(["finetune_snips_small.gin"], _TINY_SNIPS)
    trainer_lib.Trainer(model_dir=model_dir).train()
  finally:
    gin.clear_config()
  return model_dir


@pytest.mark.large
def test_export_run_keeps_the_callers_gin_config(snips_run, tmp_path):
  gin_utils.parse([], ["Trainer.train_steps = 7"])
  try:
    summary = export_run.export_run(snips_run, str(tmp_path / "export"))
    assert gin.query_parameter("Trainer.train_steps") == 7
  finally:
    gin.clear_config()
  assert summary["task"] == "intent_slot"
  assert summary["checkpoint"].endswith("ckpt-2")  # No best/: the latest.
  info = saved_model_export.read_export_info(summary["export_dir"])
  assert info["task_name"] == "intent_slot" and info["seq_length"] == 24


@pytest.mark.large
def test_export_run_works_from_an_installed_copy(snips_run, tmp_path):
  """No source checkout: the package alone, run from another directory."""
  site = tmp_path / "site"
  shutil.copytree(_PACKAGE, site / "mixvocab_tf", ignore=shutil.ignore_patterns(
      "*_test.py", "__pycache__"))
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  export_dir = str(tmp_path / "export")
  script = (
      "import json, mixvocab_tf\n"
      "from mixvocab_tf.serving import export_run\n"
      f"summary = export_run.export_run({snips_run!r}, {export_dir!r})\n"
      "print(json.dumps(dict(summary, package=mixvocab_tf.__file__)))\n")
  result = subprocess.run(
      [sys.executable, "-c", script], cwd=str(elsewhere), capture_output=True,
      text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(site)))
  assert result.returncode == 0, result.stderr[-3000:]
  summary = json.loads(result.stdout.strip().splitlines()[-1])
  assert summary["package"].startswith(str(site))
  assert summary["task"] == "intent_slot"
  served = tf.saved_model.load(export_dir).signatures["serving_default"](
      text=tf.constant(["play some jazz"]))
  assert served["intent"].shape == (1,)


def test_encoder_export_reads_sizes_and_weights_from_the_checkpoint(
    tmp_path):
  vocab = assets.default_student_vocab()
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=len(vocab_lib.load_vocab(vocab)), num_layers=1,
      hidden_size=32, num_attention_heads=2, max_sequence_length=24)
  prefix = tf.train.Checkpoint(student_encoder=encoder).write(
      str(tmp_path / "stage2" / "ckpt-1"))
  export_dir = str(tmp_path / "encoder")
  summary = export_run.export_encoder_run(None, export_dir, prefix, vocab,
                                          seq_length=24)
  assert summary["checkpoint"] == prefix and summary["task"] == "encoder"
  served = tf.saved_model.load(export_dir).signatures["serving_default"](
      text=tf.constant(["tiny bert", "on a phone"]))
  assert served["pooled_output"].shape == (2, 32)
  # The same weights: the exported encoder equals the one written.
  features = serving_tokenizer.ServingTokenizer(vocab).pack_sentences(
      tf.constant(["tiny bert", "on a phone"]), None, 24)
  np.testing.assert_allclose(
      served["pooled_output"],
      encoder(features, training=False)["pooled_output"], atol=1e-5)


def test_best_and_latest_need_the_run(tmp_path):
  with pytest.raises(ValueError, match="needs the run's model_dir"):
    export_run.checkpoint_path(None, "best")
  assert export_run.checkpoint_path(str(tmp_path), "best") == str(tmp_path)
  (tmp_path / "best").mkdir()
  assert export_run.checkpoint_path(str(tmp_path), "best") == str(
      tmp_path / "best")
  assert export_run.checkpoint_path(str(tmp_path), "latest") == str(tmp_path)
