"""Chains the method's steps into one job: vocabulary -> stage I -> stage II ->
fine-tuning -> export -> report (Zhao et al., EACL 2021, Sections 3-4).

A gin file (e.g. `quickstart.gin`) lists the steps; `python -m
mixvocab_tf.train --gin_file=quickstart.gin --model_dir=DIR` runs them in order.
Each training step runs the ordinary trainer in a child process on its own gin
files, with its model_dir under DIR, so each stage is exactly what a user
would run by hand, shows its own progress line with ETA, and resumes from its
own checkpoints. A finished step leaves a `DONE` marker and is skipped when the
job is run again; an interrupted one resumes where its checkpoints left off.
A step kind registered with `rerun=True` (a summary of every finished run in
DIR, which other jobs sharing DIR may have added to) is the exception: it runs
every time. And a finished in-process step (an export, a report: not a
training or vocabulary step) runs again when a step it reads ran in this
invocation, e.g. a report after a larger student that a raised time budget
let run, or an export after its student's directory was removed and the
student trained again. It runs from an empty directory, so it never describes
or keeps the outputs of an earlier run.

Each step records the settings it started with (`step.json`: its kind, gin
files and bindings, `steps.Step.recipe`). The job run again in DIR with other
settings for a step that is done or started (another budget, seed, student
size, dataset path) is refused before anything runs, naming the steps and
what differs: the job would skip or resume them, and its outputs would not be
what the command asks for. So is a rerun after files outside the job that a
step read have changed (`steps.Step.inputs`: the own-data job's splits, a
label corrected in train), when both runs recorded them.

Steps are `steps.Step` values (their config as values, what they read and
write, an optional condition); a gin file may list them as (name, kind,
gin_files, bindings) tuples, read into steps once (`steps.from_specs`). The
job is checked before its first step runs: known kinds, unique names, and
every step reading only steps before it.

Studies outside the library (`projects/<name>/`) add their own in-process
step kinds with `register_step_kind(name, fn)` when their module is imported,
e.g. by an `import projects.<name>.<module>` line in their gin file; kinds are
checked when the job runs, so the study's kinds are known by then.

In the bindings of a step, `{output_dir}` stands for DIR.

DIR may be on any file system TensorFlow reads (`gs://`, or `ram://` in
tests): step directories, `DONE` markers, logs and summaries go through
`tf.io.gfile`. A training step's child process writes its own model_dir, so
DIR must then be one that a new process reaches (a bucket, not `ram://`).

A trainer keeps about 1.7 of 2 cores busy and a vocabulary or held-out step
one: a job lists in `pipeline.run_beside` the steps that run beside the steps
after them (the main job fine-tunes its teacher beside the vocabulary step,
and scores held-out text beside the distillation). Only one trainer and one
in-process step run at a time, and a step waits for those it reads (`run`).

To use idle cores otherwise, a second process can run a part of the same job
in the same DIR: `--gin_bindings="step_selection.only = ['ft_sst2_*']"` runs
only the steps whose names match one of the patterns (fnmatch). Two processes
must not be given the same step: the second would find its directory locked
and stop.
"""

from concurrent import futures
import contextlib
import fnmatch
import functools
import os
import re
import signal
import subprocess
import sys
import threading
import time

from absl import logging
import gin
import tensorflow as tf

from mixvocab_tf import quiet
from mixvocab_tf.core import run_files
from mixvocab_tf.jobs import export_steps
from mixvocab_tf.jobs import heldout_steps
from mixvocab_tf.jobs import own_data
from mixvocab_tf.jobs import package_student
from mixvocab_tf.jobs import quickstart
from mixvocab_tf.jobs import step_times
from mixvocab_tf.jobs import steps as steps_lib

DONE = "DONE"
#: A step's settings as it started (`steps.Step.recipe`), in its directory.
STEP_JSON = "step.json"
#: A step's log (its child's output) is written out this often at most when
#: DIR is not local: each flush of an object (`gs://`) uploads all of it.
_REMOTE_LOG_FLUSH_SECONDS = 30
#: Kinds the runner handles itself.
_BUILTIN_KINDS = ("vocab", "train")
#: Steps run in this process: f(step_dir, output_dir, options), options being
#: the step's config with its job paths made absolute (`Step.options`).
_STEP_FUNCTIONS = {**export_steps.step_functions(),
                   "report": quickstart.report_step,
                   **heldout_steps.step_functions(),
                   **own_data.step_functions(),
                   **package_student.step_functions()}
#: Summaries of the whole directory: run every time, never marked done. The
#: main job's report is one: it finds every run from its files, so a second
#: job in the same directory (`quickstart_nokd.gin` after `quickstart.gin`)
#: reports its runs too.
_RERUN_KINDS = {"report"}


def register_step_kind(name, fn, rerun=False):
  """Adds an in-process step kind: `fn(step_dir, output_dir, options)`.

  For studies outside the library, which call it when their module is
  imported. Registering the same function again under a name (also as a
  reloaded module defines it anew) replaces it.

  Args:
    name: the kind, as pipeline steps give it.
    fn: called with the step's directory, the job's directory and the step's
      options (`Step.options`: its config, job paths made absolute).
    rerun: run the step every time the job runs, never marking it done (a
      summary of every finished run in the directory).

  Raises:
    ValueError: `name` is a built-in kind or already names another function.
  """
  known = _STEP_FUNCTIONS.get(name, fn)
  if name in _BUILTIN_KINDS or _qualified_name(known) != _qualified_name(fn):
    raise ValueError(f"Step kind {name!r} is registered already, to "
                     f"{_qualified_name(known)}.")
  _STEP_FUNCTIONS[name] = fn
  if rerun:
    _RERUN_KINDS.add(name)
  else:
    _RERUN_KINDS.discard(name)


def _qualified_name(fn):
  return (f"{getattr(fn, '__module__', '?')}."
          f"{getattr(fn, '__qualname__', repr(fn))}")


def step_kinds():
  """Every step kind known now: the built-in ones, then the registered ones."""
  return _BUILTIN_KINDS + tuple(_STEP_FUNCTIONS)


class PipelineError(RuntimeError):
  """A step of the pipeline failed; the message names it and its log."""


@gin.configurable(module="mixvocab_tf")
def pipeline(steps=None, vocab_size=5000, run_beside=()):
  """Gin-configured list of steps (None: no pipeline configured).

  Args:
    steps: list of `steps.Step`s, or of (name, kind, gin_files, bindings)
      tuples with kind one of `step_kinds()`; for "train" steps, gin_files
      and bindings are the trainer's `--gin_file` and `--gin_bindings`.
    vocab_size: target size of the student vocabulary ("vocab" step).
    run_beside: names of steps that run beside the steps after them
      (`run`'s docstring says until when), so that a trainer and a
      one-thread step (the vocabulary, held-out scores) share the cores. A
      later step waits for one only if it reads it as `Step.reads` says
      (its bindings name the step's directory), so name only steps whose
      readers do.

  Returns:
    (steps, vocab_size, run_beside).
  """
  return steps, vocab_size, tuple(run_beside)


@gin.configurable(module="mixvocab_tf")
def step_selection(only=None):
  """Names (fnmatch patterns) of the steps to run; None runs them all."""
  if isinstance(only, str):
    only = [only]
  return None if only is None else list(only)


def _selected(name, patterns):
  return patterns is None or any(fnmatch.fnmatchcase(name, p)
                                 for p in patterns)


def configured_job():
  """(the configured job as `steps.Step`s, [] without one; the vocabulary
  size; the names of the steps run beside others), from one call of
  `pipeline()`: a job's step list may be a gin reference that reads the
  user's whole dataset (`own_data_steps`), so it is evaluated once."""
  steps, vocab_size, run_beside = pipeline()
  return steps_lib.from_specs(steps or []), vocab_size, run_beside


def _run_vocab(step_dir, output_dir, vocab_size):
  path, summary = quickstart.learn_student_vocabulary(output_dir, vocab_size)
  run_files.write_json(os.path.join(step_dir, "summary.json"),
                       dict(summary, path=path), indent=2)


#: An absl warning, error or fatal line: "W1126 01:20:17.249 123 file.py:5] ".
_ABSL_WARNING = re.compile(r"[WEF]\d{4} \d\d:\d\d:\d\d")


def _shown(line):
  """Whether a step's output line goes to the console (all go to its log).

  Its progress (step, ETA), its errors and the package's warnings: what the
  user acts on, without the rest of each step's INFO lines.
  """
  return ("step " in line or "ETA" in line or "rror" in line or
          bool(_ABSL_WARNING.match(line)))


#: The trainer processes of the running steps (two when a trainer step runs
#: beside another step), for the SIGTERM handler to reach them all.
_children = set()
_children_lock = threading.Lock()
#: CPU seconds of every trainer process waited for so far: an in-process
#: step's record leaves out those that ended while it ran beside them.
_trainer_cpu = [0.0]
_reap_lock = threading.Lock()


def _trainer_cpu_so_far():
  with _reap_lock:
    return _trainer_cpu[0]


def _run_train(step, step_dir, output_dir):
  """Runs a trainer step's child process; returns its CPU seconds."""
  name = step.name
  command = [sys.executable, "-m", "mixvocab_tf.train",
             f"--model_dir={step_dir}"]
  command += [f"--gin_file={steps_lib.resolve(f, output_dir)}"
              for f in step.gin_files]
  command += [f"--gin_bindings={b}" for b in step.bindings(output_dir)]
  # The job's --tf_verbose goes on to its steps; without it, each step's
  # TensorFlow would print its C++ start-up lines (the child reads the level
  # when TensorFlow loads, so it is set in the environment it starts with).
  verbose = quiet.verbose_requested()
  if verbose:
    command.append(quiet.VERBOSE_FLAG)
  logging.info("Running: %s", " ".join(command))
  # The child's output goes to a log file next to its checkpoints, and its
  # progress lines, warnings and errors to the console.
  log_path = os.path.join(step_dir, "log.txt")
  # A local log is written line by line, to be followed as the step runs.
  every = 0 if run_files.is_local(log_path) else _REMOTE_LOG_FLUSH_SECONDS
  with tf.io.gfile.GFile(log_path, "a") as log:
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env=quiet.child_env(verbose))
    with _children_lock:
      _children.add(process)
    try:
      flushed = time.time()
      for line in process.stdout:
        log.write(line)
        if time.time() - flushed >= every:
          log.flush()
          flushed = time.time()
        if verbose or _shown(line):
          sys.stderr.write(f"[{name}] {line}")
      # Its output has ended, so the child is exiting: the children's CPU
      # time across its wait is its own (a step beside it waits for no
      # child of its own meanwhile: no two trainers run at once).
      with _reap_lock:
        before = step_times.children_cpu()
        code = process.wait()
        cpu_seconds = step_times.children_cpu() - before
        _trainer_cpu[0] += cpu_seconds
    finally:
      with _children_lock:
        _children.discard(process)
  if code == INTERRUPTED_EXIT_STATUS:
    raise PipelineError(f"Step {name!r} was stopped by a signal and saved its "
                        f"checkpoint (exit status {code}); it is not marked "
                        "done. Rerunning the job resumes it.")
  if code != 0:
    raise PipelineError(f"Step {name!r} failed (exit status {code}); see "
                        f"{log_path}. Rerunning the job resumes it.")
  return cpu_seconds


def _steps_with_other_settings(steps, output_dir, patterns):
  """Lines naming each step that this run would skip as done, or resume,
  although it started with other settings (its `STEP_JSON`) than the job now
  gives it, and what differs. A step that will start from an empty directory
  (a finished in-process step after a step it reads) is not one; a step
  recorded before the pipeline kept its settings is not checked."""
  lines = []
  may_run = set()  # Steps this run may start, or start again.
  for step in steps:
    if not _selected(step.name, patterns) or step.kind in _RERUN_KINDS:
      continue
    step_dir = os.path.join(output_dir, step.name)
    done = tf.io.gfile.exists(os.path.join(step_dir, DONE))
    if not done or (step.kind not in _BUILTIN_KINDS and
                    any(r in may_run for r in step.reads)):
      may_run.add(step.name)
      if done:
        continue
    recorded = run_files.read_json_if_any(os.path.join(step_dir, STEP_JSON))
    if recorded is None:
      continue
    differences = steps_lib.recipe_differences(recorded, step.recipe())
    if differences:
      lines.append(f"- {step.name} ({'done' if done else 'started'}): " +
                   "; ".join(differences))
  return lines


#: The exit status of a trainer step stopped by SIGTERM or Ctrl-C before its
#: last step, after saving (`cli/train.py`).
INTERRUPTED_EXIT_STATUS = 128 + signal.SIGTERM


@contextlib.contextmanager
def _sigterm_forwarded():
  """A SIGTERM to the job (a scheduler's preemption notice, `kill`) is passed
  to its running trainer steps, which save a checkpoint and exit non-zero:
  they are not marked done and a rerun resumes them. Without this the job
  would die at once and leave its steps running with no one to wait for
  them. While no trainer runs, a SIGTERM ends the job as it would without
  the handler. (Ctrl-C reaches every process of the terminal's group by
  itself.)"""
  if threading.current_thread() is not threading.main_thread():
    yield  # Signal handlers belong to the main thread.
    return

  def forward(signum, frame):
    with _children_lock:
      running = list(_children)
    for process in running:
      process.send_signal(signum)
    if not running:
      handler = previous if previous is not None else signal.SIG_DFL
      if callable(handler):
        handler(signum, frame)
      elif handler == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

  previous = signal.signal(signal.SIGTERM, forward)
  try:
    yield
  finally:
    signal.signal(signal.SIGTERM, previous)


def _stop_running_trainers():
  with _children_lock:
    running = list(_children)
  for process in running:
    process.send_signal(signal.SIGTERM)


def _must_wait(step, running):
  """Whether `step` must wait for the step `running` beside it: it reads
  it; it is a summary of the directory or has a condition (both read what
  the steps before wrote); or both are trainers, or both run in this
  process (one of each kind at a time keeps each step's CPU time its own)."""
  return (running.name in step.reads or step.kind in _RERUN_KINDS or
          step.when is not None or
          (step.kind == "train") == (running.kind == "train"))


def run(output_dir, job=None):
  """Runs the configured steps in order, skipping those already done.

  A step named in `pipeline.run_beside` starts in its turn and the job goes
  on to the next steps while it runs, until a step must wait for it
  (`_must_wait`: one that reads it, a summary or a conditional step, or
  another step of its kind: at most one trainer and one step in this
  process run at a time); the job ends when it is done. A step that fails
  beside others fails the job when that wait comes; a failed or interrupted
  step stops the trainer running beside it, which saves its checkpoint.

  Args:
    output_dir: the job's directory.
    job: `configured_job()`, when the caller has it already.
  """
  steps, vocab_size, run_beside = job or configured_job()
  if not steps:
    raise ValueError("No pipeline steps configured (pipeline.steps).")
  steps_lib.check(steps, step_kinds())
  unknown = sorted(set(run_beside) - {s.name for s in steps})
  if unknown:
    raise ValueError(f"pipeline.run_beside names {unknown}, which are not "
                     "steps of the job.")
  patterns = step_selection()
  if patterns is not None and not any(_selected(s.name, patterns)
                                      for s in steps):
    raise ValueError(f"step_selection.only = {patterns} matches none of the "
                     f"{len(steps)} steps (first: {steps[0].name!r}).")
  changed = _steps_with_other_settings(steps, output_dir, patterns)
  if changed:
    raise PipelineError(
        f"{output_dir} holds steps that ran with other settings than this "
        "command gives them (a job derives some, such as epoch budgets, "
        "from its data); run as it is, the job would skip or resume them "
        "and its outputs would not be what the command asks for:\n" +
        "\n".join(changed) + "\nGive a new --model_dir, or remove those "
        "steps' directories to run them again with these settings. Nothing "
        "has run.")
  tf.io.gfile.makedirs(output_dir)
  started = time.time()
  ran = set()  # The steps run in this invocation.
  # name -> (step, future): the steps running beside the job's turn.
  beside = {}

  def wait_for(names):
    for name in names:
      beside.pop(name)[1].result()  # Raises the step's error.

  with _sigterm_forwarded(), futures.ThreadPoolExecutor(
      max_workers=max(len(run_beside), 1),
      thread_name_prefix="beside") as executor:
    try:
      for index, step in enumerate(steps, 1):
        if not _selected(step.name, patterns):
          continue
        wait_for([name for name, running in beside.items()
                  if _must_wait(step, running[0])])
        step_dir = os.path.join(output_dir, step.name)
        if (step.kind not in _RERUN_KINDS and
            tf.io.gfile.exists(os.path.join(step_dir, DONE))):
          changed = [r for r in step.reads if r in ran]
          if step.kind in _BUILTIN_KINDS or not changed:
            logging.info("[%d/%d] %s: done already, skipped.", index,
                         len(steps), step.name)
            continue
          logging.info("[%d/%d] %s: done before, but %s ran since; running "
                       "it again, from an empty directory.", index,
                       len(steps), step.name, ", ".join(changed))
          # Its files came from the earlier inputs, and an in-process step
          # resumes from the files it finds (an export keeps a SavedModel
          # it finds): none may outlive those inputs.
          tf.io.gfile.rmtree(step_dir)
        if step.when is not None and not step.when.test(output_dir):
          logging.info("[%d/%d] %s: skipped; it runs only when %s.", index,
                       len(steps), step.name, step.when.description)
          continue
        tf.io.gfile.makedirs(step_dir)
        if step.kind not in _RERUN_KINDS:
          run_files.write_json(os.path.join(step_dir, STEP_JSON),
                               step.recipe(), indent=1)
        logging.info("[%d/%d] %s (%s) - %.0f s into the job%s", index,
                     len(steps), step.name, step.kind, time.time() - started,
                     ", beside the next steps" if step.name in run_beside
                     else "")
        run_step = functools.partial(_run_step, index, len(steps), step,
                                     step_dir, output_dir, vocab_size, ran)
        if step.name in run_beside:
          beside[step.name] = (step, executor.submit(run_step))
        else:
          run_step()
      wait_for(list(beside))
    finally:
      if beside:  # A step failed or the job was interrupted.
        _stop_running_trainers()
        futures.wait([future for _, future in beside.values()])
  logging.info("Pipeline finished in %.0f s; outputs in %s. Time by step "
               "(%s/<step>/%s):\n%s", time.time() - started, output_dir,
               output_dir, step_times.FILE,
               step_times.log_summary(output_dir))


def _run_step(index, count, step, step_dir, output_dir, vocab_size, ran):
  """Runs one step and marks it done, with its time record."""
  clock = step_times.StepClock().start()
  trainer_cpu = _trainer_cpu_so_far()
  cpu_seconds = None
  if step.kind == "vocab":
    _run_vocab(step_dir, output_dir, vocab_size)
  elif step.kind == "train":
    cpu_seconds = _run_train(step, step_dir, output_dir)
  else:
    with quiet.tensorflow_info_hidden(quiet.verbose_requested()):
      _STEP_FUNCTIONS[step.kind](step_dir, output_dir,
                                 step.options(output_dir))
  missing = [f for f in step.writes
             if not tf.io.gfile.exists(os.path.join(step_dir, f))]
  if missing:
    raise PipelineError(
        f"Step {step.name!r} finished without writing {missing} in "
        f"{step_dir}; it is not marked done. See its log above.")
  ran.add(step.name)
  if cpu_seconds is None:
    # Without the trainers that ended beside this step.
    cpu_seconds = clock.cpu_seconds() - (_trainer_cpu_so_far() - trainer_cpu)
  record = clock.stop(step.kind, cpu_seconds)
  step_times.write(step_dir, record)
  run_files.write_text(os.path.join(step_dir, DONE),
                       f"{record['wall_seconds']:.1f} seconds\n")
  logging.info("[%d/%d] %s done in %.0f s wall, %.0f s CPU.", index, count,
               step.name, record["wall_seconds"], record["cpu_seconds"])
