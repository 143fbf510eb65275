r"""Held-out masked-word accuracy of every kept checkpoint of a student run.

The scaling study's low-noise measure (`projects/scaling/scaling.py`): for
each checkpoint of a stage II or NoKD run, the share of masked student-
vocabulary tokens of held-out text predicted exactly, and their mean
cross-entropy, against the tokens the run has trained on. Run in its own
process by the pipeline (the run's gin configuration is parsed here):

  python -m mixvocab_tf.jobs.mlm_curve --run_dir=runs/scaling/nokd_b1 \
      --input_files=runs/scaling/split/heldout.txt --max_batches=50 \
      --output=runs/scaling/nokd_b1/mlm_curve.json

Every point reads the same held-out batches (the input pipeline is
deterministic for its fixed seed), so points differ only by their weights.
Each point carries the unigram floor of those tokens (`text.unigram`, token
frequencies of the run's training text): the loss and accuracy a model gets
from word frequencies alone.
"""

import json
import os
import re

from absl import app
from absl import flags
import gin
import tensorflow as tf

import mixvocab_tf.tasks  # Registers the built-in tasks.  # pylint: disable=unused-import
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import run_files
from mixvocab_tf.tasks.pretraining import mlm_eval

FLAGS = flags.FLAGS


def define_flags():
  """The process's flags, defined under `__main__` only (the package's
  commands define flags of the same names)."""
  flags.DEFINE_string("run_dir", None, "A stage II or NoKD run.")
  flags.DEFINE_list("input_files", None, "Held-out text.")
  flags.DEFINE_integer("max_batches", 50, "Held-out batches per checkpoint.")
  flags.DEFINE_string("output", None, "The curve's JSON file.")
  flags.mark_flags_as_required(["run_dir", "input_files", "output"])


def checkpoint_steps(run_dir):
  """(step, prefix) of every checkpoint the run keeps, by step."""
  state = tf.train.get_checkpoint_state(run_dir)
  if state is None:
    raise FileNotFoundError(f"No checkpoint in {run_dir}.")
  found = []
  for path in state.all_model_checkpoint_paths:
    match = re.search(r"ckpt-(\d+)$", path)
    if match:
      # The run's own checkpoints, whatever form the state file gives
      # (get_checkpoint_state already prefixes a relative run_dir).
      prefix = os.path.join(run_dir, os.path.basename(path))
      found.append((int(match.group(1)), prefix))
  return sorted(found)


def curve(run_dir, input_files, max_batches):
  """The run's held-out curve and its unigram floor.

  Returns:
    {'points': [{'step', 'tokens', 'accuracy', 'loss', 'masked_tokens',
    'unigram_accuracy', 'unigram_loss'}], 'floor': {'loss', 'accuracy'}, ...}.
  """
  task = gin_utils.parse_run_config(run_dir)()
  tokens_per_step = (gin.query_parameter("MlmInputs.global_batch_size") *
                     gin.query_parameter("MlmInputs.seq_length"))
  model = task.build_model()
  floors = {"student": mlm_eval.unigram_floors(task)["student"]}
  points = []
  for step, prefix in checkpoint_steps(run_dir):
    evaluation.restore_model(task, model, prefix)
    results = mlm_eval.masked_word_accuracy(
        task, model, max_batches, mode="student", input_files=input_files,
        floors=floors)
    points.append({
        "step": step, "tokens": step * tokens_per_step,
        "accuracy": float(results["student_mlm/accuracy"]),
        "loss": float(results["student_mlm/loss"]),
        "masked_tokens": int(results["student_mlm/masked_tokens"]),
        "unigram_accuracy": float(results["student_mlm/unigram_accuracy"]),
        "unigram_loss": float(results["student_mlm/unigram_loss"]),
    })
    print(json.dumps(points[-1]), flush=True)
  floor = ({"loss": points[-1]["unigram_loss"],
            "accuracy": points[-1]["unigram_accuracy"]} if points else None)
  return {"run_dir": run_dir, "input_files": list(input_files),
          "max_batches": max_batches, "floor": floor, "points": points}


def main(argv):
  del argv
  result = curve(FLAGS.run_dir, FLAGS.input_files, FLAGS.max_batches)
  # Through tf.io.gfile: the run (and the curve beside it) may be on gs://.
  run_files.write_json(FLAGS.output, result, indent=1)


if __name__ == "__main__":
  define_flags()
  app.run(main)
