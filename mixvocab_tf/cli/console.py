"""What the commands share: how they start, and what reaches the console.

Each command of `cli/` is an absl app whose `run()` calls `run_main`, which
shows the command module's documentation and flags on `--help`. Its
`main(argv)` ends through `run_tool`: a bad flag or a missing file is the
user's to fix, and a traceback would bury the message (convention 10: it
says what was received and what is expected), so such errors end with one
paragraph on stderr (`error: <type>: <message>`, `error_message`) and exit
status 1; any other exception is a bug and keeps its traceback.

Flags are defined by each command's `define_flags()`, which its `run()`
calls, never on import (as Model Garden's binaries call
`official.common.flags.define_flags()` under `__main__`): every module of
the package imports beside every other.
"""

import sys
import traceback as traceback_lib
from typing import Callable, Optional, Sequence, Tuple, Type

from absl import app
from absl import flags
import tensorflow as tf

from mixvocab_tf import quiet

#: Errors a command reports as one paragraph by default.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError)


def error_message(error: BaseException) -> str:
  """`<type>: <message>` of an error, as the user reads it: a TensorFlow op
  error gives its message without the op's traceback, a KeyError its text
  unquoted."""
  if isinstance(error, tf.errors.OpError):
    message = error.message
  elif isinstance(error, KeyError) and error.args:
    message = str(error.args[0])
  else:
    message = str(error)
  return f"{type(error).__name__}: {message}"


def run_tool(argv: Sequence[str], run: Callable[[], None],
             errors: Tuple[Type[BaseException], ...] = USER_ERRORS,
             traceback: bool = False) -> None:
  """The body of a command's absl `main(argv)`: no positional arguments,
  then `run()`, with `errors` printed as one paragraph and exit status 1.

  Args:
    argv: what absl leaves of the command line.
    run: the command.
    errors: the exception types that are the user's to fix.
    traceback: print the traceback of those too (the trainer's
      `--traceback`).
  """
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  try:
    run()
  except errors as e:
    if traceback:
      traceback_lib.print_exc()
    print(f"\nerror: {error_message(e)}", file=sys.stderr)
    sys.exit(1)


def run_main(main: Callable[[Sequence[str]], None], module_name: str,
             argv: Optional[Sequence[str]] = None) -> None:
  """`app.run(main)` for a command whose flags are defined in `module_name`.

  absl's `--help` prints the docstring of `__main__` and the flags defined
  by it (registered under `sys.argv[0]`). A console script's `__main__` is a
  generated wrapper and a `tools/` script a thin one, neither defining a
  flag: this shows the command module's docstring and flags instead.

  Args:
    main: the absl main, `main(argv)`.
    module_name: the module that defines the command's flags and holds its
      documentation (`__name__` of the caller).
    argv: the command line (default `sys.argv`).
  """
  module = sys.modules[module_name]
  main_module = sys.modules["__main__"]
  if main_module is not module:
    main_module.__doc__ = module.__doc__
    program = sys.argv[0] if argv is None else argv[0]
    for flag in flags.FLAGS.get_key_flags_for_module(module_name):
      flags.FLAGS.register_key_flag_for_module(program, flag)
  # Every command takes --tf_verbose, which `quiet` reads from the command
  # line before TensorFlow loads; absl must know it to accept it.
  quiet.define_flag()
  app.run(main, argv=argv)
