r"""Converts an exported student to TFLite and checks it against the SavedModel.

The tiny BERTs of Zhao et al. (EACL 2021) are meant to run on phones: this
converts a SavedModel written by `tools/export_saved_model.py` into a .tflite
that takes raw strings, using TFLite builtins and tensorflow_text's TFLite
kernels only (no Flex ops), then runs it in the LiteRT interpreter and prints
its size and a parity summary against the SavedModel as JSON:

  python tools/convert_tflite.py --saved_model=/tmp/snips_export \
      --quantize=int8 --output=/tmp/snips_int8.tflite

`--quantize`: none (float32), dynamic (int8 weights), float16 (float16
weights) or int8 (int8 weights and activations, calibrated on
`--representative_examples` examples: SNIPS train queries for a SNIPS model,
lines of the built-in corpus otherwise, or `--representative_file`, one
example per line, sentence pairs separated by a tab).

The parity summary runs both models on SNIPS valid (700 queries) for a SNIPS
model, else on the first `--parity_examples` lines of `--parity_file` (default:
the built-in corpus): the largest logit difference, label agreement, and for
SNIPS the intent accuracy and slot F1 of each. In the .tflite, label strings
come from constant tables inside the model (`intent`, `slot_tags`, `label`);
SNIPS words are given as byte offsets (`word_starts`, `word_ends`) since
TFLite cannot build the padded word matrix; the label vocabularies are also
written beside the .tflite as `<output>.labels.json`.

Load the result with
`ai_edge_litert.interpreter.InterpreterWithCustomOps(custom_op_registerers=
tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS, model_path=...)`.
"""

import json
import os
import shutil
import sys
import time

from absl import app
from absl import flags
import tensorflow as tf

from mixvocab_tf import data as data_lib
from mixvocab_tf.export import parity
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.tasks.finetuning import snips_data

_SAVED_MODEL = flags.DEFINE_string(
    "saved_model", None, "SavedModel from tools/export_saved_model.py.")
_OUTPUT = flags.DEFINE_string("output", None, "Where to write the .tflite.")
_QUANTIZE = flags.DEFINE_enum("quantize", "none",
                              list(tflite_conversion.QUANTIZATIONS),
                              "Quantization of the .tflite.")
_REPRESENTATIVE_FILE = flags.DEFINE_string(
    "representative_file", None, "int8 calibration text, one example per "
    "line (tab between the sentences of a pair).")
_REPRESENTATIVE_EXAMPLES = flags.DEFINE_integer(
    "representative_examples", 300, "Calibration examples for int8.")
_PARITY_FILE = flags.DEFINE_string(
    "parity_file", None, "Parity text for non-SNIPS models, one example per "
    "line (default: the built-in corpus).")
_INT8_FLOAT_NODES = flags.DEFINE_string(
    "int8_float_nodes", tflite_conversion.INT8_FLOAT_NODES,
    "With --quantize=int8: regex of the .tflite tensor names whose ops stay "
    "in float (empty: none).")
_PARITY_EXAMPLES = flags.DEFINE_integer(
    "parity_examples", None, "Compare on only this many examples (default: "
    "all of SNIPS valid, 500 lines otherwise).")


def _lines(path, limit, pair):
  examples = []
  with tf.io.gfile.GFile(path, "r") as f:
    for line in f:
      line = line.rstrip("\n")
      if not line.strip():
        continue
      if pair:
        first, _, second = line.partition("\t")
        examples.append((first, second or first))
      else:
        examples.append(line)
      if len(examples) >= limit:
        break
  return examples


def _examples(info, path, limit, snips_split):
  """Examples as strings (one input) or tuples (sentence pairs), in the
  signature's sorted input order."""
  pair = bool(info.get("pair"))
  if path:
    return _lines(path, limit, pair)
  if info["task"] == "snips":
    words = snips_data.read_snips(data_lib.snips_dir(snips_split)).words
    return [" ".join(w) for w in words[:limit]]
  examples = []
  for corpus_file in data_lib.builtin_corpus_files():
    examples += _lines(corpus_file, limit - len(examples), False)
    if len(examples) >= limit:
      break
  if pair:
    return list(zip(examples[0::2], examples[1::2]))
  return examples


def _as_inputs(examples, input_names):
  if len(input_names) == 1:
    return {input_names[0]: list(examples)}
  return {name: [e[i] for e in examples]
          for i, name in enumerate(input_names)}


def _parity(saved_model_dir, tflite_path, info):
  limit = _PARITY_EXAMPLES.value or (10**9 if info["task"] == "snips" else
                                     500)
  examples = _examples(info, None if info["task"] == "snips" else
                       _PARITY_FILE.value, limit, "valid")
  loaded = tf.saved_model.load(saved_model_dir)
  runner = tflite_conversion.TFLiteRunner(model_path=tflite_path)
  inputs = _as_inputs(examples, runner.input_names)
  reference = parity.predict_saved_model(
      loaded.signatures[tflite_conversion.TFLITE_SIGNATURE], inputs)
  start = time.perf_counter()
  candidate = parity.predict_tflite(runner, inputs)
  seconds = time.perf_counter() - start
  summary = parity.compare(reference, candidate)
  summary["tflite_ms_per_example"] = 1000 * seconds / max(len(examples), 1)
  if info["task"] == "snips":
    valid = snips_data.read_snips(data_lib.snips_dir("valid"))
    n = len(examples)
    for name, predictions in (("saved_model", reference),
                              ("tflite", candidate)):
      scores = parity.snips_scores(predictions, valid.intents[:n],
                                   valid.tags[:n])
      summary[f"{name}/intent_accuracy"] = scores["intent_accuracy"]
      summary[f"{name}/slot_f1"] = scores["slot_f1"]
  return summary


def _run():
  if not _SAVED_MODEL.value or not _OUTPUT.value:
    raise ValueError("--saved_model and --output are required.")
  info = saved_model_export.read_export_info(_SAVED_MODEL.value)
  representative = None
  if _QUANTIZE.value == "int8":
    representative = _examples(info, _REPRESENTATIVE_FILE.value,
                               _REPRESENTATIVE_EXAMPLES.value, "train")
  start = time.time()
  tflite_model = tflite_conversion.convert_saved_model(
      _SAVED_MODEL.value, _QUANTIZE.value, representative,
      int8_float_nodes=_INT8_FLOAT_NODES.value)
  seconds = time.time() - start
  parent = os.path.dirname(os.path.abspath(_OUTPUT.value))
  os.makedirs(parent, exist_ok=True)
  with open(_OUTPUT.value, "wb") as f:
    f.write(tflite_model)
  labels = os.path.join(_SAVED_MODEL.value, saved_model_export.LABELS_FILE)
  if os.path.isfile(labels):
    shutil.copy(labels, _OUTPUT.value + ".labels.json")
  summary = {
      "output": _OUTPUT.value,
      "quantize": _QUANTIZE.value,
      "task": info["task"],
      "size_bytes": len(tflite_model),
      "size_mb": round(len(tflite_model) / 2**20, 3),
      "custom_ops": tflite_conversion.custom_ops(tflite_model),
      "conversion_seconds": round(seconds, 1),
      "calibration_examples": len(representative or ()),
      "parity": _parity(_SAVED_MODEL.value, _OUTPUT.value, info),
  }
  print(json.dumps(summary, indent=1))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  try:
    _run()
  except (ValueError, FileNotFoundError,
          tflite_conversion.UnsupportedOpsError) as e:
    print(f"\nerror: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
  app.run(main)
