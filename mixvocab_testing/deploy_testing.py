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
`tiny_slot_tagger()` does the same for a slot tagger (an intent-and-slot
model of the one intent `examples.NO_INTENT`, what the own-data job trains
from data without intents), for the clients' tagger views.
"""

import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Budgets: the teacher and student steps of each job (batch 64).
TEACHER_STEPS = 150
STUDENT_STEPS = 400

_CACHE = {}

#: Text for each rule of the in-graph normalizer that the app-side
#: tokenizers reproduce (examples/web/lib/tokenize.js, examples/android).
#: Not here: Unicode White_Space other than ASCII (U+00A0, U+3000, ...),
#: where tensorflow_text's WhitespaceTokenizer cuts the word before it inside
#: the space's UTF-8 bytes (that word becomes [UNK] in the raw-string model),
#: and code points that are unassigned in the package's ICU but assigned in
#: the browser's or the JVM's Unicode.
TRICKY_TEXTS = [
    "Play Norah Jones on Spotify!",
    "crème brûlée À LA CARTE",
    "e\u0301 decomposed accents",
    "Straße STRASSE \u1e9e",
    "\ufb01nd the \ufb02ight",
    "\uff26\uff35\uff2c\uff2c\uff37\uff29\uff24\uff34\uff28 \uff11\uff12",
    "\U0001d400\U0001d401 \u210c \u3200 \u00a8 \u2460",
    "東京の天気 weather",
    "x\U00020000y \U0002f800",
    "\ue000private use",
    "bad \ufffd byte",
    "zero\u200bwidth soft\u00adhyphen \u2060joined",
    "nul\x00inside arabic\u0600sign",
    "emoji 😀 👍🏽 ok",
    "ΟΔΟΣ Σίσυφος \u0345",
    "İstanbul ǅ",
    "don't stop-believing (live) ... $5",
    "\u201cquotes\u201d \u00abguillemets\u00bb \u00bfqu\u00e9?",
    "tab\tseparated\nlines",
    "a" * 120 + " long",
    "play " * 60,
    "",
    "   ",
    "\u200b",
]

#: Sentence pairs for the app-side packing (some cut to fit), besides pairs
#: of validation queries.
PAIRS = [
    ("A man is playing a guitar.", "Someone plays music."),
    ("", "nothing in the first box"),
    ("nothing in the second box", ""),
    ("Crème brûlée, À LA CARTE!", "STRASSE straße"),
    ("play " * 30, "a short second text"),
    ("a short first text", "rate this book " * 10),
    ("book a table for two " * 5, "what is the weather in paris " * 5),
]


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


def _export_files(module, directory):
  """`module` exported to `directory`: {'saved_model', 'tflite' (raw
  strings, fp32), 'builtin' (builtin operators, fp32, with metadata)}, the
  word table float in both files."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import export
  from mixvocab_tf.export import builtin_model
  from mixvocab_tf.export import tflite_conversion
  # pylint: enable=g-import-not-at-top
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


def tiny_pair_classifier(directory, seq_length=16, seed=3):
  """A sentence-pair classifier with MNLI's three labels (`tiny_encoder`,
  `spread`) exported to `directory`: {'saved_model', 'tflite' (raw strings,
  fp32), 'builtin' (builtin operators, fp32, with metadata)}. The word table
  stays float in both files."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf.datasets import glue
  from mixvocab_tf.models import sentence_classifier
  from mixvocab_tf.tasks.finetuning.text_classification import export_module
  # pylint: enable=g-import-not-at-top
  model = sentence_classifier.SentenceClassifier(
      tiny_encoder(seed, seq_length), num_classes=3)
  spread(model)
  module = export_module.TextClassificationExportModule(
      model, glue.LABEL_NAMES["mnli"], assets.default_student_vocab(),
      pair=True, seq_length=seq_length)
  return _export_files(module, directory)


#: The tiny slot tagger's tags.
TAGGER_SLOTS = ("O", "B-artist", "I-artist", "B-city", "I-city")


def tiny_slot_tagger(directory, seq_length=16, seed=5):
  """A slot tagger (`TAGGER_SLOTS`, the one intent `examples.NO_INTENT`;
  `tiny_encoder`, `spread`) exported to `directory` as `tiny_pair_classifier`
  exports: {'saved_model', 'tflite', 'builtin'}."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf.datasets import examples
  from mixvocab_tf.models import joint_intent_slot_model
  from mixvocab_tf.tasks.finetuning.intent_slot import data
  from mixvocab_tf.tasks.finetuning.intent_slot import export_module
  # pylint: enable=g-import-not-at-top
  model = joint_intent_slot_model.JointIntentSlotModel(
      tiny_encoder(seed, seq_length), num_intents=1,
      num_slots=len(TAGGER_SLOTS))
  spread(model)
  module = export_module.IntentSlotExportModule(
      model, data.IntentSlotLabels([examples.NO_INTENT], TAGGER_SLOTS),
      assets.default_student_vocab(), seq_length=seq_length)
  return _export_files(module, directory)


def packed_files(builtin):
  """{name: lines} of the files packed in a builtin file's metadata."""
  with zipfile.ZipFile(builtin) as archive:
    return {name: archive.read(name).decode("utf-8").splitlines()
            for name in archive.namelist()}


def seq_length(builtin):
  """The positions a builtin file reads at most (its inputs' shape)."""
  from ai_edge_litert import interpreter as litert  # pylint: disable=g-import-not-at-top
  runner = litert.Interpreter(model_path=builtin).get_signature_runner()
  return int(runner.get_input_details()["input_word_ids"]["shape"][1])


def viterbi_cases(num_tags, seed=0):
  """Score matrices (log-probabilities, [words, tags]) for comparing an
  app's IOB Viterbi with the package's: random ones of 1 to 12 words, and
  one of ties everywhere (the lowest tag id must win, as in an arg-max)."""
  rng = np.random.default_rng(seed)
  scores = []
  for length in list(range(1, 13)) * 3:
    logits = rng.normal(scale=3.0, size=[length, num_tags])
    scores.append(logits - np.log(np.exp(logits).sum(-1, keepdims=True)))
  scores.append(np.full([5, num_tags], -np.log(num_tags)))
  return scores
