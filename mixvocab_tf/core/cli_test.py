"""run_tool: the user's errors in one line and status 1, bugs with traces."""

from absl import app
import pytest

from mixvocab_tf.core import cli


def _raise(error):
  def run():
    raise error
  return run


def test_user_errors_end_in_one_line_and_status_1(capsys):
  with pytest.raises(SystemExit) as exit_info:
    cli.run_tool(["tool"], _raise(FileNotFoundError("/no/run not found")))
  assert exit_info.value.code == 1
  assert capsys.readouterr().err.strip() == (
      "error: FileNotFoundError: /no/run not found")


def test_bugs_and_stray_arguments_are_not_hidden():
  with pytest.raises(KeyError):
    cli.run_tool(["tool"], _raise(KeyError("bug")))
  with pytest.raises(app.UsageError, match=r"Unexpected arguments: \['x'\]"):
    cli.run_tool(["tool", "x"], _raise(AssertionError("never run")))
  ran = []
  cli.run_tool(["tool"], lambda: ran.append(True))
  assert ran == [True]
