"""The binary: dry runs of the paper's TPU configs on a machine without TPU or
checkpoint, and clear one-paragraph errors for bad configurations."""

import os
import re
import subprocess
import sys
from unittest import mock

import pytest
import tensorflow as tf

from mixvocab_tf import quiet
from mixvocab_testing import trainer_testing as testing
from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import steps as steps_lib

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large


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
  stage1 = _start(str(tmp_path / "s1"), ["stage1_paper.gin"],
                  flags=["--dry_run"])
  stage2 = _start(str(tmp_path / "s2"), ["stage2_paper.gin"],
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


def test_the_binary_sets_concurrent_ops_before_tensorflow_starts(tmp_path):
  # distill_glue_small.gin binds Trainer.concurrent_ops = 2; gin builds the
  # Trainer's arguments with TensorFlow running, so the binary sets the
  # thread pools first (the Trainer alone would only warn).
  returncode, out, err = _finish(_start(
      str(tmp_path / "d"), ["distill_glue_small.gin"],
      ["TEACHER_RUN = '/no/teacher'"], flags=["--dry_run"]))
  assert returncode == 0, err[-3000:]
  assert "Trainer.concurrent_ops = 2" in out, out[-3000:]
  assert re.search(r"2 operations at once, each on \d+ of \d+ cores", err), (
      err[-3000:])
  assert "is not applied" not in err, err[-3000:]


def test_bad_configurations_end_with_clear_errors(tmp_path):
  tiny = testing.tiny_bindings() + ["Trainer.train_steps = 20",
                                    "Trainer.checkpoint_every = 1",
                                    "Trainer.log_every = 1"]
  misspelt = _start(str(tmp_path / "a"), ["stage1_small.gin"],
                    ["Trainer.train_stepz = 5"])
  no_teacher = _start(str(tmp_path / "b"), ["stage1_small.gin"],
                      tiny + ["Stage1Task.teacher_checkpoint = '/no/teacher'"])
  diverging = _start(str(tmp_path / "c"), ["nokd_small.gin"],
                     tiny + ["optimization_config.learning_rate = 1e30"])
  no_stage1 = _start(str(tmp_path / "d"), ["stage2_small.gin"], tiny)
  _assert_clean_error(*_finish(misspelt)[::2], "GinConfigError",
                      "doesn't have a parameter named 'train_stepz'",
                      "Did you mean: train_steps")
  _assert_clean_error(*_finish(no_teacher)[::2], "FileNotFoundError",
                      "teacher checkpoint: not found: /no/teacher")
  # A required macro left unbound: one sentence, before anything starts.
  _assert_clean_error(*_finish(no_stage1)[::2], "GinConfigError",
                      "STAGE1_DIR is required by the gin files and not set: "
                      "add --gin_bindings=\"STAGE1_DIR = '...'\"")
  assert not os.path.exists(tmp_path / "d")
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


def _write_goo(directory, rows):
  directory.mkdir(parents=True)
  for index, name in enumerate(("seq.in", "seq.out", "label")):
    (directory / name).write_text("".join(row[index] + "\n" for row in rows))


def test_an_error_and_a_warning_are_printed_once(tmp_path):
  """The own-data job on a dataset whose train lacks a column (an error,
  raised inside the gin configurable `own_data_steps`) and on one whose
  validation has an intent and a slot tag train lacks (a warning, given
  when the job is configured): each printed once, the error without gin's
  "In call to configurable" line."""
  broken = tmp_path / "broken"
  broken.mkdir()
  for split in ("train", "validation"):
    (broken / f"{split}.csv").write_text(
        "text,lable\nplay some jazz,PlayMusic\nrain today,GetWeather\n")
  unseen = tmp_path / "unseen"
  _write_goo(unseen / "train", [("play some jazz", "O O B-genre", "PlayMusic"),
                                ("rain in paris", "O O B-city", "GetWeather")])
  _write_goo(unseen / "dev", [("play rock", "O B-genre", "PlayMusic"),
                              ("book a table", "O O B-object", "BookTable")])
  error = _start(str(tmp_path / "a"), ["own_data.gin"],
                 [f"DATA_DIR = '{broken}'"])
  warning = _start(str(tmp_path / "b"), ["own_data.gin"],
                   [f"DATA_DIR = '{unseen}'"], flags=["--dry_run"])
  returncode, out, err = _finish(error)
  _assert_clean_error(returncode, err, "DataError", "there is no column "
                      "'label'; the columns are ['text', 'lable']")
  shown = out + err
  assert shown.count("there is no column 'label'") == 1, shown[-3000:]
  assert "In call to configurable" not in shown, shown[-3000:]
  returncode, out, err = _finish(warning)
  assert returncode == 0, err[-3000:]
  shown = out + err
  assert shown.count("are not in train") == 1, shown[-3000:]
  assert "1 of 2 examples (50.0%) have an intent train lacks" in shown
  assert "1 word has a slot tag train lacks" in shown
  assert "intent 'BookTable' (1 example)" in shown
  # Train's two intents have one query each: named once, before training.
  assert shown.count("2 of 2 intents have fewer than 5 examples") == 1, (
      shown[-3000:])


# TensorFlow's C++ log lines: "2026-11-26 01:20:13.799474: I tensorflow/...".
_TF_CPP_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] ",
                          re.MULTILINE)


def _env_without_level():
  env = dict(os.environ)
  env.pop(quiet.LEVEL_VARIABLE, None)  # Another test's import may set it.
  return env


def test_the_pipeline_starts_its_steps_quietly_unless_tf_verbose(tmp_path):
  command = testing.train_command(str(tmp_path / "r"), ["nokd_small.gin"],
                                  extra_flags=["--dry_run"])
  # The environment the pipeline gives a step, and the one of --tf_verbose.
  with mock.patch.dict(os.environ, _env_without_level(), clear=True):
    child_env = quiet.child_env(verbose=False)
  processes = [
      subprocess.Popen(command, env=child_env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True),
      subprocess.Popen(command + [quiet.VERBOSE_FLAG],
                       env=_env_without_level(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)]
  (code, out, err), (verbose_code, _, verbose_err) = (
      _finish(p) for p in processes)
  assert code == 0 and verbose_code == 0, (err[-3000:], verbose_err[-3000:])
  assert "Parameters:" in out
  for noise in ("cuInit", "cpu_feature_guard", "oneDNN", "cuda drivers"):
    assert noise not in err, err[-3000:]
  assert not _TF_CPP_LINE.search(err), err[-3000:]
  assert "system_path_file_exists" not in err, err[-3000:]
  # --tf_verbose brings TensorFlow's lines back.
  assert _TF_CPP_LINE.search(verbose_err), verbose_err[-3000:]


def test_the_trainer_itself_starts_quietly(tmp_path):
  process = subprocess.run(
      testing.train_command(str(tmp_path / "r"), ["nokd_small.gin"],
                            extra_flags=["--dry_run"]),
      env=_env_without_level(), capture_output=True, text=True, timeout=600,
      check=False)
  assert process.returncode == 0, process.stderr[-3000:]
  assert "cuInit" not in process.stderr
  assert "cpu_feature_guard" not in process.stderr


class _FakeStep:
  """A step's process: prints what a trainer prints, records how it started."""

  started = []

  def __init__(self, command, env=None, **unused_kwargs):
    self.started.append((command, env))
    self.stdout = iter([
        "2026-11-26 01:20:17.249829: E external/local_xla/xla/stream_executor"
        "/cuda/cuda_platform.cc:51] failed call to cuInit: INTERNAL: CUDA "
        "error\n",
        "I1126 01:20:17.249996 1 resource_reader.py:50] some info\n",
        "W1126 01:20:18.000000 1 trainer.py:9] a real warning\n",
        "I1126 01:20:19.000000 1 trainer.py:9] step 5/10 loss 1.0 ETA 3s\n"])

  def wait(self):
    return 0


def test_the_job_passes_tf_verbose_on_and_shows_progress_and_warnings(
    tmp_path, capsys):
  for argv, verbose in ((["train"], False), (["train", "--tf_verbose"], True)):
    _FakeStep.started.clear()
    with mock.patch.object(pipeline.subprocess, "Popen", _FakeStep), \
         mock.patch.object(sys, "argv", argv), \
         mock.patch.dict(os.environ, _env_without_level(), clear=True):
      pipeline._run_train(steps_lib.Step("s", "train", ["nokd_small.gin"]),  # pylint: disable=protected-access
                          str(tmp_path), str(tmp_path))
    (command, env), = _FakeStep.started
    shown = capsys.readouterr().err
    assert (quiet.VERBOSE_FLAG in command) == verbose
    assert (quiet.LEVEL_VARIABLE in env) == (not verbose)
    assert "[s] W1126" in shown and "step 5/10" in shown, shown
    assert ("some info" in shown) == verbose, shown
