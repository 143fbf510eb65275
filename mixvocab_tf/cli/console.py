"""What the commands share: how they start, and what reaches the console.

Each command of `cli/` is an absl app whose `run()` calls `run_main`, which
shows the command module's documentation and flags on `--help` and lets
each warning through once per run (`warn_once_per_run`). Its `main(argv)`
ends through `run_tool`: a bad flag or a missing file is the user's to fix,
and a traceback would bury the message (convention 10: it says what was
received and what is expected), so such errors end with one paragraph on
stderr (`error: <type>: <message>`, once, `error_message`) and exit status
1; any other exception is a bug and keeps its traceback.

Flags are defined by each command's `define_flags()`, which its `run()`
calls, never on import (as Model Garden's binaries call
`official.common.flags.define_flags()` under `__main__`): every module of
the package imports beside every other.
"""

import hashlib
import logging as std_logging
import os
import sys
import threading
import traceback as traceback_lib
from typing import Callable, Optional, Sequence, Tuple, Type

from absl import app
from absl import flags
from absl import logging
import gin
import tensorflow as tf

from mixvocab_tf import quiet

#: Errors a command reports as one paragraph by default.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError)

#: Digests of the warnings given so far in this run: this process and the
#: one that started it (a job's steps are child processes).
WARNED_VARIABLE = "MIXVOCAB_TF_WARNED"
#: Digests kept in `WARNED_VARIABLE`, the latest ones (an environment
#: variable has a size limit).
_MOST_WARNED = 256


def gin_original(error: BaseException) -> BaseException:
  """The exception itself, without what gin's configurable calls added.

  An exception raised inside a gin configurable reaches its caller as a
  proxy whose message ends with "In call to configurable 'name' (<function
  ...>)", one line per configurable on the stack
  (`gin.utils.augment_exception_message_and_reraise`). The proxy is raised
  while the original is handled, so the original is its `__context__`.
  """
  while (getattr(type(error).__str__, "__module__", None) ==
         gin.utils.__name__ and
         error.__context__ is not None and
         type(error).__mro__[1] is type(error.__context__)):
    error = error.__context__
  return error


def error_message(error: BaseException) -> str:
  """`<type>: <message>` of an error, as the user reads it.

  Gin's additions go (`gin_original`); a TensorFlow op error gives its
  message without the op's traceback, a KeyError its text unquoted.
  """
  error = gin_original(error)
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


class _OncePerRun(std_logging.Filter):
  """Drops a warning whose text was given before in this run."""

  def __init__(self):
    super().__init__()
    self._lock = threading.Lock()

  def filter(self, record):
    if record.levelno != std_logging.WARNING:
      return True
    digest = hashlib.sha256(
        record.getMessage().encode("utf-8", "replace")).hexdigest()[:16]
    with self._lock:
      given = os.environ.get(WARNED_VARIABLE, "").split()
      if digest in given:
        return False
      os.environ[WARNED_VARIABLE] = " ".join(
          (given + [digest])[-_MOST_WARNED:])
    return True


_ONCE_PER_RUN = _OncePerRun()


def warn_once_per_run() -> None:
  """Lets each warning of absl's log through once per run.

  A job checks the user's dataset when it starts and warns then; each of
  its steps (child processes: the trainers, evaluations) and the job's own
  later steps read the dataset again and would give the same warning. The
  digests of the warnings given pass to child processes in the environment
  (`WARNED_VARIABLE`), so a child drops those its parent gave; the job's
  report keeps them.
  """
  handler = logging.get_absl_handler()
  if _ONCE_PER_RUN not in handler.filters:
    handler.addFilter(_ONCE_PER_RUN)


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
  warn_once_per_run()

  def quiet_main(args):
    # TensorFlow's and tf_keras's INFO lines stay off the console (and the
    # logs) unless --tf_verbose: `quiet.tensorflow_info_hidden`.
    with quiet.tensorflow_info_hidden(quiet.verbose_requested(argv)):
      return main(args)

  app.run(quiet_main, argv=argv)
