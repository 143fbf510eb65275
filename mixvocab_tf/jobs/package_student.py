"""Packages a pretrained student run as a small directory that ships.

The own-data job (`own_data.py`) starts from a pretrained 6 x 96 student;
the package carries one (`assets.pretrained_student_dir`). This step turns a
stage II or NoKD run into that directory: the student's weights (encoder and
masked-LM head; no optimizer, no stage I state), `encoder_config.json`,
`student_vocab.txt` and `metrics.json` (the run, its recipe and its held-out
masked-word accuracy and loss beside the unigram floor of the same tokens,
from the run's `mlm_curve.json`). The result is a run directory like any
other: fine-tuning reads it with `INIT_CHECKPOINT`, `tools/evaluate.py` and
`mlm_eval` score it.

As a pipeline step: `('package', 'package_student', [], ["run = 'stage2'",
"destination = 'mixvocab_tf/assets/pretrained_student'"])`; the whole recipe
that made the shipped student is `gin_configs/jobs/pretrained_student.gin`.

The run and the destination may be on any file system TensorFlow reads
(`gs://`): every file goes through `tf.io.gfile`.
"""

import dataclasses
import os

import gin
import tensorflow as tf

from mixvocab_tf.core import checkpointing
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import half_checkpoints
from mixvocab_tf.core import run_files
from mixvocab_tf.jobs import heldout_steps
from mixvocab_tf.jobs import steps as steps_lib
from mixvocab_tf.text import heldout

METRICS_JSON = "metrics.json"
VOCAB_FILE = "student_vocab.txt"
#: The variables kept: the whole pretrainer (encoder and MLM head), under the
#: names the trainer gives them, and the task's metadata.
KEPT_ITEMS = ("model", "student_encoder")


def package_student(run_dir: str, destination: str,
                    weights_dtype: str = "float32") -> dict:
  """Writes the student of `run_dir` (its latest checkpoint) to `destination`.

  Args:
    run_dir: a stage II or NoKD run.
    destination: the directory to write (replaced if it exists).
    weights_dtype: 'float32', or 'float16' for half the bytes (the larger
      shipped students); readers get float32 back through
      `checkpointing.resolve_checkpoint`. With the run's held-out curve at
      hand, `metrics.json` then also records the held-out scores of the
      float16 weights on the same batches (`heldout_float16`).

  Returns:
    The `metrics.json` content.
  """
  if weights_dtype not in ("float32", "float16"):
    raise ValueError(f"weights_dtype must be 'float32' or 'float16'; "
                     f"received {weights_dtype!r}.")
  import mixvocab_tf.tasks  # Registers the tasks.  # pylint: disable=g-import-not-at-top,unused-import
  with gin_utils.isolated_config():
    task = gin_utils.parse_run_config(run_dir)()
    model = task.build_model()
    items = task.checkpoint_items(model)
    path = checkpointing.resolve_checkpoint(run_dir)
    status = tf.train.Checkpoint(
        **{k: items[k] for k in KEPT_ITEMS if k in items}).read(path)
    status.assert_existing_objects_matched().expect_partial()
    heldout_float16 = None
    if weights_dtype == "float16":
      for variable in model.variables:
        if variable.dtype.is_floating:
          variable.assign(tf.cast(tf.cast(variable, tf.float16),
                                  variable.dtype))
      heldout_float16 = _heldout_again(task, model, run_dir)
    vocab = task.vocab("student")
    metadata = checkpointing.make_metadata(
        task.task_name, {"student": task.vocab_fingerprints()["student"]})
    describe = task.describe()
    preset = getattr(task, "student_preset", None)
    inputs = {k: v for k, v in dataclasses.asdict(task.inputs).items()
              if k not in ("input_files", "tfds_name", "tfds_split",
                           "tfds_text_key")}
  if tf.io.gfile.isdir(destination):
    tf.io.gfile.rmtree(destination)
  tf.io.gfile.makedirs(destination)
  # Through a manager, so that the directory has a state file and reads
  # like a trainer run.
  saved = tf.train.CheckpointManager(
      tf.train.Checkpoint(metadata=metadata,
                          **{k: items[k] for k in KEPT_ITEMS if k in items}),
      destination, max_to_keep=1, checkpoint_name="ckpt").save(
          checkpoint_number=1)
  if weights_dtype == "float16":
    # Rewritten in place (the reader holds every tensor before the write).
    half_checkpoints.cast_checkpoint(saved, saved, tf.float16)
  run_files.copy(os.path.join(run_dir, checkpointing.ENCODER_CONFIG_FILE),
                 os.path.join(destination,
                              checkpointing.ENCODER_CONFIG_FILE))
  run_files.write_text(os.path.join(destination, VOCAB_FILE),
                       "\n".join(vocab) + "\n")
  step = int(path.rsplit("-", 1)[1])
  metrics = {"source_run": run_files.absolute(run_dir), "step": step,
             "task": task.task_name, "preset": preset, "inputs": inputs,
             "description": describe}
  split = os.path.join(os.path.dirname(run_files.absolute(run_dir)), "split",
                       heldout.SUMMARY_JSON)
  if tf.io.gfile.exists(split):
    # Where the held-out blocks come from, so that a test can cut them again.
    summary = run_files.read_json(split)
    metrics["split"] = {
        "corpus": [os.path.basename(p) for p in summary["input_files"]],
        "heldout_every": summary["heldout_every"],
        "block_lines": summary["block_lines"]}
  curve = os.path.join(run_dir, heldout_steps.MLM_CURVE_FILE)
  if tf.io.gfile.exists(curve):
    points = [p for p in run_files.read_json(curve)["points"]
              if p["step"] == step]
    if points:
      metrics["heldout"] = points[0]
      if weights_dtype == "float16":
        metrics["heldout_float16"] = heldout_float16
  metrics["weights_dtype"] = weights_dtype
  run_files.write_json(os.path.join(destination, METRICS_JSON), metrics,
                       indent=1)
  return metrics


def _heldout_again(task, model, run_dir: str):
  """Held-out scores of `model` on the batches of the run's curve (its
  `mlm_curve.json`), or None without one: the float16 weights' record."""
  path = os.path.join(run_dir, heldout_steps.MLM_CURVE_FILE)
  if not tf.io.gfile.exists(path):
    return None
  curve = run_files.read_json(path)
  from mixvocab_tf.tasks.pretraining import mlm_eval  # pylint: disable=g-import-not-at-top
  floors = {"student": mlm_eval.unigram_floors(task)["student"]}
  results = mlm_eval.masked_word_accuracy(
      task, model, curve["max_batches"], mode="student",
      input_files=curve["input_files"], floors=floors)
  return {"accuracy": float(results["student_mlm/accuracy"]),
          "loss": float(results["student_mlm/loss"]),
          "masked_tokens": int(results["student_mlm/masked_tokens"]),
          "unigram_loss": float(results["student_mlm/unigram_loss"])}


def package_step(step_dir, output_dir, options):
  """Pipeline step: `run` (a step name) -> `destination` (default: here)."""
  destination = options.get("destination") or os.path.join(
      step_dir, "pretrained_student")
  package_student(os.path.join(output_dir, options["run"]), destination,
                  options.get("weights_dtype") or "float32")


def step_functions():
  return {"package_student": package_step}


@gin.configurable(module="mixvocab_tf")
def pretrained_student_steps(corpus=None,
                             stage1_steps: int = 200,
                             student_steps: int = 36000,
                             curve_points: int = 10,
                             eval_batches: int = 50,
                             destination=None,
                             weights_dtype: str = "float32",
                             stage1_bindings=(),
                             student_bindings=()):
  """Steps that make a pretrained student and package it (`pretrained_student.gin`).

  Split `corpus` (None: the built-in one) into train and held-out blocks,
  stage I on the train part, stage II, the held-out curve of stage II
  beside the unigram floor, then `package_student` to `destination`
  (default: `<model_dir>/package/pretrained_student`).
  """
  train = {"MlmInputs.input_files": steps_lib.JobPath("split/train.txt")}
  every = max(1, student_steps // curve_points)
  stage1 = dict(train, **{"Trainer.train_steps": stage1_steps})
  stage1.update(steps_lib.parse_binding(b) for b in stage1_bindings)
  stage2 = dict(train, **{
      "STAGE1_DIR": steps_lib.JobPath("stage1"),
      "Trainer.train_steps": student_steps,
      "Trainer.checkpoint_every": every,
      "Trainer.keep_checkpoints": curve_points + 1,
      "Trainer.log_every": max(1, student_steps // 50)})
  stage2.update(steps_lib.parse_binding(b) for b in student_bindings)
  return [
      steps_lib.Step("split", "heldout_split", config={"corpus": corpus}),
      steps_lib.Step("stage1", "train", ("stage1_small.gin",), stage1,
                     reads=("split",)),
      steps_lib.Step("stage2", "train", ("stage2_small.gin",), stage2,
                     reads=("split", "stage1")),
      steps_lib.Step("heldout", "heldout_mlm",
                     config={"runs": ["stage2"], "batches": eval_batches},
                     reads=("split", "stage2")),
      steps_lib.Step("package", "package_student",
                     config={"run": "stage2", "destination": destination,
                             "weights_dtype": weights_dtype},
                     reads=("stage2", "heldout")),
  ]
