r"""Converts an exported student to TFLite and checks it against the SavedModel.

The tiny BERTs of Zhao et al. (EACL 2021) are meant to run on phones: this
converts a SavedModel written by `mixvocab-export` into a .tflite
that takes raw strings, using TFLite builtins and tensorflow_text's TFLite
kernels only (no Flex ops), then runs it in the LiteRT interpreter and prints
its size and a parity summary against the SavedModel as JSON.
`mixvocab-convert` (installed) or `python tools/convert_tflite.py` (in a
checkout), the same flags:

  mixvocab-convert --saved_model=/tmp/snips_export \
      --quantize=int8 --output=/tmp/snips_int8.tflite

`--quantize`: none (float32), dynamic (int8 weights), float16 (float16
weights) or int8 (int8 weights and activations, calibrated on
`--representative_examples` examples: the task's training examples (SNIPS
train queries for a SNIPS model), lines of the built-in corpus otherwise, or
`--representative_file`, one example per line, sentence pairs separated by a
tab).

The parity summary runs both models on the exporting task's own examples if
it has them (SNIPS: all of SNIPS valid, 700 queries), else on the first
`--parity_examples` lines of `--parity_file` (default: the built-in corpus):
the largest logit difference, label agreement, and the task's scores of each
(SNIPS: intent accuracy and slot F1). The task is found from the export's
`export_info.json` (`mixvocab_tf.serving.convert_run`), so this tool knows no
task by name.

In the .tflite, label strings come from constant tables inside the model
(`intent`, `slot_tags`, `label`); SNIPS words are given as byte offsets
(`word_starts`, `word_ends`) since TFLite cannot build the padded word
matrix; the label vocabularies are also written beside the .tflite as
`<output>.labels.json` (which `mixvocab-predict` reads if the .tflite's own
label table cannot be).

Load the result with
`ai_edge_litert.interpreter.InterpreterWithCustomOps(custom_op_registerers=
tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS, model_path=...)`.

A fine-tuned model also gets `--builtin_output` (default
`<output stem>_builtin.tflite`): the same model on BERT's three int32
[1, n] inputs (any n; default [1, seq_length]), LiteRT builtin
operators only, with TFLite Model Metadata (vocabulary as a BertTokenizer,
label files), which MediaPipe Tasks, LiteRT.js and a stock LiteRT app load
(docs/SERVING.md, "Deploy").
"""

import json

from absl import flags

from mixvocab_tf.cli import console
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.serving import convert_run

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags (`run` defines them; importing this does not)."""
  flags.DEFINE_string("saved_model", None, "SavedModel from mixvocab-export "
                      "(tools/export_saved_model.py).")
  flags.DEFINE_string("output", None, "Where to write the .tflite.")
  flags.DEFINE_enum("quantize", "none", list(tflite_conversion.QUANTIZATIONS),
                    "Quantization of the .tflite.")
  flags.DEFINE_string(
      "representative_file", None, "int8 calibration text, one example per "
      "line (tab between the sentences of a pair).")
  flags.DEFINE_integer("representative_examples", 300,
                       "Calibration examples for int8.")
  flags.DEFINE_string(
      "parity_file", None, "Parity text for models whose task has no "
      "examples of its own (not SNIPS), one example per line (default: the "
      "built-in corpus).")
  flags.DEFINE_string(
      "int8_float_nodes", tflite_conversion.INT8_FLOAT_NODES,
      "With --quantize=int8: regex of the .tflite tensor names whose ops "
      "stay in float (empty: none).")
  flags.DEFINE_string(
      "builtin_output", None, "Where to write the builtin-only .tflite "
      "(token ids in, TFLite Model Metadata; for MediaPipe Tasks, LiteRT.js "
      "and stock LiteRT). Default: --output with '_builtin' before "
      "'.tflite'.")
  flags.DEFINE_integer(
      "parity_examples", None, "Compare on only this many examples "
      "(default: all of the task's own, e.g. SNIPS valid; 500 lines "
      "otherwise).")


def _run():
  if not FLAGS.saved_model or not FLAGS.output:
    raise ValueError("--saved_model and --output are required.")
  summary = convert_run.convert_run(
      FLAGS.saved_model, FLAGS.output, FLAGS.quantize,
      representative_file=FLAGS.representative_file,
      representative_examples=FLAGS.representative_examples,
      parity_file=FLAGS.parity_file,
      parity_examples=FLAGS.parity_examples,
      int8_float_nodes=FLAGS.int8_float_nodes,
      builtin_output=FLAGS.builtin_output)
  print(json.dumps(summary, indent=1))


def main(argv):
  """The absl main of `mixvocab-convert` (flags: `define_flags`)."""
  # tflite_conversion.UnsupportedOpsError is a ValueError.
  console.run_tool(argv, _run)


def run():
  """The `mixvocab-convert` console script."""
  define_flags()
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
