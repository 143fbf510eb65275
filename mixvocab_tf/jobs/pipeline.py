"""Chains the method's steps into one job: vocabulary -> stage I -> stage II ->
fine-tuning -> export -> report (Zhao et al., EACL 2021, Sections 3-4).

A gin file (e.g. `quickstart.gin`) lists the steps; `python -m
mixvocab_tf.train --gin_file=quickstart.gin --model_dir=DIR` runs them in order.
Each training step runs the ordinary trainer in a child process on its own gin
files, with its model_dir under DIR, so each stage is exactly what a user
would run by hand, shows its own progress line with ETA, and resumes from its
own checkpoints. A finished step leaves a `DONE` marker and is skipped when the
job is run again; an interrupted one resumes where its checkpoints left off.
The "results" step is the exception: it summarises every finished run in DIR,
which other jobs sharing DIR may have added to, so it runs every time.

In the bindings of a step, `{output_dir}` stands for DIR.

To use idle cores, a second process can run a part of the same job in the
same DIR: `--gin_bindings="step_selection.only = ['ft_sst2_*']"` runs only the
steps whose names match one of the patterns (fnmatch). Two processes must not
be given the same step: the second would find its directory locked and stop.
"""

import fnmatch
import json
import os
import subprocess
import sys
import time

from absl import logging
import gin

from mixvocab_tf.jobs import heldout_steps
from mixvocab_tf.jobs import own_data
from mixvocab_tf.jobs import package_student
from mixvocab_tf.jobs import quickstart
from mixvocab_tf.jobs import replication
from mixvocab_tf.jobs import scaling

DONE = "DONE"
#: Steps run in this process: f(step_dir, output_dir, bindings).
_STEP_FUNCTIONS = {"export": quickstart.export_step,
                   "report": quickstart.report_step,
                   **heldout_steps.step_functions(),
                   **own_data.step_functions(),
                   **package_student.step_functions(),
                   **scaling.step_functions()}
STEP_KINDS = ("vocab", "train", "results") + tuple(_STEP_FUNCTIONS)
#: Summaries of the whole directory: run every time, never marked done.
_RERUN_KINDS = ("results", "scaling_results")


class PipelineError(RuntimeError):
  """A step of the pipeline failed; the message names it and its log."""


@gin.configurable(module="mixvocab_tf")
def pipeline(steps=None, vocab_size=5000):
  """Gin-configured list of steps (None: no pipeline configured).

  Args:
    steps: list of (name, kind, gin_files, bindings) with kind one of
      `STEP_KINDS`; for "train" steps, gin_files and bindings are the trainer's
      `--gin_file` and `--gin_bindings`.
    vocab_size: target size of the student vocabulary ("vocab" step).

  Returns:
    (steps, vocab_size).
  """
  return steps, vocab_size


@gin.configurable(module="mixvocab_tf")
def step_selection(only=None):
  """Names (fnmatch patterns) of the steps to run; None runs them all."""
  if isinstance(only, str):
    only = [only]
  return None if only is None else list(only)


def _selected(name, patterns):
  return patterns is None or any(fnmatch.fnmatchcase(name, p)
                                 for p in patterns)


def configured_steps():
  steps, _ = pipeline()
  return steps


def _format(value, output_dir):
  # Absolute, so that the paths a run records in its operative_config.gin
  # (vocabularies, init checkpoints) hold from any working directory.
  return value.replace("{output_dir}", os.path.abspath(output_dir))


def _validate(steps):
  names = set()
  for step in steps:
    if len(step) != 4:
      raise ValueError(f"A pipeline step is (name, kind, gin_files, bindings); "
                       f"received {step!r}.")
    name, kind, _, _ = step
    if kind not in STEP_KINDS:
      raise ValueError(f"Step {name!r} has kind {kind!r}; expected one of "
                       f"{STEP_KINDS}.")
    if name in names:
      raise ValueError(f"Step name {name!r} appears twice.")
    names.add(name)


def _run_vocab(step_dir, output_dir, vocab_size):
  path, summary = quickstart.learn_student_vocabulary(output_dir, vocab_size)
  with open(os.path.join(step_dir, "summary.json"), "w", encoding="utf-8") as f:
    json.dump(dict(summary, path=path), f, indent=2)


def _run_train(name, step_dir, gin_files, bindings, output_dir):
  command = [sys.executable, "-m", "mixvocab_tf.train",
             f"--model_dir={step_dir}"]
  command += [f"--gin_file={_format(f, output_dir)}" for f in gin_files]
  command += [f"--gin_bindings={_format(b, output_dir)}" for b in bindings]
  logging.info("Running: %s", " ".join(command))
  # The child's output goes to the console (its progress line and ETA) and to
  # a log file next to its checkpoints.
  log_path = os.path.join(step_dir, "log.txt")
  with open(log_path, "a", encoding="utf-8") as log:
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    for line in process.stdout:
      log.write(line)
      log.flush()
      if "step " in line or "rror" in line or "ETA" in line:
        sys.stderr.write(f"[{name}] {line}")
    code = process.wait()
  if code != 0:
    raise PipelineError(f"Step {name!r} failed (exit status {code}); see "
                        f"{log_path}. Rerunning the job resumes it.")


def run(output_dir):
  """Runs the configured steps in order, skipping those already done."""
  steps, vocab_size = pipeline()
  if not steps:
    raise ValueError("No pipeline steps configured (pipeline.steps).")
  _validate(steps)
  patterns = step_selection()
  if patterns is not None and not any(_selected(s[0], patterns)
                                      for s in steps):
    raise ValueError(f"step_selection.only = {patterns} matches none of the "
                     f"{len(steps)} steps (first: {steps[0][0]!r}).")
  os.makedirs(output_dir, exist_ok=True)
  started = time.time()
  for index, (name, kind, gin_files, bindings) in enumerate(steps, 1):
    step_dir = os.path.join(output_dir, name)
    if not _selected(name, patterns):
      continue
    if (kind not in _RERUN_KINDS and
        os.path.exists(os.path.join(step_dir, DONE))):
      logging.info("[%d/%d] %s: done already, skipped.", index, len(steps),
                   name)
      continue
    os.makedirs(step_dir, exist_ok=True)
    logging.info("[%d/%d] %s (%s) - %.0f s into the job", index, len(steps),
                 name, kind, time.time() - started)
    step_start = time.time()
    if kind == "vocab":
      _run_vocab(step_dir, output_dir, vocab_size)
    elif kind == "train":
      _run_train(name, step_dir, gin_files, bindings, output_dir)
    elif kind == "results":
      replication.results_step(step_dir, output_dir)
    else:
      _STEP_FUNCTIONS[kind](step_dir, output_dir,
                            [_format(b, output_dir) for b in bindings])
    with open(os.path.join(step_dir, DONE), "w", encoding="utf-8") as f:
      f.write(f"{time.time() - step_start:.1f} seconds\n")
  logging.info("Pipeline finished in %.0f s; outputs in %s.",
               time.time() - started, output_dir)
