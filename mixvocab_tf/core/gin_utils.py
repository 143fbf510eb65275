"""Gin at the binary boundary: the search path and parsing with clear errors.

Also the one way back from a finished run to its task: the trainer writes
`operative_config.gin` beside its checkpoints, and tools that rebuild the
run's model (evaluation, export) read it with `parse_run_config`; a run
started by hand with relative vocabulary paths gets copies of them
(`copy_vocabularies_into_run`), so its record names files that exist from
any directory.

The shipped configs live in the package (`mixvocab_tf/gin_configs/`, package
data, so they exist in any installation); a `gin_configs/` directory at the
root of a source checkout is searched too (before the package's), for configs
kept beside the code. With both on gin's search path a bare name such as
`stage1_tpu.gin` works from any directory, and gin files can `include` each
other by bare name.
"""

import contextlib
import difflib
import inspect
import logging
import os
import re
from typing import Optional, Sequence

import gin
import tensorflow as tf

from mixvocab_tf.core import base_task
from mixvocab_tf.core import trainer as trainer_lib

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GinConfigError(ValueError):
  """A gin file or binding is wrong: unknown name, bad value, missing file."""


class _SearchPathNoise(logging.Filter):
  """Drops gin's "Path not found" errors for bare names.

  Gin looks a bare file name up as a Python resource before it tries its
  search path, and logs an ERROR when the first lookup fails, even though the
  file is then found; every run would print one per gin file and `include`.
  Files that are really missing raise `GinConfigError` instead.
  """

  def filter(self, record):
    return not (record.levelno == logging.ERROR and
                record.pathname.endswith(os.path.join("gin",
                                                      "resource_reader.py"))
                and str(record.msg).startswith("Path not found"))


_SEARCH_PATH_NOISE = _SearchPathNoise()


def config_dirs():
  """Directories searched for bare gin file names, first match wins."""
  dirs = [os.path.join(os.path.dirname(_PACKAGE_DIR), "gin_configs"),
          os.path.join(_PACKAGE_DIR, "gin_configs")]
  return [d for d in dirs if os.path.isdir(d)]


def shipped_configs():
  """Names of the gin files shipped with the package."""
  names = set()
  for directory in config_dirs():
    names.update(f for f in os.listdir(directory) if f.endswith(".gin"))
  return sorted(names)


def _known_names():
  # pylint: disable=protected-access
  registry = gin.config._REGISTRY
  names = set()
  for selector, _ in registry.items():
    names.add(selector.split(".")[-1])
  return names


def _suggest(message):
  """Adds "did you mean" to gin's unknown-name errors."""
  match = re.search(r"No configurable matching '([^']+)'", message)
  if match:
    name = match.group(1).split(".")[-1]
    close = difflib.get_close_matches(name, sorted(_known_names()), n=3)
    if close:
      return f"{message}\nDid you mean: {', '.join(close)}?"
    return message
  match = re.search(
      r"Configurable '([^']+)' doesn't have a parameter named '([^']+)'",
      message)
  if match:
    try:
      # pylint: disable=protected-access
      configurable = gin.config._REGISTRY.get_match(match.group(1))
      params = list(inspect.signature(configurable.wrapped).parameters)
    except Exception:  # pylint: disable=broad-except
      return message
    close = difflib.get_close_matches(match.group(2), params, n=3)
    hint = f"Did you mean: {', '.join(close)}? " if close else ""
    return (f"{message}\n{hint}Its parameters are: "
            f"{', '.join(p for p in params if p not in ('self', 'kwargs'))}.")
  return message


def parse(gin_files: Sequence[str], gin_bindings: Sequence[str]) -> None:
  """Parses gin files (paths or bare names) and bindings, or raises clearly.

  The modules whose configurables the files name must be imported first
  (`mixvocab_tf.train` imports the tasks and the jobs).

  Raises:
    GinConfigError: a file is missing or a binding is wrong; the message
      names the file or binding and, for a misspelt name, the closest names.
  """
  root_logger = logging.getLogger()
  if _SEARCH_PATH_NOISE not in root_logger.filters:
    root_logger.addFilter(_SEARCH_PATH_NOISE)
  for directory in reversed(config_dirs()):
    if directory not in gin.config._LOCATION_PREFIXES:  # pylint: disable=protected-access
      gin.add_config_file_search_path(directory)
  for path in gin_files:
    if not os.path.isfile(path) and not any(
        os.path.isfile(os.path.join(d, path)) for d in config_dirs()):
      raise GinConfigError(
          f"Gin file not found: {path!r} (looked in the current directory and "
          f"{config_dirs()}). Shipped configs: {', '.join(shipped_configs())}.")
  try:
    gin.parse_config_files_and_bindings(
        list(gin_files), list(gin_bindings), finalize_config=False)
  except Exception as e:  # pylint: disable=broad-except
    # Gin raises ValueError, KeyError, SyntaxError, tokenize errors, ...
    raise GinConfigError(f"Bad gin configuration: {_suggest(str(e))}") from e


#: Where `copy_vocabularies_into_run` puts the run's vocabularies.
RUN_VOCAB_DIR = "vocab"


def _is_vocab_parameter(name):
  # `vocab`, `student_vocab`, `TEACHER_VOCAB` (a macro's name), ... but not
  # sizes (`vocab_size`).
  return name.lower().endswith("vocab")


def copy_vocabularies_into_run(model_dir: str) -> dict:
  """Copies the vocabularies bound by relative paths into the run directory.

  A run started by hand with `FinetuneSnipsTask.vocab = 'runs/x/vocab.txt'`
  would record that relative path in its `operative_config.gin`, and tools
  started from another directory would not find the file (issue 17, item 8).
  Each binding (or macro) whose name ends in `vocab` and whose value is a
  relative path of an existing file is copied to `model_dir/vocab/` and bound
  to the copy's absolute path, so the run directory holds its vocabulary and
  its record names a file that exists from anywhere. Absolute paths (the
  pipeline's `{output_dir}` bindings) are left as they are.

  Call it after parsing and before the task is built (`train.py` does).

  Returns:
    {binding: path of the copy} for each binding rebound.
  """
  # pylint: disable=protected-access
  rebound = {}
  for (scope, selector), params in list(gin.config._CONFIG.items()):
    macro = selector == "gin.macro"
    for name, value in list(params.items()):
      vocab_name = scope if macro else name
      if not (isinstance(value, str) and value and
              _is_vocab_parameter(vocab_name) and
              not os.path.isabs(value) and os.path.isfile(value)):
        continue
      target_dir = os.path.join(model_dir, RUN_VOCAB_DIR)
      if "://" not in target_dir:
        target_dir = os.path.abspath(target_dir)
      target = os.path.join(target_dir, os.path.basename(value))
      with open(value, "rb") as f:
        content = f.read()
      if tf.io.gfile.exists(target):
        with tf.io.gfile.GFile(target, "rb") as f:
          if f.read() != content:
            # Another vocabulary of the same file name: keep both.
            target = os.path.join(
                target_dir, f"{vocab_name}_{os.path.basename(value)}")
      tf.io.gfile.makedirs(target_dir)
      with tf.io.gfile.GFile(target + ".tmp", "wb") as f:
        f.write(content)
      tf.io.gfile.rename(target + ".tmp", target, overwrite=True)
      # A macro `NAME = '...'` is the binding `NAME/gin.macro.value`.
      binding = f"{scope}/{selector}.{name}" if scope else f"{selector}.{name}"
      gin.bind_parameter(binding, target)
      rebound[scope if macro else binding] = target
  return rebound


def parse_run_config(model_dir: Optional[str] = None,
                     gin_files: Sequence[str] = (),
                     gin_bindings: Sequence[str] = ()) -> type:
  """Parses the configuration of a trained run; returns its task class.

  Tools that rebuild a run's model (`tools/evaluate.py`, the export) read
  the run's own record, `model_dir/operative_config.gin`, or the gin files
  given instead, then `gin_bindings` on top.

  The record is parsed with `skip_unknown`: it also names configurables of
  modules that only the binary which trained the run imports (the pipeline
  runner, the grid of runs); they play no part in rebuilding the task.
  Files given explicitly are parsed strictly, as `train.py` does.

  The task modules must be imported first (`import mixvocab_tf.tasks`, or
  the module of one's own task), so that `Trainer.task` names a registered
  task.

  Args:
    model_dir: the run's directory (its `operative_config.gin` is read
      unless `gin_files` is given).
    gin_files: gin files to parse instead of the run's record.
    gin_bindings: extra bindings, parsed last.

  Returns:
    The class registered under the configured `Trainer.task`.

  Raises:
    ValueError: neither `model_dir` nor `gin_files` is given.
    FileNotFoundError: `model_dir` has no operative config.
    GinConfigError: a file or binding is wrong.
  """
  if gin_files:
    parse(gin_files, gin_bindings)
  else:
    if not model_dir:
      raise ValueError("Give the run's model_dir (--model_dir; its "
                       "operative_config.gin is read) or its gin files "
                       "(--gin_file); received neither.")
    operative = os.path.join(model_dir, trainer_lib.OPERATIVE_CONFIG)
    if not os.path.isfile(operative):
      raise FileNotFoundError(
          f"{operative} not found; pass the run's gin files (--gin_file) "
          "instead.")
    parse([], [])  # The search path, for the record's `include`s.
    try:
      gin.parse_config_file(operative, skip_unknown=True)
    except Exception as e:  # pylint: disable=broad-except
      raise GinConfigError(
          f"Bad gin configuration in {operative}: {_suggest(str(e))}") from e
    parse([], gin_bindings)
  task = gin.query_parameter("Trainer.task")
  if isinstance(task, type):
    return task
  return base_task.get_task_class(task)


@contextlib.contextmanager
def isolated_config():
  """Runs a block with an empty gin configuration, then restores the caller's.

  Rebuilding a run's task in process (the pipeline's export step) parses that
  run's configuration, which must neither mix with nor replace the caller's
  (the pipeline's own steps). Gin has no public way to save its state, so
  the module's tables are copied and put back.
  """
  # pylint: disable=protected-access
  config = gin.config
  copy = lambda table: {k: dict(v) if isinstance(v, dict) else v
                        for k, v in table.items()}
  saved = (copy(config._CONFIG), dict(config._SINGLETONS),
           set(config._IMPORTS), copy(config._OPERATIVE_CONFIG),
           config.config_is_locked())
  gin.clear_config()
  try:
    yield
  finally:
    gin.clear_config()
    config._CONFIG.update(saved[0])
    config._SINGLETONS.update(saved[1])
    config._IMPORTS.update(saved[2])
    with config._OPERATIVE_CONFIG_LOCK:
      config._OPERATIVE_CONFIG.update(saved[3])
    config._set_config_is_locked(saved[4])
