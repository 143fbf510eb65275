r"""Trains any task of the package: `python -m mixvocab_tf.train`.

Installed as the `mixvocab-train` console script; `mixvocab_tf/train.py`
is the `python -m` entry that runs this module.

The gin files pick the task (stage I, stage II, NoKD, dual training, ...) and
its sizes; see `mixvocab_tf/gin_configs/` for the shipped ones, whose headers
give the command and the expected result. Bare gin file names are looked up
there, so this works from any directory:

  python -m mixvocab_tf.train --gin_file=stage1_small.gin --model_dir=/tmp/s1
  python -m mixvocab_tf.train --gin_file=stage2_small.gin \
      --gin_bindings="STAGE1_DIR = '/tmp/s1'" \
      --model_dir=/tmp/s2
  python -m mixvocab_tf.train --gin_file=stage1_paper.gin --dry_run

What a gin file cannot know (the stage I run of stage2_small.gin, the dataset
of own_data.gin) it marks `NAME = %gin.REQUIRED` and lists in its header;
left unbound, the binary stops before anything runs and names the
--gin_bindings to add.

A run resumes from the latest checkpoint in --model_dir. Errors in the
configuration, missing files, vocabulary mismatches and a non-finite loss end
with a one-paragraph message and exit status 1 (--traceback shows the stack).
"""

import signal
import sys

# Keeps TensorFlow's C++ start-up lines off the console unless --tf_verbose
# (`mixvocab_tf/quiet.py`). TensorFlow reads the level when it loads, and
# `python -m` runs the package's __init__, which imports it, before this line:
# here it sets the level for the processes this one starts (the pipeline's
# steps); for this process it must run from the package's __init__.
from mixvocab_tf import quiet
quiet.quiet()

from absl import flags  # pylint: disable=g-import-not-at-top,wrong-import-position
from absl import logging
import gin
import tensorflow as tf

# Importing the tasks and the jobs registers their gin configurables and the
# tasks' names (`Trainer.task = "stage1"`), before any gin file is parsed.
import mixvocab_tf.tasks  # pylint: disable=unused-import
from mixvocab_tf.cli import console
from mixvocab_tf.jobs import pipeline
from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import distribute
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import op_threads
from mixvocab_tf.core import optimization  # pylint: disable=unused-import
from mixvocab_tf.core import trainer as trainer_lib

FLAGS = flags.FLAGS


def define_flags():
  """The trainer's flags (`run` defines them; importing this does not)."""
  flags.DEFINE_multi_string(
      "gin_file", [], "Gin files (paths, or names of shipped configs).")
  flags.DEFINE_multi_string(
      "gin_bindings", [], "Gin bindings, e.g. \"Trainer.train_steps = 100\".")
  flags.DEFINE_string("model_dir", None,
                      "Checkpoints, TensorBoard summaries and the operative "
                      "config go here; an existing run there is resumed.")
  flags.DEFINE_string("tpu", None,
                      "TPU address for --strategy=tpu (implies it).")
  flags.DEFINE_enum("strategy", "default", list(distribute.STRATEGIES),
                    "tf.distribute strategy.")
  flags.DEFINE_bool("dry_run", False,
                    "Parse and validate the config, build the model, print "
                    "the operative config and a parameter summary, and exit.")
  flags.DEFINE_bool("traceback", False,
                    "On an error, also print the Python traceback.")
  flags.DEFINE_bool("list_configurables", False,
                    "Print every gin configurable of the package with its "
                    "parameters and defaults (markdown, docs/CONFIG.md) and "
                    "exit.")

# Errors whose message says everything: printed without a traceback.
_CLEAR_ERRORS = (ValueError, pipeline.PipelineError, FileNotFoundError,
                 KeyError,
                 trainer_lib.NonFiniteLossError,
                 checkpointing.VocabularyMismatchError,
                 checkpointing.RunDirectoryBusyError, PermissionError,
                 tf.errors.OpError)


def _run():
  if FLAGS.list_configurables:
    # What a gin file can set, from the registry this binary fills.
    sys.stdout.write(gin_utils.configurables_markdown())
    return
  gin_utils.parse(FLAGS.gin_file, FLAGS.gin_bindings)
  job = pipeline.configured_job()
  steps = job[0]
  if steps:
    # A pipeline config (e.g. quickstart.gin) chains trainer runs and tools.
    if FLAGS.dry_run:
      beside = job[2]
      print("Pipeline steps:", *(
          s.describe() + ("; runs beside the next steps"
                          if s.name in beside else "") for s in steps),
            sep="\n  ")
      return
    if not FLAGS.model_dir:
      raise ValueError("--model_dir is required to run a pipeline.")
    pipeline.run(FLAGS.model_dir, job)
    return
  # TensorFlow fixes its thread pools at its first operation, which gin may
  # run while it builds the Trainer's arguments: set them first.
  try:
    concurrent_ops = gin.query_parameter("Trainer.concurrent_ops")
  except ValueError:  # Not bound.
    concurrent_ops = None
  if isinstance(concurrent_ops, int):
    op_threads.set_concurrent_ops(concurrent_ops)
  if FLAGS.dry_run:
    trainer = trainer_lib.Trainer(model_dir=FLAGS.model_dir or "(dry run)")
    print(trainer.dry_run())
    return
  if not FLAGS.model_dir:
    raise ValueError("--model_dir is required to train (or use --dry_run).")
  # A run started by hand keeps its vocabularies (and names them from
  # anywhere): relative vocabulary paths become copies in the run directory.
  for binding, copy in gin_utils.copy_vocabularies_into_run(
      FLAGS.model_dir).items():
    logging.info("%s: the vocabulary is copied to %s.", binding, copy)
  strategy_name = "tpu" if FLAGS.tpu and FLAGS.strategy == "default" else (
      FLAGS.strategy)
  strategy = distribute.build_strategy(strategy_name, tpu_address=FLAGS.tpu)
  trainer = trainer_lib.Trainer(model_dir=FLAGS.model_dir, strategy=strategy)
  _stop_on_signals(trainer)
  trainer.train()
  if trainer.interrupted_at is not None:
    # Not a finished run: a job that started this one must not count it
    # done (its pipeline writes DONE only after a zero exit status).
    logging.warning(
        "Stopped by a signal at step %d of %d; the checkpoint is saved. "
        "Rerun the same command to resume.", trainer.interrupted_at,
        trainer.train_steps)
    raise SystemExit(pipeline.INTERRUPTED_EXIT_STATUS)


def _stop_on_signals(trainer):
  """SIGTERM (preemption) or a first Ctrl-C: save at the next step boundary.

  A second Ctrl-C interrupts at once, as usual.
  """
  def stop(signum, unused_frame):
    logging.warning("Signal %d: saving a checkpoint after the current steps.",
                    signum)
    trainer.request_stop()
    if signum == signal.SIGINT:
      signal.signal(signal.SIGINT, signal.default_int_handler)

  signal.signal(signal.SIGTERM, stop)
  signal.signal(signal.SIGINT, stop)


def main(argv):
  """The absl main of `mixvocab-train` (flags: `define_flags`)."""
  console.run_tool(argv, _run, _CLEAR_ERRORS, traceback=FLAGS.traceback)


def run():
  """The `mixvocab-train` console script."""
  define_flags()
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
