"""The binary: dry runs of the paper's TPU configs on a machine without TPU or
checkpoint, and clear one-paragraph errors for bad configurations."""

import os
import subprocess

import tensorflow as tf

from mixvocab_tf.core import testing


def _start(model_dir, gin_files=(), bindings=(), flags=()):
  return subprocess.Popen(
      testing.train_command(model_dir, gin_files, bindings, flags),
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process):
  out, err = process.communicate(timeout=600)
  return process.returncode, out, err


def _assert_clean_error(returncode, err, *fragments):
  assert returncode == 1, err[-3000:]
  assert "Traceback" not in err, err[-3000:]
  last = err[err.rindex("error: "):]
  for fragment in fragments:
    assert fragment in last, last


def test_dry_runs_of_the_paper_configs_build_bert_large_without_it(tmp_path):
  stage1 = _start(str(tmp_path / "s1"), ["stage1_tpu.gin"],
                  flags=["--dry_run"])
  stage2 = _start(str(tmp_path / "s2"), ["stage2_tpu.gin"],
                  flags=["--dry_run"])
  for process, expected in ((stage1, ("stage1", "built-in BERT-LARGE",
                                      "Trainer.train_steps = 500000")),
                            (stage2, ("stage2", "L6-H256",
                                      "Trainer.train_steps = 300000"))):
    returncode, out, err = _finish(process)
    assert returncode == 0, err[-3000:]
    for fragment in expected + ("Parameters:", "Operative config:",
                                "MlmInputs.global_batch_size = 2048",
                                "optimization_config.learning_rate = 0.00125",
                                "training would stop here"):
      assert fragment in out, (fragment, out[:3000])
  # Nothing was trained or written.
  assert not os.path.exists(tmp_path / "s1" / "checkpoint")


def test_bad_configurations_end_with_clear_errors(tmp_path):
  tiny = testing.tiny_bindings() + ["Trainer.train_steps = 20",
                                    "Trainer.checkpoint_every = 1",
                                    "Trainer.log_every = 1"]
  misspelt = _start(str(tmp_path / "a"), ["stage1_cpu.gin"],
                    ["Trainer.train_stepz = 5"])
  no_teacher = _start(str(tmp_path / "b"), ["stage1_cpu.gin"],
                      tiny + ["Stage1Task.teacher_checkpoint = '/no/teacher'"])
  diverging = _start(str(tmp_path / "c"), ["nokd_cpu.gin"],
                     tiny + ["optimization_config.learning_rate = 1e30"])
  _assert_clean_error(*_finish(misspelt)[::2], "GinConfigError",
                      "doesn't have a parameter named 'train_stepz'",
                      "Did you mean: train_steps")
  _assert_clean_error(*_finish(no_teacher)[::2], "FileNotFoundError",
                      "teacher checkpoint: not found: /no/teacher")
  returncode, _, err = _finish(diverging)
  _assert_clean_error(returncode, err, "NonFiniteLossError",
                      "Non-finite loss or gradient at step",
                      "A checkpoint counts as good when the loss measured "
                      "right after it was finite",
                      "The latest good checkpoint is")
  # The checkpoint saved just before the bad step gave the bad loss: it was
  # set aside, and the one before it (whose next loss was fine) is latest.
  bad_step = int(err.split("gradient at step ")[-1].split(" ")[0])
  latest = tf.train.latest_checkpoint(str(tmp_path / "c"))
  assert latest.endswith(f"ckpt-{bad_step - 2}"), (latest, bad_step)
  assert os.path.exists(tmp_path / "c" / "diverged" /
                        f"ckpt-{bad_step - 1}.index")
