"""The console of the commands: errors once as one paragraph, without gin's
additions; each warning once per run, also across child processes; every
module of the package imports beside every other."""

import os
import subprocess
import sys

from absl import app
import gin
import pytest

from mixvocab_tf.cli import console

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _raise(error):
  def run():
    raise error
  return run


def test_user_errors_end_in_one_line_and_status_1(capsys):
  with pytest.raises(SystemExit) as exit_info:
    console.run_tool(["tool"],
                     _raise(FileNotFoundError("/no/run not found")))
  assert exit_info.value.code == 1
  assert capsys.readouterr().err.strip() == (
      "error: FileNotFoundError: /no/run not found")


def test_bugs_and_stray_arguments_are_not_hidden():
  with pytest.raises(KeyError):
    console.run_tool(["tool"], _raise(KeyError("bug")))
  with pytest.raises(app.UsageError, match=r"Unexpected arguments: \['x'\]"):
    console.run_tool(["tool", "x"], _raise(AssertionError("never run")))
  ran = []
  console.run_tool(["tool"], lambda: ran.append(True))
  assert ran == [True]


@gin.configurable
def _inner(value=None):
  raise KeyError(f"no such column: {value}")


@gin.configurable
def _outer():
  _inner()


def test_gins_additions_are_not_shown(capsys):
  gin.clear_config()
  try:
    gin.bind_parameter("_inner.value", "label")
    with pytest.raises(KeyError) as raised:
      _outer()
  finally:
    gin.clear_config()
  # What gin gives: the message with a line per configurable on the stack.
  assert str(raised.value).count("In call to configurable") == 2
  original = console.gin_original(raised.value)
  assert type(original) is KeyError  # pylint: disable=unidiomatic-typecheck
  assert console.error_message(raised.value) == (
      "KeyError: no such column: label")
  with pytest.raises(SystemExit):
    console.run_tool(["tool"], _raise(raised.value), (KeyError,))
  err = capsys.readouterr().err
  assert err.strip() == "error: KeyError: no such column: label"
  # Any other exception is its own.
  error = ValueError("plain")
  assert console.gin_original(error) is error


_WARN = """
import subprocess, sys
from absl import logging
from mixvocab_tf.cli import console

def main(argv):
  logging.warning("Some labels are not in train.")
  logging.warning("Some labels are not in train.")
  if argv[1:] == ["parent"]:  # A job: its steps are child processes.
    subprocess.run([sys.executable, "-c", __doc__], check=True)
  else:
    logging.warning("A warning of the child.")

console.run_main(main, __name__)
"""


@pytest.mark.large
def test_a_warning_is_given_once_per_run_across_processes():
  env = dict(os.environ, PYTHONPATH=_ROOT)
  env.pop(console.WARNED_VARIABLE, None)
  script = f"__doc__ = {_WARN!r}\n" + _WARN
  result = subprocess.run([sys.executable, "-c", script, "parent"], env=env,
                          capture_output=True, text=True, timeout=300,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stderr.count("Some labels are not in train.") == 1, (
      result.stderr)
  assert result.stderr.count("A warning of the child.") == 1, result.stderr


_SAVE = """
import sys
from absl import logging
import tensorflow as tf
from mixvocab_tf.cli import console

def main(argv):
  tf.saved_model.save(tf.Module(), argv[1])  # TensorFlow logs INFO lines.
  logging.info("The package's own line.")

console.run_main(main, __name__)
"""


@pytest.mark.large
@pytest.mark.parametrize("verbose", [False, True])
def test_tensorflows_info_lines_show_only_with_tf_verbose(tmp_path, verbose):
  env = dict(os.environ, PYTHONPATH=_ROOT)
  command = [sys.executable, "-c", _SAVE, str(tmp_path / "saved")]
  if verbose:
    command.append("--tf_verbose")
  result = subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "The package's own line." in result.stderr, result.stderr
  # saved_model's "Writing fingerprint to ..." (absl) and "Assets written
  # to ..." (TensorFlow's logger).
  for line in ("Writing fingerprint", "Assets written"):
    assert (line in result.stderr) == verbose, result.stderr


_IMPORT_ALL = """
import importlib, pkgutil
import mixvocab_tf
names = [m.name for m in pkgutil.walk_packages(mixvocab_tf.__path__,
                                               "mixvocab_tf.")
         if not m.name.endswith("_test")]
for name in names:
  importlib.import_module(name)
print(len(names))
"""


def test_every_module_of_the_package_imports_beside_every_other():
  """No module defines an absl flag on import (two commands have flags of
  the same name: `output`, `model_dir`, `gin_file`)."""
  result = subprocess.run([sys.executable, "-c", _IMPORT_ALL],
                          env=dict(os.environ, PYTHONPATH=_ROOT),
                          capture_output=True, text=True, timeout=600,
                          check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert int(result.stdout.split()[-1]) > 100
