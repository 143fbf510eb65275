"""A run killed with SIGKILL and restarted ends with the weights of an
uninterrupted run (stage I, tiny teacher, CPU)."""

import pytest
import os
import signal
import subprocess
import time

import numpy as np
import tensorflow as tf

from mixvocab_testing import trainer_testing as testing

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

STEPS = 60


def _bindings(teacher_dir):
  return testing.tiny_bindings() + [
      f"Stage1Task.teacher_checkpoint = '{teacher_dir}'",
      f"Trainer.train_steps = {STEPS}",
      "Trainer.checkpoint_every = 10",
      "Trainer.log_every = 10",
      "Trainer.keep_checkpoints = 10",
  ]


def _float_tensors(checkpoint):
  reader = tf.train.load_checkpoint(checkpoint)
  out = {}
  for name, dtype in reader.get_variable_to_dtype_map().items():
    if dtype.is_floating and not name.startswith("metadata"):
      out[name] = reader.get_tensor(name)
  return out


def test_kill_and_resume_gives_the_uninterrupted_weights(tmp_path):
  teacher_dir = testing.write_tiny_teacher(str(tmp_path / "teacher"))
  bindings = _bindings(teacher_dir)
  whole_dir, killed_dir = str(tmp_path / "whole"), str(tmp_path / "killed")
  # The uninterrupted run, alongside the one to be killed.
  whole = subprocess.Popen(
      testing.train_command(whole_dir, ["stage1_small.gin"], bindings),
      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
  victim = subprocess.Popen(
      testing.train_command(killed_dir, ["stage1_small.gin"], bindings),
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  state_file = os.path.join(killed_dir, "checkpoint")
  deadline = time.time() + 400
  while not os.path.exists(state_file) and victim.poll() is None:
    assert time.time() < deadline, "no checkpoint written"
    time.sleep(0.02)
  victim.send_signal(signal.SIGKILL)
  victim.wait()
  killed_at = tf.train.latest_checkpoint(killed_dir)
  assert killed_at is not None and not killed_at.endswith(f"ckpt-{STEPS}")

  resumed = testing.run_train(killed_dir, ["stage1_small.gin"], bindings)
  assert resumed.returncode == 0, resumed.stderr[-3000:]
  assert f"Resuming from {killed_at}" in resumed.stderr
  _, whole_err = whole.communicate(timeout=600)
  assert whole.returncode == 0, whole_err[-3000:]

  expected = _float_tensors(os.path.join(whole_dir, f"ckpt-{STEPS}"))
  actual = _float_tensors(os.path.join(killed_dir, f"ckpt-{STEPS}"))
  assert expected.keys() == actual.keys()
  assert any(k.startswith("model/") for k in expected)
  assert any(k.startswith("optimizer/") for k in expected)
  for name, value in expected.items():
    np.testing.assert_array_equal(actual[name], value, err_msg=name)


def test_a_job_stopped_by_sigterm_leaves_its_step_unfinished(tmp_path):
  """SIGTERM to a job (a preemption notice) reaches its trainer step, which
  saves and exits non-zero: the step is not marked done, and the rerun
  resumes it from that checkpoint and finishes it."""
  teacher_dir = testing.write_tiny_teacher(str(tmp_path / "teacher"))
  steps = 400
  bindings = [b.replace(f"train_steps = {STEPS}", f"train_steps = {steps}")
              for b in _bindings(teacher_dir)]
  job_gin = tmp_path / "job.gin"
  job_gin.write_text(
      f"pipeline.steps = [('stage1', 'train', ['stage1_small.gin'], "
      f"{bindings!r})]\n")
  job_dir = str(tmp_path / "job")
  step_dir = os.path.join(job_dir, "stage1")
  job = subprocess.Popen(testing.train_command(job_dir, [str(job_gin)]),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
  deadline = time.time() + 400
  while (not os.path.exists(os.path.join(step_dir, "checkpoint")) and
         job.poll() is None):
    assert time.time() < deadline, "no checkpoint written"
    time.sleep(0.02)
  job.send_signal(signal.SIGTERM)
  _, err = job.communicate(timeout=400)
  assert job.returncode != 0, err[-3000:]
  assert "stopped by a signal" in err, err[-3000:]
  assert not os.path.exists(os.path.join(step_dir, "DONE"))
  stopped_at = tf.train.latest_checkpoint(step_dir)
  assert stopped_at and not stopped_at.endswith(f"ckpt-{steps}")

  rerun = testing.run_train(job_dir, [str(job_gin)])
  assert rerun.returncode == 0, rerun.stderr[-3000:]
  assert os.path.exists(os.path.join(step_dir, "DONE"))
  assert tf.train.latest_checkpoint(step_dir).endswith(f"ckpt-{steps}")
