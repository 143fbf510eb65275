"""Gin at the binary boundary: the search path and parsing with clear errors.

Also the one way back from a finished run to its task: the trainer writes
`operative_config.gin` beside its checkpoints, and tools that rebuild the
run's model (evaluation, export) read it with `parse_run_config`; a run
started by hand with relative vocabulary paths gets copies of them
(`copy_vocabularies_into_run`), so its record names files that exist from
any directory.

The shipped configs live in the package (`mixvocab_tf/gin_configs/`, package
data, so they exist in any installation), one folder per kind (`base/`,
`pretraining/`, `distillation/`, `finetuning/`, `jobs/`); a `gin_configs/`
directory at the root of a source checkout is searched too (before the
package's), for configs kept beside the code. Every folder of both trees is
on gin's search path, so a bare name such as `stage1_paper.gin` works from
any directory, gin files `include` each other by bare name, and bare names
are unique across the tree. The names the configs had before the tree
(`stage1_tpu.gin`, ...) still resolve (`RENAMED_CONFIGS`).
"""

import ast
import contextlib
import difflib
import inspect
import logging
import os
import re
from typing import Optional, Sequence

from absl import logging as absl_logging
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
  Then it logs an INFO line per file found on the search path.
  """

  def filter(self, record):
    if not record.pathname.endswith(os.path.join("gin", "resource_reader.py")):
      return True
    message = str(record.msg)
    # Its INFO line for every file found on the search path says no more.
    return not ((record.levelno == logging.ERROR and
                 message.startswith("Path not found")) or
                (record.levelno == logging.INFO and
                 message.startswith("system_path_file_exists")))


_SEARCH_PATH_NOISE = _SearchPathNoise()


def config_dirs():
  """Roots of the gin config trees, searched in this order."""
  dirs = []
  for directory in (os.path.join(os.path.dirname(_PACKAGE_DIR), "gin_configs"),
                    os.path.join(_PACKAGE_DIR, "gin_configs")):
    # A checkout's `gin_configs/` may be a link to the package's.
    directory = os.path.realpath(directory)
    if os.path.isdir(directory) and directory not in dirs:
      dirs.append(directory)
  return dirs


def search_dirs():
  """Every folder of the config trees, first match wins: gin's search path."""
  dirs = []
  for root in config_dirs():
    for directory, subdirs, _ in os.walk(root):
      subdirs.sort()
      dirs.append(directory)
  return dirs


#: The bare names the shipped configs had before they were sorted into
#: folders (issue 43), and their names now: `_cpu` was the small-budget
#: recipe (AdamW where it was tuned), `_tpu` the paper's, `_gpu` the paper's
#: on GPUs. `--gin_file` and `include` still accept them, with a warning.
RENAMED_CONFIGS = {
    "stage1_cpu.gin": "stage1_small.gin",
    "stage1_tpu.gin": "stage1_paper.gin",
    "stage1_gpu.gin": "stage1_paper_gpu.gin",
    "stage2_cpu.gin": "stage2_small.gin",
    "stage2_tpu.gin": "stage2_paper.gin",
    "stage2_gpu.gin": "stage2_paper_gpu.gin",
    "nokd_cpu.gin": "nokd_small.gin",
    "dual_cpu.gin": "dual_small.gin",
    "stage2_distill_cpu.gin": "stage2_distill_small.gin",
    "stage2_distill_tpu.gin": "stage2_distill_paper.gin",
    "distilbert_cpu.gin": "distilbert_small.gin",
    "distilbert_tpu.gin": "distilbert_paper.gin",
    "tinybert_cpu.gin": "tinybert_small.gin",
    "tinybert_tpu.gin": "tinybert_paper.gin",
    "pkd_cpu.gin": "pkd_small.gin",
    "pkd_tpu.gin": "pkd_paper.gin",
    "distill_snips_cpu.gin": "distill_snips_small.gin",
    "distill_glue_cpu.gin": "distill_glue_small.gin",
    "finetune_snips.gin": "finetune_snips_paper.gin",
    "finetune_snips_cpu.gin": "finetune_snips_small.gin",
    "finetune_glue.gin": "finetune_glue_paper.gin",
    "finetune_glue_cpu.gin": "finetune_glue_small.gin",
    "finetune_glue_teacher_cpu.gin": "finetune_glue_teacher_small.gin",
}


def shipped_configs():
  """Bare names of the gin files in the config trees, sorted."""
  names = set()
  for directory in search_dirs():
    names.update(f for f in os.listdir(directory) if f.endswith(".gin"))
  return sorted(names)


def _find_in_trees(name):
  for directory in search_dirs():
    path = os.path.join(directory, name)
    if os.path.isfile(path):
      return path
  return None


def find_config(name: str) -> Optional[str]:
  """The file a bare config name stands for in the trees, or None.

  An old name (`RENAMED_CONFIGS`) gives its renamed file, unless a file of
  the old name itself is in the trees.
  """
  return _find_in_trees(name) or (
      _find_in_trees(RENAMED_CONFIGS[name]) if name in RENAMED_CONFIGS
      else None)


def _is_renamed(path):
  # Gin asks with each search-path prefix joined to the name; the bare name
  # (the current directory's prefix, tried first) is the one to answer, when
  # no file has that name.
  return (path in RENAMED_CONFIGS and not os.path.isfile(path) and
          _find_in_trees(path) is None and find_config(path) is not None)


def _open_renamed(path):
  """Gin's file reader for an old config name: opens the renamed file."""
  new_path = find_config(path)
  absl_logging.warning("%s is now %s; reading %s.", path,
                       RENAMED_CONFIGS[path], new_path)
  return open(new_path, encoding="utf-8")


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


def _is_required(value):
  """Whether a bound value is `%gin.REQUIRED` itself (not yet overridden)."""
  # pylint: disable=protected-access
  # `%NAME` of a constant is a reference to `gin.constant` in scope NAME.
  return (isinstance(value, gin.config.ConfigurableReference) and
          value.configurable.wrapped is gin.config._retrieve_constant and
          gin.config._CONSTANTS.get("/".join(value.scopes)) is gin.REQUIRED)


def unbound_required() -> list:
  """The macros and bindings still `%gin.REQUIRED` in the parsed config.

  A gin file marks what its user must give (a run directory, a dataset) as
  `NAME = %gin.REQUIRED`, as t5x does, instead of a placeholder path that
  might exist. Gin checks them only when a config is finalized, which
  parsing here does not do (bindings may follow); unchecked, gin's
  sentinel object would reach the task as the value.

  Returns:
    Their names as a binding sets them, sorted: `STAGE1_DIR` for a macro,
    `StudentSpec.init_checkpoint` for a parameter.
  """
  # pylint: disable=protected-access
  names = set()
  for (scope, selector), params in gin.config._CONFIG.items():
    for name, value in params.items():
      if not _is_required(value):
        continue
      if selector == "gin.macro":
        names.add(scope)
      else:
        binding = f"{selector.split('.')[-1]}.{name}"
        names.add(f"{scope}/{binding}" if scope else binding)
  return sorted(names)


def check_required() -> None:
  """Raises `GinConfigError` naming each required value left unbound.

  Raises:
    GinConfigError: one sentence naming the macros (or bindings) and the
      `--gin_bindings` that give them.
  """
  names = unbound_required()
  if not names:
    return
  listed = (names[0] if len(names) == 1 else
            f"{', '.join(names[:-1])} and {names[-1]}")
  flags = " ".join(f"--gin_bindings=\"{n} = '...'\"" for n in names)
  raise GinConfigError(
      f"{listed} {'is' if len(names) == 1 else 'are'} required by the gin "
      f"files and not set: add {flags} (the gin file's header says what "
      f"{'it is' if len(names) == 1 else 'they are'}).")


def parse(gin_files: Sequence[str], gin_bindings: Sequence[str],
          require_all: bool = True) -> None:
  """Parses gin files (paths or bare names) and bindings, or raises clearly.

  The modules whose configurables the files name must be imported first
  (`mixvocab_tf.train` imports the tasks and the jobs).

  Args:
    gin_files: paths, or names of shipped configs.
    gin_bindings: bindings parsed after the files.
    require_all: raise if a macro or binding the files mark
      `%gin.REQUIRED` is left unbound (`check_required`); False only to
      inspect a file's settings without running it.

  Raises:
    GinConfigError: a file is missing, a binding is wrong or a required
      value is not given; the message names the file, binding or macro and,
      for a misspelt name, the closest names.
  """
  root_logger = logging.getLogger()
  if _SEARCH_PATH_NOISE not in root_logger.filters:
    root_logger.addFilter(_SEARCH_PATH_NOISE)
  for directory in search_dirs():
    if directory not in gin.config._LOCATION_PREFIXES:  # pylint: disable=protected-access
      gin.add_config_file_search_path(directory)
  gin.config.register_file_reader(_open_renamed, _is_renamed)
  for path in gin_files:
    if not os.path.isfile(path) and find_config(path) is None:
      raise GinConfigError(
          f"Gin file not found: {path!r} (looked in the current directory and "
          f"the folders of {config_dirs()}). Shipped configs: "
          f"{', '.join(shipped_configs())}.")
  try:
    gin.parse_config_files_and_bindings(
        list(gin_files), list(gin_bindings), finalize_config=False)
  except Exception as e:  # pylint: disable=broad-except
    # Gin raises ValueError, KeyError, SyntaxError, tokenize errors, ...
    raise GinConfigError(f"Bad gin configuration: {_suggest(str(e))}") from e
  if require_all:
    check_required()


#: Where `copy_vocabularies_into_run` puts the run's vocabularies.
RUN_VOCAB_DIR = "vocab"


def _is_vocab_parameter(name):
  # `vocab`, `student_vocab`, `TEACHER_VOCAB` (a macro's name), ... but not
  # sizes (`vocab_size`).
  return name.lower().endswith("vocab")


def copy_vocabularies_into_run(model_dir: str) -> dict:
  """Copies the vocabularies bound by relative paths into the run directory.

  A run started by hand with `IntentSlotTask.vocab = 'runs/x/vocab.txt'`
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
    if not tf.io.gfile.exists(operative):
      raise FileNotFoundError(
          f"{operative} not found; pass the run's gin files (--gin_file) "
          "instead.")
    parse([], [])  # The search path, for the record's `include`s.
    try:
      # Read through gfile: the run directory may be on gs://.
      with tf.io.gfile.GFile(operative) as f:
        gin.parse_config(f.read(), skip_unknown=True)
    except Exception as e:  # pylint: disable=broad-except
      raise GinConfigError(
          f"Bad gin configuration in {operative}: {_suggest(str(e))}") from e
    parse([], gin_bindings)
  task = gin.query_parameter("Trainer.task")
  if isinstance(task, type):
    return task
  return base_task.get_task_class(task)


def run_binding(model_dir: str, name: str, default=None):
  """The value a run's `operative_config.gin` binds to `name`, else `default`.

  A look at one parameter of a finished run without parsing its whole
  configuration (`parse_run_config` does that, replacing the caller's). `name`
  is a configurable's parameter, e.g. 'StudentSpec.vocab'; a scoped or
  module-qualified binding of it ('student/StudentSpec.vocab') matches too.
  The value is read as a Python literal (strings, numbers, None); one gin
  wrote over several lines, or a reference, gives `default`.
  """
  operative = os.path.join(model_dir, trainer_lib.OPERATIVE_CONFIG)
  if not tf.io.gfile.exists(operative):
    return default
  with tf.io.gfile.GFile(operative, "r") as f:
    for line in f:
      key, sep, value = line.partition("=")
      key = key.strip()
      if sep and (key == name or key.endswith(("." + name, "/" + name))):
        try:
          return ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
          return default
  return default


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


#: The command that writes docs/CONFIG.md (tests/test_config_doc.py).
CONFIG_DOC_COMMAND = ("python -m mixvocab_tf.train --list_configurables "
                      "> docs/CONFIG.md")


def _is_package_configurable(configurable):
  # The package's own, not those of its tests (`*_test` modules register
  # tasks), of `__main__` or of studies outside it (`projects/`).
  module = getattr(configurable.wrapped, "__module__", "") or ""
  return ((module == "mixvocab_tf" or module.startswith("mixvocab_tf.")) and
          not module.endswith("_test"))


def _parameters(wrapped):
  """The parameters a binding can set: (name, default or gin.REQUIRED, ...).

  For a class, its `__init__`'s, then those its `**kwargs` passes on to its
  base classes (a task's `Task` arguments), as far as the chain goes.
  """
  functions = ([c.__dict__["__init__"] for c in wrapped.__mro__
                if "__init__" in c.__dict__ and c is not object]
               if inspect.isclass(wrapped) else [wrapped])
  parameters = {}
  for function in functions:
    try:
      signature = inspect.signature(function)
    except (TypeError, ValueError):
      break
    more = False
    for parameter in signature.parameters.values():
      if parameter.kind == parameter.VAR_KEYWORD:
        more = True
      elif (parameter.kind != parameter.VAR_POSITIONAL and
            parameter.name not in ("self", "cls")):
        parameters.setdefault(parameter.name, parameter.default)
    if not more:
      break
  return parameters


def _default_text(default):
  if default is inspect.Parameter.empty or default is gin.REQUIRED:
    return "required"
  if inspect.isfunction(default) or inspect.isclass(default):
    return f"`{default.__module__}.{default.__qualname__}`"
  text = repr(default)
  if " at 0x" in text:  # An object's address changes with every run.
    text = f"a {type(default).__name__}"
    return text
  return f"`{text}`".replace("|", "\\|")


def _summary(wrapped):
  """The docstring's first paragraph, on one line."""
  doc = inspect.getdoc(wrapped) or ""
  paragraph = doc.strip().split("\n\n")[0]
  return " ".join(line.strip() for line in paragraph.splitlines()).replace(
      "|", "\\|")


#: What each folder of the shipped config tree holds (docs/CONFIG.md).
_CONFIG_FOLDERS = {
    "base": "include-only fragments, not run on their own",
    "pretraining": "stage I, stage II, NoKD and dual training",
    "distillation": ("distillation in pretraining (stage II with "
                     "distillation, DistilBERT, TinyBERT, PKD) and task "
                     "distillation (SNIPS, GLUE)"),
    "finetuning": "SNIPS and GLUE fine-tuning, and the GLUE teacher",
    "jobs": ("jobs of several steps: the main job, your own data, the "
             "pretrained student"),
}


def _config_tree_markdown():
  """The shipped gin files by folder, and the names they had before."""
  root = os.path.join(_PACKAGE_DIR, "gin_configs")
  lines = [
      "## Shipped gin files",
      "",
      "In `mixvocab_tf/gin_configs/`, one folder per kind; a bare name "
      "(`--gin_file=stage1_small.gin`, `include 'pretraining_base.gin'`) is "
      "found in any folder, from any directory. `_small` is the small-budget "
      "recipe (2 CPU cores, minutes; settings tuned for that budget, such as "
      "AdamW for stage II instead of LAMB), `_paper` the paper's settings "
      "and scale (pretraining: LAMB at batch 2048 on a TPU), `_paper_gpu` "
      "the paper's on GPUs. Each file's header says what it runs, how, and what to "
      "expect; the sweeps that chose the small recipes are in "
      "`projects/pretraining_recipe/README.md` and "
      "`projects/finetuning_recipe/README.md`.",
      "",
      "| folder | what | files |",
      "| --- | --- | --- |",
  ]
  for folder in sorted(os.listdir(root)):
    if not os.path.isdir(os.path.join(root, folder)):
      continue
    names = sorted(f for f in os.listdir(os.path.join(root, folder))
                   if f.endswith(".gin"))
    lines.append(f"| `{folder}/` | {_CONFIG_FOLDERS.get(folder, '')} | "
                 f"{', '.join(f'`{n}`' for n in names)} |")
  lines += ["", "The names before the tree, still accepted (with a "
            "warning naming the file read):", "",
            "| old name | file now |", "| --- | --- |"]
  for old, new in RENAMED_CONFIGS.items():
    folder = os.path.basename(os.path.dirname(find_config(new) or ""))
    lines.append(f"| `{old}` | `{folder}/{new}` |")
  return lines + [""]


def configurables_markdown() -> str:
  """Every gin configurable of the package, with its parameters, as markdown.

  Nothing else lists what a gin file can set; the listing comes from gin's
  registry, so it holds what the modules imported so far register
  (`python -m mixvocab_tf.train --list_configurables` imports the tasks and
  the jobs, as for training). docs/CONFIG.md is its output.

  Returns:
    A markdown page: the shipped gin files by folder and their old names,
    then one section per configurable (its gin name, the first paragraph of
    its docstring, a table of its parameters and defaults).
  """
  # pylint: disable=protected-access
  configurables = {}
  for _, configurable in gin.config._REGISTRY.items():
    if _is_package_configurable(configurable):
      name = (f"{configurable.module}.{configurable.name}"
              if configurable.module else configurable.name)
      configurables[name] = configurable
  lines = [
      "# Gin configuration",
      "",
      f"Generated by `{CONFIG_DOC_COMMAND}`; do not edit by hand "
      "(`tests/test_config_doc.py` checks that it is current).",
      "",
  ] + _config_tree_markdown() + [
      "## Configurables",
      "",
      "What a gin file or `--gin_bindings` can set: each configurable of the "
      "package, with its parameters and their defaults. A binding names the "
      "configurable by its last part (`Trainer.train_steps = 100`) or in full "
      "when two share it. \"required\" parameters have no default: a gin file "
      "must bind them.",
      "",
  ]
  for name in sorted(configurables, key=str.lower):
    configurable = configurables[name]
    lines += [f"### `{name}`", ""]
    summary = _summary(configurable.wrapped)
    if summary:
      lines += [summary, ""]
    parameters = _parameters(configurable.wrapped)
    allowed = configurable.allowlist
    denied = configurable.denylist or ()
    rows = [(p, d) for p, d in parameters.items()
            if p not in denied and (not allowed or p in allowed)]
    if rows:
      lines += ["| Parameter | Default |", "| --- | --- |"]
      lines += [f"| `{p}` | {_default_text(d)} |" for p, d in rows]
    else:
      lines.append("No parameters.")
    lines.append("")
  return "\n".join(lines)
