"""The console of the commands: the user's errors as one paragraph; every
module of the package imports beside every other."""

import os
import subprocess
import sys

from absl import app
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
