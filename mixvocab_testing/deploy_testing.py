"""Exported models for the deployment tests, made by the own-data job.

`deploy_models()` runs the own-data job (`own_data.gin`) on the two example
datasets of the repository (`examples/intent_slot`, `examples/text_classification`,
600 SNIPS queries each) with the real default teacher and the shipped
pretrained 6x96 student, on budgets cut to a few hundred steps, so that the
files are what a user gets (both .tflite files of every export), and the
predictions are decisive enough that comparisons between runtimes are not
decided by near ties. Runs once per process (the tests of one pytest
session share it); about 6 minutes on 2 cores.

Returns, per kind ('intent_slot', 'text_classification'): 'builtin' (the
builtin-ops .tflite with metadata), 'tflite' (the raw-string .tflite),
'saved_model', 'job' (the job's directory), 'queries' (the validation texts)
and 'vocab' (the student vocabulary the model was trained with).

`tiny_pair_classifier()` exports a sentence-pair classifier of random
weights in seconds (the examples hold no pairs): what the runtimes must
agree on is the pair's packing, which the weights do not change.
"""

import os
import subprocess
import sys
import tempfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Budgets: the teacher and student steps of each job (batch 64).
TEACHER_STEPS = 150
STUDENT_STEPS = 400

_CACHE = {}


def _bindings(steps):
  return [f"Trainer.train_steps = {steps}",
          f"Trainer.evaluate_every = {steps}",
          f"Trainer.checkpoint_every = {steps}",
          "Trainer.early_stopping_patience = None"]


def _validation_texts(data_dir):
  goo = os.path.join(data_dir, "dev", "seq.in")
  if os.path.exists(goo):
    with open(goo, encoding="utf-8") as f:
      return [line.strip() for line in f if line.strip()]
  import csv  # pylint: disable=g-import-not-at-top
  for name in ("validation.csv", "dev.csv", "valid.csv"):
    path = os.path.join(data_dir, name)
    if os.path.exists(path):
      with open(path, encoding="utf-8", newline="") as f:
        return [row["text"] for row in csv.DictReader(f)]
  raise FileNotFoundError(f"No validation split in {data_dir}.")


def run_own_data(kind, job_dir):
  """Runs the own-data job on `examples/<kind>` into `job_dir`."""
  data_dir = os.path.join(_ROOT, "examples", kind)
  command = [
      sys.executable, "-m", "mixvocab_tf.train", "--gin_file=own_data.gin",
      f"--model_dir={job_dir}",
      f"--gin_bindings=DATA_DIR = {data_dir!r}",
      "--gin_bindings=own_data_steps.teacher_bindings = "
      f"{_bindings(TEACHER_STEPS)!r}",
      "--gin_bindings=own_data_steps.student_bindings = "
      f"{_bindings(STUDENT_STEPS)!r}"]
  result = subprocess.run(command, capture_output=True, text=True,
                          cwd=_ROOT, timeout=3600)
  if result.returncode:
    raise RuntimeError(f"The own-data job on {data_dir} failed:\n"
                       f"{result.stderr[-4000:]}")
  export = os.path.join(job_dir, "export")
  from mixvocab_tf import assets  # pylint: disable=g-import-not-at-top
  return {"builtin": os.path.join(export, "model_builtin.tflite"),
          "tflite": os.path.join(export, "model_dynamic.tflite"),
          "saved_model": os.path.join(export, "saved_model"),
          "job": job_dir, "queries": _validation_texts(data_dir),
          "vocab": os.path.join(assets.pretrained_student_dir(),
                                "student_vocab.txt")}


def deploy_models(directory=None):
  """The two exported models (see the module docstring), made once."""
  if "models" not in _CACHE:
    directory = directory or os.environ.get(
        "MIXVOCAB_DEPLOY_DIR") or tempfile.mkdtemp(prefix="mixvocab_deploy_")
    _CACHE["models"] = {
        kind: run_own_data(kind, os.path.join(directory, kind))
        for kind in ("intent_slot", "text_classification")}
  return _CACHE["models"]


def tiny_encoder(seed, seq_length):
  """A one-layer student encoder of width 16 over the shipped student
  vocabulary, random weights from `seed`."""
  # pylint: disable=g-import-not-at-top
  import tf_keras
  from mixvocab_tf import assets
  from mixvocab_tf.networks import student_encoder
  # pylint: enable=g-import-not-at-top
  tf_keras.utils.set_random_seed(seed)
  with open(assets.default_student_vocab(), encoding="utf-8") as f:
    vocab_size = len(f.read().splitlines())
  return student_encoder.build_student_encoder(
      None, vocab_size=vocab_size, num_layers=1, hidden_size=16,
      num_attention_heads=2, max_sequence_length=seq_length)


def spread(model):
  """Random kernels scaled from std 0.02 to 0.5 (transformer layers) and 2
  (pooler, heads): logits units apart that vary with the input, no near-ties
  for two runtimes to break differently."""
  for weight in model.weights:
    if weight.name.endswith("kernel:0"):
      scale = 25.0 if "/transformer/" in weight.name else 100.0
      weight.assign(scale * weight.numpy())


def tiny_pair_classifier(directory, seq_length=16, seed=3):
  """A sentence-pair classifier with MNLI's three labels (`tiny_encoder`,
  `spread`) exported to `directory`: {'saved_model', 'tflite' (raw strings,
  fp32), 'builtin' (builtin operators, fp32, with metadata)}. The word table
  stays float in both files."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf import export
  from mixvocab_tf.datasets import glue
  from mixvocab_tf.export import builtin_model
  from mixvocab_tf.export import tflite_conversion
  from mixvocab_tf.models import sentence_classifier
  from mixvocab_tf.tasks.finetuning.text_classification import export_module
  # pylint: enable=g-import-not-at-top
  model = sentence_classifier.SentenceClassifier(
      tiny_encoder(seed, seq_length), num_classes=3)
  spread(model)
  module = export_module.TextClassificationExportModule(
      model, glue.LABEL_NAMES["mnli"], assets.default_student_vocab(),
      pair=True, seq_length=seq_length)
  files = {"saved_model": os.path.join(directory, "saved_model"),
           "tflite": os.path.join(directory, "model.tflite"),
           "builtin": os.path.join(directory, "model_builtin.tflite")}
  export.export_saved_model(module, files["saved_model"],
                            pack_word_tables=False)
  with open(files["tflite"], "wb") as f:
    f.write(tflite_conversion.convert_saved_model(files["saved_model"]))
  with open(files["builtin"], "wb") as f:
    f.write(builtin_model.convert_builtin(files["saved_model"], "none"))
  return files
