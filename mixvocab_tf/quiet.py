"""Keeps TensorFlow's lines for its developers off the console; `--tf_verbose`
shows them.

On import and first use, TensorFlow's C++ side prints lines meant for its own
developers: the CPU instructions it was not built for (cpu_feature_guard), the
oneDNN notice, "Could not find cuda drivers", XLA/cuDNN/cuBLAS factory
registrations and, on a machine without a GPU, an ERROR-level "failed call to
cuInit: ... CUDA error" that reads like a failure although training on the CPU
is fine. A newcomer sees them once per process, so once per step of a
pipeline; they bury the package's progress lines and real warnings.

`TF_CPP_MIN_LOG_LEVEL` hides them, but TensorFlow reads it once, when its
library loads: it must be in the environment before the process's first
`import tensorflow`; set later, it does nothing. Children started with
`child_env` get it from the start. A value the user set is kept, and
`--tf_verbose` on the command line sets nothing, so the lines come back.

TensorFlow's and tf_keras's Python modules also log INFO lines of that kind
(a SavedModel export about ten). Every command drops them
(`tensorflow_info_hidden`, below), and again `--tf_verbose` keeps them.

This module imports neither TensorFlow nor the package, so that it can run
first.
"""

import contextlib
import importlib.util
import logging
import os
import sys
from typing import Iterator, MutableMapping, Optional, Sequence

#: The command-line switch that keeps TensorFlow's C++ lines.
VERBOSE_FLAG = "--tf_verbose"
LEVEL_VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
_VERBOSE_HELP = ("Show TensorFlow's C++ start-up and info lines (CPU "
                 "features, CUDA probing, ...), hidden by default.")


def verbose_requested(argv: Optional[Sequence[str]] = None) -> bool:
  """Whether the command line asks for TensorFlow's lines (last one wins).

  Read from `sys.argv` rather than the parsed flag: the level must be set
  before TensorFlow is imported, which is before absl parses the flags.
  """
  argv = sys.argv if argv is None else argv
  verbose = False
  for arg in argv[1:]:
    if arg == "--":
      break
    name, _, value = arg.lstrip("-").partition("=")
    if name == "tf_verbose":
      verbose = value.lower() not in ("false", "0", "no")
    elif name == "notf_verbose":
      verbose = False
  return verbose


def quiet_level() -> str:
  """'3' (FATAL only) without an NVIDIA driver, else '2' (ERROR and FATAL).

  cuInit's line is an ERROR, so '2' would keep it. Without a driver it is
  the only ERROR at start-up and means nothing, and the errors that stop a
  run reach Python as exceptions, which the trainer prints. With a driver
  loaded, a failing cuInit is a real problem (training silently on the CPU),
  so ERROR lines stay.
  """
  return "2" if os.path.exists("/proc/driver/nvidia") else "3"


def quiet(argv: Optional[Sequence[str]] = None,
          environ: Optional[MutableMapping[str, str]] = None) -> None:
  """Sets the quiet level in `environ` (default `os.environ`).

  Unless the user set `TF_CPP_MIN_LOG_LEVEL` or `argv` (default `sys.argv`)
  has `--tf_verbose`. Call it before anything imports TensorFlow.
  """
  environ = os.environ if environ is None else environ
  if not verbose_requested(argv):
    environ.setdefault(LEVEL_VARIABLE, quiet_level())


def child_env(verbose: bool) -> dict:
  """The environment for a child process of the package's binaries.

  A child reads the level when its TensorFlow loads, before its own code
  runs, so the parent sets it for it (a child started with `--tf_verbose`
  is given the parent's environment as it is).
  """
  env = dict(os.environ)
  if not verbose:
    env.setdefault(LEVEL_VARIABLE, quiet_level())
  return env


#: The Python logger of TensorFlow's own modules (`tf.get_logger()`); many
#: of them log through absl's logger instead.
TENSORFLOW_LOGGER = "tensorflow"
ABSL_LOGGER = "absl"
#: The packages whose INFO lines `tensorflow_info_hidden` keeps off.
_CHATTY_PACKAGES = ("tensorflow", "tf_keras")


def _package_dirs(names) -> tuple:
  """The directories of the installed packages `names` (none imported)."""
  dirs = []
  for name in names:
    try:
      spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
      continue
    for location in (spec and spec.submodule_search_locations) or ():
      dirs.append(os.path.join(os.path.realpath(location), ""))
  return tuple(dirs)


class _BelowWarningFrom(logging.Filter):
  """Drops records below WARNING logged from files under `dirs`."""

  def __init__(self, dirs):
    super().__init__()
    self.dirs = dirs
    self._inside = {}  # pathname -> under one of `dirs`

  def filter(self, record):
    if record.levelno >= logging.WARNING:
      return True
    inside = self._inside.get(record.pathname)
    if inside is None:
      inside = os.path.realpath(record.pathname).startswith(self.dirs)
      self._inside[record.pathname] = inside
    return not inside


@contextlib.contextmanager
def tensorflow_info_hidden(verbose: bool) -> Iterator[None]:
  """Keeps TensorFlow's and tf_keras's INFO lines off the console in the block.

  A SavedModel export and a .tflite conversion log, through Python logging,
  about ten lines for TensorFlow's developers per file ("Function ...
  contains input name(s) ... with unsupported characters", "Found untraced
  functions", "Sharding callback duration", "Assets written to", "Writing
  fingerprint"). Every command of the package runs inside this block
  (`cli/console.py`), and so do a pipeline's in-process steps (export,
  report) when the pipeline is run from Python, so that the console shows
  the package's own lines. Only INFO (and DEBUG) records from
  TensorFlow's and tf_keras's own files are dropped: their warnings and
  errors, and every line of the package, still show. With `verbose`
  (`--tf_verbose`) nothing changes. Lines that TensorFlow's C++ side writes
  to stderr itself (a converter's "Ignored output_format.") are not Python
  logging and still show.
  """
  if verbose:
    yield
    return
  record_filter = _BelowWarningFrom(_package_dirs(_CHATTY_PACKAGES))
  loggers = [logging.getLogger(n) for n in (TENSORFLOW_LOGGER, ABSL_LOGGER)]
  for logger in loggers:
    logger.addFilter(record_filter)
  try:
    yield
  finally:
    for logger in loggers:
      logger.removeFilter(record_filter)


def define_flag() -> None:
  """Defines `--tf_verbose` for absl (read from argv by `quiet`), once.

  Commands define it so that absl accepts it and `--help` lists it.
  """
  from absl import flags  # pylint: disable=g-import-not-at-top
  if "tf_verbose" not in flags.FLAGS:
    flags.DEFINE_bool("tf_verbose", False, _VERBOSE_HELP)
