"""A job's step as a value: what it runs, its config, what it reads and writes.

A job (`pipeline.py`) is a list of `Step`s. A step keeps its configuration
as Python values (`config`), not as gin strings, until the one place that
makes them bindings (`Step.bindings`, for a trainer's child process) or
hands them to an in-process step (`Step.options`). Paths inside the job's
directory are `JobPath`s, made absolute when the step runs, so a job can move
and its runs still record paths that hold from any working directory.

Steps also say which earlier steps they read (`reads`): a job whose step
reads one that comes later, or that is not in the job, is refused before
anything runs; and which files they write in their directory (`writes`): a
step that finishes without one of them fails, naming the file, instead of
leaving the next step to fail on its absence. A step may carry a condition
(`when`): it runs only if the condition holds on the job's directory when
its turn comes (a larger student only while the smaller one trails its
teacher, say), and is skipped, with the condition's description, otherwise.

Gin files give steps as 4-tuples, `(name, kind, gin_files, bindings)`, with
bindings in the trainer's `--gin_bindings` form ("name = literal"); `from_spec`
reads them into steps once, here. In those strings `{output_dir}` stands for
the job's directory, and a step reads each earlier step whose directory
(`{output_dir}/<name>`) its bindings name.
"""

import ast
import dataclasses
import os
import re
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

import tensorflow as tf

from mixvocab_tf.core import run_files

OUTPUT_DIR = "{output_dir}"
#: Where a recipe (`Step.recipe`) writes the package's own directory, so that
#: a job's recorded settings hold when the package is installed elsewhere.
PACKAGE_DIR = "{mixvocab_tf}"
_PACKAGE_PATH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclasses.dataclass(frozen=True)
class JobPath:
  """A path under the job's directory (`relative` may be '' for the directory)."""
  relative: str = ""

  def resolve(self, output_dir: str) -> str:
    return self.under(run_files.absolute(output_dir))

  def under(self, base: str) -> str:
    """The path with `base` for the job's directory."""
    return f"{base}/{self.relative}" if self.relative else base

  @property
  def step(self) -> str:
    """The first component: the step whose directory the path is in, if any."""
    return self.relative.split("/", 1)[0]


@dataclasses.dataclass(frozen=True)
class GinCode:
  """A binding's value that is gin, not a Python literal (`@fn()`, `%MACRO`)."""
  text: str


@dataclasses.dataclass(frozen=True)
class Condition:
  """Runs a step only when `test(output_dir)` holds when its turn comes.

  `description` says what the step waits for, in the log when it is skipped
  ("the 6x96 student is more than 1.5 points below its teacher").
  """
  test: Callable[[str], bool]
  description: str


@dataclasses.dataclass(frozen=True)
class Step:
  """One step of a job.

  Attributes:
    name: its directory under the job's directory, and its name in the log.
    kind: 'train' (the trainer in a child process, on `gin_files` and
      `config`), 'vocab', or an in-process kind (`pipeline.step_kinds()`).
    gin_files: the trainer's `--gin_file`s ('train' steps).
    config: {binding name or option: value}; values are Python literals,
      `JobPath`s, `GinCode`s, or strings that may hold `{output_dir}`.
    reads: names of earlier steps whose outputs it reads.
    writes: files it leaves in its directory when it succeeds.
    when: run only when this `Condition` holds; None: always.
    inputs: {name: fingerprint} of files outside the job that its outputs
      derive from (a dataset's splits: `files_fingerprint`), recorded with
      its settings: a rerun after they changed is refused, like one with
      other settings, instead of skipping the step as done. A step
      recorded without them (an earlier version) is not checked.
  """
  name: str
  kind: str
  gin_files: Tuple[str, ...] = ()
  config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  reads: Tuple[str, ...] = ()
  writes: Tuple[str, ...] = ()
  when: Optional[Condition] = None
  inputs: Mapping[str, str] = dataclasses.field(default_factory=dict)

  def __post_init__(self):
    # Frozen: set through object.__setattr__, as dataclasses advise.
    object.__setattr__(self, "gin_files", tuple(self.gin_files))
    object.__setattr__(self, "config", dict(self.config))
    object.__setattr__(self, "reads", tuple(self.reads))
    object.__setattr__(self, "writes", tuple(self.writes))
    object.__setattr__(self, "inputs", dict(self.inputs))

  def options(self, output_dir: str) -> dict:
    """The config with its job paths made absolute (in-process steps)."""
    return {key: resolve(value, output_dir)
            for key, value in self.config.items()}

  def bindings(self, output_dir: str) -> list:
    """The config as the trainer's `--gin_bindings` ('train' steps)."""
    return [f"{key} = {gin_literal(resolve(value, output_dir))}"
            for key, value in self.config.items()]

  def recipe(self) -> dict:
    """What the step runs, as JSON: its kind, gin files and config (each
    value as its gin literal), with paths in the job's directory written
    `{output_dir}/...` and the package's own files `{mixvocab_tf}/...`, so it
    holds when the job's directory moves or the package is reinstalled. The
    pipeline records it in the step's directory and compares it on a rerun.
    """
    def text(value):
      literal = gin_literal(_with_placeholders(value))
      return literal.replace(_PACKAGE_PATH, PACKAGE_DIR)
    recipe = {"kind": self.kind,
              "gin_files": [text(f) for f in self.gin_files],
              "config": {key: text(value)
                         for key, value in self.config.items()}}
    if self.inputs:
      recipe["inputs"] = dict(self.inputs)
    return recipe

  def job_paths(self):
    """Every `JobPath` (or `{output_dir}/...` string) in the config."""
    found = []
    def visit(value):
      if isinstance(value, JobPath):
        found.append(value)
      elif isinstance(value, str):
        found.extend(JobPath(m) for m in _OUTPUT_DIR_PATH.findall(value))
      elif isinstance(value, (list, tuple)):
        for item in value:
          visit(item)
      elif isinstance(value, dict):
        for item in value.values():
          visit(item)
    for value in self.config.values():
      visit(value)
    return found

  def describe(self) -> str:
    """One line for `--dry_run`."""
    parts = [f"{self.name} ({self.kind})"]
    if self.gin_files:
      parts.append(" ".join(self.gin_files))
    if self.reads:
      parts.append("reads " + ", ".join(self.reads))
    if self.when:
      parts.append(f"when {self.when.description}")
    return "; ".join(parts)


def recorded_value(literal: str, output_dir: str):
  """A config value of a recorded `Step.recipe` as the step ran with it: the
  gin literal parsed, `{mixvocab_tf}` and `{output_dir}` (the job directory
  `output_dir`) put back."""
  return ast.literal_eval(
      literal.replace(PACKAGE_DIR, _PACKAGE_PATH).replace(
          OUTPUT_DIR, run_files.absolute(output_dir)))


_OUTPUT_DIR_PATH = re.compile(re.escape(OUTPUT_DIR) + r"/([^'\"\s,\]]+)")


def resolve(value, output_dir: str):
  """`value` with `JobPath`s and `{output_dir}` made absolute, recursively."""
  # Absolute, so that the paths a run records in its operative_config.gin
  # (vocabularies, init checkpoints) hold from any working directory.
  return _under(value, run_files.absolute(output_dir))


def _with_placeholders(value):
  """`value` with each `JobPath` written as `{output_dir}/...`, recursively."""
  return _under(value, OUTPUT_DIR)


def _under(value, base: str):
  """`value` with `base` for the job's directory in its `JobPath`s and
  `{output_dir}` strings, recursively."""
  if isinstance(value, JobPath):
    return value.under(base)
  if isinstance(value, str):
    return value.replace(OUTPUT_DIR, base)
  if isinstance(value, list):
    return [_under(v, base) for v in value]
  if isinstance(value, tuple):
    return tuple(_under(v, base) for v in value)
  if isinstance(value, dict):
    return {k: _under(v, base) for k, v in value.items()}
  return value


def recipe_differences(recorded: Mapping[str, Any],
                       current: Mapping[str, Any]) -> list:
  """Lines naming what differs between two `Step.recipe`s: the kind, the gin
  files, each binding or option set in one only or to another value, and
  each input file that changed (when both record inputs)."""
  lines = []
  if "inputs" in recorded and "inputs" in current:
    before, now = recorded["inputs"], current["inputs"]
    changed = [name for name in sorted(set(before) | set(now))
               if before.get(name) != now.get(name)]
    if changed:
      lines.append("files changed since it ran: " + ", ".join(
          f"{name} ({before.get(name, 'none')} -> {now.get(name, 'none')})"
          for name in changed))
  for key in ("kind", "gin_files"):
    if recorded.get(key) != current.get(key):
      lines.append(f"{key}: {recorded.get(key)} -> {current.get(key)}")
  before = recorded.get("config", {})
  now = current.get("config", {})
  for key in sorted(set(before) | set(now)):
    if before.get(key) != now.get(key):
      lines.append(f"{key}: {_short(before.get(key, '(not set)'))} -> "
                   f"{_short(now.get(key, '(not set)'))}")
  return lines


def files_fingerprint(paths: Mapping[str, str]) -> dict:
  """{name: the first 16 hex digits of `run_files.sha256_files`} for each
  {name: path}: of the file, or of a directory's files in name order, not
  its hidden files (a .DS_Store that a file browser rewrites, an editor's
  swap file)."""
  def files(path):
    if not tf.io.gfile.isdir(path):
      return [path]
    names = sorted(name.rstrip("/") for name in tf.io.gfile.listdir(path))
    return [os.path.join(path, name) for name in names
            if not name.startswith(".") and
            not tf.io.gfile.isdir(os.path.join(path, name))]
  return {name: run_files.sha256_files(files(path))[:16]
          for name, path in paths.items()}


def _short(text: str, limit: int = 120) -> str:
  return text if len(text) <= limit else text[:limit - 3] + "..."


def gin_literal(value) -> str:
  """A value as gin reads it in a binding."""
  if isinstance(value, GinCode):
    return value.text
  if isinstance(value, list):
    return "[" + ", ".join(gin_literal(v) for v in value) + "]"
  if isinstance(value, tuple):
    inner = ", ".join(gin_literal(v) for v in value)
    return f"({inner},)" if len(value) == 1 else f"({inner})"
  if isinstance(value, dict):
    return "{" + ", ".join(f"{gin_literal(k)}: {gin_literal(v)}"
                           for k, v in value.items()) + "}"
  if value is None or isinstance(value, (bool, int, float, str)):
    return repr(value)
  raise TypeError(f"A step's config value must be a Python literal, a JobPath "
                  f"or GinCode; received {value!r} ({type(value).__name__}).")


def parse_binding(binding: str) -> Tuple[str, Any]:
  """'name = value' -> (name, value): a Python literal, else `GinCode`."""
  if "=" not in binding:
    raise ValueError(f"A step's binding is 'name = value'; received "
                     f"{binding!r}.")
  name, text = (part.strip() for part in binding.split("=", 1))
  try:
    return name, ast.literal_eval(text)
  except (ValueError, SyntaxError):
    return name, GinCode(text)


def from_spec(spec, job_steps: Sequence[str] = ()) -> Step:
  """A `Step`, or a gin file's (name, kind, gin_files, bindings) tuple.

  A tuple step reads each step of `job_steps` (the names in its job) whose
  directory its bindings name (`{output_dir}/<name>`).
  """
  if isinstance(spec, Step):
    return spec
  if not isinstance(spec, (list, tuple)) or len(spec) != 4:
    raise ValueError(f"A pipeline step is a Step or (name, kind, gin_files, "
                     f"bindings); received {spec!r}.")
  name, kind, gin_files, bindings = spec
  if isinstance(bindings, str) or isinstance(gin_files, str):
    raise ValueError(f"Step {name!r}: gin_files and bindings are lists of "
                     f"strings; received {gin_files!r} and {bindings!r}.")
  step = Step(name, kind, tuple(gin_files),
              dict(parse_binding(b) for b in bindings))
  known = set(job_steps)
  reads = []
  for path in step.job_paths():
    if (path.step in known and path.step != name and
        path.step not in reads):
      reads.append(path.step)
  return dataclasses.replace(step, reads=tuple(reads))


def from_specs(specs) -> list:
  """`from_spec` of each, in a job of their names."""
  names = [s.name if isinstance(s, Step) else s[0] for s in specs
           if isinstance(s, Step) or (isinstance(s, (list, tuple)) and s)]
  return [from_spec(spec, names) for spec in specs]


def check(steps: Sequence[Step], kinds: Sequence[str]):
  """Refuses a job whose steps cannot run as listed (before anything runs).

  Raises:
    ValueError: an unknown kind, a name given twice, or a step that reads a
      step that is not before it.
  """
  names = []
  for step in steps:
    if step.kind not in kinds:
      raise ValueError(f"Step {step.name!r} has kind {step.kind!r}; expected "
                       f"one of {tuple(kinds)} (a study's own kinds are "
                       "registered when its gin file imports its module).")
    if step.name in names:
      raise ValueError(f"Step name {step.name!r} appears twice.")
    for read in step.reads:
      if read not in names:
        later = any(s.name == read for s in steps)
        raise ValueError(
            f"Step {step.name!r} reads step {read!r}, which "
            + ("comes after it" if later else "is not in the job")
            + f"; the steps are {[s.name for s in steps]}.")
    names.append(step.name)
