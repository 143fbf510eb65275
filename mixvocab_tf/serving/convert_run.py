"""Converts an export to TFLite and checks it against the SavedModel, in process.

The tiny BERTs of Zhao et al. (EACL 2021) are meant to run on phones: this
converts a SavedModel of `export_run` (`tflite_conversion`), writes the
.tflite, runs it in the LiteRT interpreter against the SavedModel
(`parity`), and returns the summary that `mixvocab-convert`
(`cli/convert_tflite.py`, `tools/convert_tflite.py`) prints.

Which examples calibrate int8 and which are compared, and how predictions
are scored, is the exporting task's: `export_info.json` names the task
(`task_name`), the task registry gives its class, and its
`serving_examples` / `serving_scores` answer (`FinetuneTask`). Without them
(an encoder export, a task with no data of its own) examples come from a
file or the built-in corpus. Nothing here names a task.

The SavedModel and the .tflite may be on any file system TensorFlow reads
(`gs://`): files go through `tf.io.gfile`, and the LiteRT interpreter, which
opens only local paths, is given the bytes of a remote .tflite.
"""

import os
import time
from typing import Optional

import numpy as np
import tensorflow as tf

import mixvocab_tf.tasks  # Registers the built-in tasks.  # pylint: disable=unused-import
from mixvocab_tf.core import base_task
from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import parity
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.core import run_files

#: Parity examples from a file or the corpus when none are asked for (a
#: task's own examples are all used).
DEFAULT_PARITY_EXAMPLES = 500
_ALL = 10**9


def serving_task_class(info: dict) -> Optional[type]:
  """The registered task that owns an export (None for an encoder export).

  Raises:
    ValueError: the task is not registered in this process (its module was
      not imported).
  """
  name = info.get("task_name")
  return base_task.get_task_class(name) if name else None


def _input_names(saved_model_dir, info):
  if "inputs" in info:
    return list(info["inputs"])
  # Exports written before export_info.json listed the inputs.
  loaded = tf.saved_model.load(saved_model_dir)
  function = loaded.signatures[tflite_conversion.TFLITE_SIGNATURE]
  return sorted(function.structured_input_signature[1])


def _task_examples(task_class, split, limit):
  hook = getattr(task_class, "serving_examples", None)
  return hook(split, limit) if hook else None


def calibration_examples(task_class, pair, path=None, limit=300):
  """int8 calibration text: `path`, else the task's train examples, else the
  built-in corpus."""
  if path:
    return parity.read_examples(path, limit, pair)
  examples = _task_examples(task_class, "train", limit)
  return parity.corpus_examples(limit, pair) if examples is None else examples


def parity_summary(saved_model_dir, tflite_path, task_class, pair,
                   path=None, limit=None):
  """SavedModel against .tflite on the task's valid examples (all of them),
  else on `path` or the built-in corpus (`DEFAULT_PARITY_EXAMPLES`).

  Returns:
    `parity.compare`'s summary, `tflite_ms_per_example`, and the task's
    scores of each model (`saved_model/...`, `tflite/...`) when the
    examples are the task's own.
  """
  examples = _task_examples(task_class, "valid", limit or _ALL)
  own = examples is not None
  if not own:
    limit = limit or DEFAULT_PARITY_EXAMPLES
    examples = (parity.read_examples(path, limit, pair) if path else
                parity.corpus_examples(limit, pair))
  loaded = tf.saved_model.load(saved_model_dir)
  runner = tflite_conversion.TFLiteRunner(**run_files.tflite_model(tflite_path))
  inputs = parity.as_inputs(examples, runner.input_names)
  reference = parity.predict_saved_model(
      loaded.signatures[tflite_conversion.TFLITE_SIGNATURE], inputs)
  start = time.perf_counter()
  candidate = parity.predict_tflite(runner, inputs)
  seconds = time.perf_counter() - start
  summary = parity.compare(reference, candidate)
  summary["tflite_ms_per_example"] = 1000 * seconds / max(len(examples), 1)
  scores = getattr(task_class, "serving_scores", None)
  if own and scores:
    for name, predictions in (("saved_model", reference),
                              ("tflite", candidate)):
      for key, value in scores(predictions, "valid").items():
        summary[f"{name}/{key}"] = value
  return summary


def builtin_agreement(tflite_path, builtin_path, examples):
  """How often the builtin file answers as the raw-string file does.

  Both run through the predictor, which tokenizes for the builtin file as an
  app does (`mixvocab-predict`).

  Returns:
    {'examples', 'agreement/label' (or 'agreement/intent' and
    'agreement/slot_tags': the share of queries with every word's tag the
    same)}.
  """
  from mixvocab_tf.serving import predictor  # pylint: disable=g-import-not-at-top
  raw = predictor.load_predictor(tflite_path)
  builtin = predictor.load_predictor(builtin_path)
  rows = [e if isinstance(e, str) else {"text_a": e[0], "text_b": e[1]}
          for e in examples]
  want, got = raw.predict(rows), builtin.predict(rows)
  keys = ("intent", "tags") if raw.kind == "intent_slot" else ("label",)
  summary = {"examples": len(rows)}
  for key in keys:
    summary["agreement/" + ("slot_tags" if key == "tags" else key)] = float(
        np.mean([w[key] == g[key] for w, g in zip(want, got)]))
  return summary


def convert_run(saved_model_dir: str, output: str, quantize: str = "none",
                representative_file: Optional[str] = None,
                representative_examples: int = 300,
                parity_file: Optional[str] = None,
                parity_examples: Optional[int] = None,
                int8_float_nodes: str = tflite_conversion.INT8_FLOAT_NODES,
                builtin_output: Optional[str] = None) -> dict:
  """Converts an export, writes the .tflite and checks its parity.

  A fine-tuned model's export also gets its builtin-only file
  (`builtin_model`): token ids in, LiteRT builtins only, TFLite Model
  Metadata, for MediaPipe Tasks, LiteRT.js and stock LiteRT; its size,
  operators and p50 latency are in the summary under 'builtin'.

  Args:
    saved_model_dir: a SavedModel of `export_run` / `export_saved_model`.
    output: the .tflite path (its directory is created); the label
      vocabularies are copied beside it as `<output>.labels.json`, the
      student vocabulary as `<output>.vocab.txt`.
    quantize: one of `tflite_conversion.QUANTIZATIONS`.
    representative_file: int8 calibration text, one example per line (a tab
      between the sentences of a pair).
    representative_examples: calibration examples for int8.
    parity_file: parity text when the task has no examples of its own.
    parity_examples: compare on only this many examples.
    int8_float_nodes: regex of the tensors kept in float by int8.
    builtin_output: where the builtin file goes (default
      `builtin_model.builtin_path(output)`: `x.tflite` -> `x_builtin.tflite`);
      its quantization is `builtin_model.QUANTIZE_FOR[quantize]`.

  Returns:
    The summary `mixvocab-convert` prints: output, quantize, task,
    size, custom ops, conversion time, calibration examples, parity, and
    'builtin' (path, bytes, operators, p50_ms, and its agreement with the
    raw-string file on the latency examples, `builtin_agreement`) for a
    fine-tuned model.
  """
  info = saved_model_export.read_export_info(saved_model_dir)
  task_class = serving_task_class(info)
  pair = len(_input_names(saved_model_dir, info)) > 1
  representative = None
  if quantize == "int8":
    representative = calibration_examples(task_class, pair,
                                          representative_file,
                                          representative_examples)
  start = time.time()
  tflite_model = tflite_conversion.convert_saved_model(
      saved_model_dir, quantize, representative,
      int8_float_nodes=int8_float_nodes)
  seconds = time.time() - start
  run_files.write_atomically(output, tflite_model)  # Makes its directory.
  labels = os.path.join(saved_model_dir, saved_model_export.LABELS_FILE)
  if run_files.is_file(labels):
    run_files.copy(labels, output + ".labels.json")
  # The student vocabulary too: `mixvocab-predict` counts the words it
  # cannot read (a .tflite holds no readable vocabulary).
  vocab = tf.io.gfile.glob(os.path.join(saved_model_dir, "assets", "*.txt"))
  if len(vocab) == 1:
    run_files.copy(vocab[0], output + ".vocab.txt")
  summary = {
      "output": output,
      "quantize": quantize,
      "task": info["task"],
      "size_bytes": len(tflite_model),
      "size_mb": round(len(tflite_model) / 2**20, 3),
      "custom_ops": tflite_conversion.custom_ops(tflite_model),
      "conversion_seconds": round(seconds, 1),
      "calibration_examples": len(representative or ()),
      "parity": parity_summary(saved_model_dir, output, task_class, pair,
                               parity_file, parity_examples),
  }
  if builtin_model.has_builtin_signature(saved_model_dir):
    builtin_output = builtin_output or builtin_model.builtin_path(output)
    run_files.write_atomically(builtin_output, builtin_model.convert_builtin(
        saved_model_dir, builtin_model.QUANTIZE_FOR[quantize]))
    examples = _task_examples(task_class, "valid", 200)
    if examples is None:
      examples = parity.corpus_examples(200, pair)
    summary["builtin"] = builtin_model.summary(builtin_output,
                                               saved_model_dir, examples)
    with run_files.local_copy(output) as raw, \
        run_files.local_copy(builtin_output) as builtin:
      summary["builtin"]["parity"] = builtin_agreement(raw, builtin,
                                                       examples)
  return summary
