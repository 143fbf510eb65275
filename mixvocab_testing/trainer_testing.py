"""Fixtures for the trainer's and the tasks' tests: a tiny teacher, tiny configs.

A tiny teacher checkpoint in the Hugging Face layout (hidden 32, 2 layers, the
default teacher's 30,522-token vocabulary written beside it), and gin bindings
that shrink any pretraining config to a smoke test (sequence 32, batch 8,
students of 2 layers x 32), so that the tests run real tasks end to end in
seconds per step.
"""

import glob
import os
import shutil
import subprocess
import sys

from mixvocab_tf import assets
from mixvocab_testing import testing_utils

TINY_HIDDEN = 32
TINY_LAYERS = 2
TINY_SEQ_LENGTH = 32


def write_tiny_teacher(directory, hidden_size=TINY_HIDDEN,
                       num_layers=TINY_LAYERS, seed=0, with_mlm_head=True):
  """Writes a random tiny BERT (HF layout) with the default teacher's vocab.

  Returns:
    `directory`, holding config.json, model.safetensors and vocab.txt.
  """
  vocab = assets.default_teacher_vocab()
  with open(vocab, encoding="utf-8") as f:
    vocab_size = sum(1 for _ in f)
  config = testing_utils.tiny_bert_config(
      vocab_size=vocab_size, hidden_size=hidden_size, num_layers=num_layers,
      num_heads=2, inner_dim=4 * hidden_size, max_positions=64)
  params = testing_utils.random_bert_params(config, seed=seed,
                                            with_mlm_head=with_mlm_head)
  testing_utils.write_hf_checkpoint(directory, params, config)
  shutil.copy(vocab, os.path.join(directory, "vocab.txt"))
  return directory


def tiny_bindings(batch_size=8, seq_length=TINY_SEQ_LENGTH, max_predictions=5,
                  max_teacher_predictions=3, sharding="pipeline"):
  """Gin bindings that make any pretraining config a quick CPU run."""
  return [
      f"MlmInputs.global_batch_size = {batch_size}",
      f"MlmInputs.seq_length = {seq_length}",
      f"MlmInputs.max_predictions = {max_predictions}",
      f"MlmInputs.max_teacher_predictions = {max_teacher_predictions}",
      "MlmInputs.shuffle_buffer = 64",
      f"MlmInputs.sharding = '{sharding}'",
      "Stage1Task.student_embedding_width = 32",
      f"StudentSpec.num_layers = {TINY_LAYERS}",
      f"StudentSpec.hidden_size = {TINY_HIDDEN}",
      "StudentSpec.num_attention_heads = 2",
  ]


def train_command(model_dir, gin_files=(), bindings=(), extra_flags=()):
  """The `python -m mixvocab_tf.train` command line for a subprocess."""
  command = [sys.executable, "-m", "mixvocab_tf.train",
             f"--model_dir={model_dir}"]
  command += [f"--gin_file={f}" for f in gin_files]
  command += [f"--gin_bindings={b}" for b in bindings]
  return command + list(extra_flags)


def run_train(model_dir, gin_files=(), bindings=(), extra_flags=(), env=None,
              timeout=600):
  """Runs the binary to completion; returns the CompletedProcess (text)."""
  return subprocess.run(
      train_command(model_dir, gin_files, bindings, extra_flags),
      capture_output=True, text=True, timeout=timeout,
      env=dict(os.environ, **(env or {})))


def read_scalars(model_dir, tag):
  """{step: value} of a TensorBoard scalar the trainer wrote (chief only)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from tensorflow.python.summary import summary_iterator  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
  values = {}
  for path in sorted(glob.glob(os.path.join(model_dir, "train",
                                            "events.out.tfevents.*"))):
    for event in summary_iterator.summary_iterator(path):
      for value in event.summary.value:
        if value.tag == tag:
          values[event.step] = float(tf.make_ndarray(value.tensor))
  return values
