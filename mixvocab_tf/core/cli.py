"""What the command-line tools share: one-line errors for the user's mistakes.

A bad flag or a missing file is the user's to fix, and a traceback would bury
the message (convention 10: it says what was received and what is expected),
so tools end such errors with one line on stderr and exit status 1; any other
exception is a bug and keeps its traceback. `train.py` does the same with its
own `--traceback` switch.
"""

import sys
from typing import Callable, Sequence, Tuple, Type

from absl import app

#: Errors a tool reports in one line by default.
USER_ERRORS = (ValueError, FileNotFoundError, FileExistsError)


def run_tool(argv: Sequence[str], run: Callable[[], None],
             errors: Tuple[Type[BaseException], ...] = USER_ERRORS) -> None:
  """The body of a tool's absl `main(argv)`: no positional arguments, then
  `run()`, with `errors` printed as one line and exit status 1."""
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  try:
    run()
  except errors as e:
    print(f"\nerror: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)
