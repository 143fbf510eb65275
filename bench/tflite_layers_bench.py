r"""What a raw-string student's query spends in its encoder layers.

`tflite_bench.py` compares the 6x96 student's raw-string .tflite (tokenizer,
encoder, heads and slot decoding inside) with BERT-base's. This bench splits
the student's time: it exports SNIPS students of random weights with 1 to 6
layers of the same width, converts each to a float32 raw-string .tflite, and
times them with BERT-base's float32 file in one new process, one
interpreter thread, pinned to one core, file after file in rounds over the
same queries (each query once a round, as an app sees new queries). A line
through (layers, p50) gives the time of a layer (its slope) and of
everything else (its value at 0 layers: tokenizer, packing, embeddings,
heads, decoding and LiteRT's re-preparation at each new length).
BERT-base's p50 over six of the student's layers is the ratio a student
with nothing but its layers would reach; the multiply-adds ratio
(`core/flops.py`) is the one its arithmetic allows at equal FLOP/s.

It also times a layer's six dense products alone (the Q, K, V and output
projections and the two feed-forward ones, random weights, at the
students' mean query length, one static-shaped .tflite that XNNPACK runs
whole): six layers of those plus everything else is what the student would
take if the rest of each layer (attention products, softmax, LayerNorms,
GELU, residual sums, reshapes) cost nothing.

  python bench/tflite_layers_bench.py --base_tflite=/tmp/tflite_bench/base_none.tflite \
      [--layers=1,2,4,6] [--queries=100] [--rounds=9] [--output_dir=/tmp/layers]

`--base_tflite`: the float32 BERT-base file that `tflite_bench.py` writes to
its `--output_dir` (`base_none.tflite`); the slot decoding is arg-max here
(random weights' tags would run the Viterbi loop at every query, which a
trained tagger's mostly skip). Prints JSON.
"""

import json
import multiprocessing
import os
import tempfile
import time

from absl import app
from absl import flags
import numpy as np

_BASE_TFLITE = flags.DEFINE_string("base_tflite", None,
                                   "BERT-base's float32 raw-string .tflite.")
_LAYERS = flags.DEFINE_list("layers", ["1", "2", "4", "6"],
                            "Student depths to export and time.")
_HIDDEN = flags.DEFINE_integer("hidden_size", 96, "The students' width.")
_QUERIES = flags.DEFINE_integer("queries", 100,
                                "SNIPS valid queries timed (the first ones).")
_ROUNDS = flags.DEFINE_integer("rounds", 9, "Passes over the queries.")
_CORE = flags.DEFINE_integer("core", 0, "CPU core to pin the process to.")
_OUTPUT_DIR = flags.DEFINE_string("output_dir", None,
                                  "Keeps the SavedModels and .tflite files.")
_SEQ_LENGTH = 48
_STUDENT_LAYERS = 6


def _export_student(layers, output_dir, labels):
  """A random-weight SNIPS student of `layers` layers, as a .tflite path."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf import export
  from mixvocab_tf import models
  from mixvocab_tf import networks
  from mixvocab_tf.export import tflite_conversion
  from mixvocab_tf.tasks.finetuning.intent_slot import export_module
  from mixvocab_tf.text import vocab as vocab_lib
  # pylint: enable=g-import-not-at-top
  path = os.path.join(output_dir, f"student_{layers}x{_HIDDEN.value}.tflite")
  if os.path.exists(path):
    return path
  vocab = assets.default_student_vocab()
  encoder = networks.build_student_encoder(
      None, vocab_size=len(vocab_lib.load_vocab(vocab)), num_layers=layers,
      hidden_size=_HIDDEN.value, num_attention_heads=4)
  model = models.JointIntentSlotModel(encoder, labels.num_intents,
                                      labels.num_slots)
  module = export_module.IntentSlotExportModule(
      model, labels, vocab, seq_length=_SEQ_LENGTH, slot_decoding="argmax")
  saved_model = export.export_saved_model(module, path[:-len(".tflite")])
  with open(path, "wb") as f:
    f.write(tflite_conversion.convert_saved_model(saved_model, "none"))
  return path


def _export_layer_matmuls(tokens, output_dir):
  """A .tflite of one student layer's dense products on [tokens, hidden]."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  path = os.path.join(output_dir, f"layer_matmuls_{tokens}.tflite")
  if os.path.exists(path):
    return path
  hidden = _HIDDEN.value
  rng = np.random.default_rng(0)
  shapes = [(hidden, hidden)] * 4 + [(hidden, 4 * hidden), (4 * hidden, hidden)]
  kernels = [tf.constant(rng.normal(size=shape).astype(np.float32) / 10)
             for shape in shapes]

  @tf.function(input_signature=[tf.TensorSpec([tokens, hidden], tf.float32)])
  def matmuls(x):
    for kernel in kernels:
      x = tf.matmul(x, kernel)
    return x

  converter = tf.lite.TFLiteConverter.from_concrete_functions(
      [matmuls.get_concrete_function()], matmuls)
  with open(path, "wb") as f:
    f.write(converter.convert())
  return path


class _MatmulRunner:
  """Calls the layer-matmuls file on the same input, whatever the query."""

  def __init__(self, path):
    from mixvocab_tf.export import tflite_conversion  # pylint: disable=g-import-not-at-top
    # The interpreter the other files run in (LiteRT's, XNNPACK by default).
    self.interpreter = tflite_conversion.make_interpreter(path, num_threads=1)
    self.interpreter.allocate_tensors()
    detail = self.interpreter.get_input_details()[0]
    self.interpreter.set_tensor(detail["index"], np.ones(
        detail["shape"], np.float32))

  def __call__(self, texts):
    del texts
    self.interpreter.invoke()


def _time_files(files, queries, rounds, core):
  """p50 ms of each .tflite in `files` (name -> path), one query per call,
  the files in turn over `queries`, `rounds` times, on one pinned core."""
  os.sched_setaffinity(0, {core})
  from mixvocab_tf.export import tflite_conversion  # pylint: disable=g-import-not-at-top
  runners = {name: (_MatmulRunner(path) if name == "layer_matmuls" else
                    tflite_conversion.TFLiteRunner(path, num_threads=1))
             for name, path in files.items()}
  for runner in runners.values():
    for query in queries[:10]:
      runner([query])
  times = {name: [] for name in runners}
  for _ in range(rounds):
    for name, runner in runners.items():
      for query in queries:
        start = time.perf_counter()
        runner([query])
        times[name].append(time.perf_counter() - start)
  return {name: 1000 * float(np.median(values))
          for name, values in times.items()}


def _lengths(vocab, queries):
  """Pieces of each query, [CLS] and [SEP] included, as an export packs it
  on its own (`ServingTokenizer.pack_words`)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import serving_tokenizer  # pylint: disable=g-import-not-at-top
  tokenizer = serving_tokenizer.ServingTokenizer(vocab, True)
  return [int(np.sum(tokenizer.pack_words(tf.constant([query]), _SEQ_LENGTH)[
      0]["input_mask"])) for query in queries]


def main(argv):
  del argv
  if not _BASE_TFLITE.value or not os.path.isfile(_BASE_TFLITE.value):
    raise app.UsageError(
        "--base_tflite must name BERT-base's float32 raw-string .tflite "
        "(`python bench/tflite_bench.py --models=base --large_quantizations="
        "none --builtin_quantizations= --output_dir=DIR` writes "
        "DIR/base_none.tflite).")
  layers = sorted({int(value) for value in _LAYERS.value})
  if len(layers) < 2 or layers[0] < 1:
    raise app.UsageError("--layers needs two or more depths >= 1.")
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf.core import flops
  from mixvocab_tf.datasets import intent_slot_files
  from mixvocab_tf.tasks.finetuning.intent_slot import data
  # pylint: enable=g-import-not-at-top
  output_dir = _OUTPUT_DIR.value or tempfile.mkdtemp(prefix="tflite_layers")
  os.makedirs(output_dir, exist_ok=True)
  labels = data.IntentSlotLabels.from_examples(
      intent_slot_files.read_intent_slot(assets.snips_dir("train")))
  paths = {depth: _export_student(depth, output_dir, labels)
           for depth in layers}
  queries = [" ".join(words) for words in intent_slot_files.read_intent_slot(
      assets.snips_dir("valid")).words[:_QUERIES.value]]

  lengths = {name: _lengths(vocab, queries) for name, vocab in (
      ("student", assets.default_student_vocab()),
      ("base", assets.default_teacher_vocab()))}
  mean_tokens = int(round(np.mean(lengths["student"])))
  files = {"base": _BASE_TFLITE.value,
           "layer_matmuls": _export_layer_matmuls(mean_tokens, output_dir)}
  files.update(paths)
  context = multiprocessing.get_context("spawn")
  with context.Pool(1) as pool:
    # A new process, as an app runs a model: this one's TensorFlow thread
    # pools (pinned to the same core) would take part of a small query.
    p50 = pool.apply(_time_files, (files, queries, _ROUNDS.value,
                                   _CORE.value))
  slope, intercept = np.polyfit(layers, [p50[depth] for depth in layers], 1)
  six = _STUDENT_LAYERS * slope
  # The six layers' dense products alone, and everything besides the layers.
  matmuls_only = _STUDENT_LAYERS * p50["layer_matmuls"] + intercept
  dense_macs = mean_tokens * 12 * _HIDDEN.value * _HIDDEN.value
  # Mean multiply-adds of a query: one student layer's, BERT-base's 12.
  layer_macs = np.mean([flops.encoder_macs(1, _HIDDEN.value,
                                           4 * _HIDDEN.value, length)
                        for length in lengths["student"]])
  base_macs = np.mean([flops.encoder_macs(12, 768, 3072, length)
                       for length in lengths["base"]])
  result = {
      "queries": len(queries), "rounds": _ROUNDS.value,
      "mean_tokens": {name: round(float(np.mean(values)), 2)
                      for name, values in lengths.items()},
      "p50_ms": {str(name): round(value, 4) for name, value in p50.items()},
      "ms_per_layer": round(float(slope), 4),
      "ms_besides_layers": round(float(intercept), 4),
      f"ms_{_STUDENT_LAYERS}_layers_alone": round(float(six), 4),
      f"base/{_STUDENT_LAYERS}_layers_alone": round(p50["base"] / six, 1),
      f"base/{_STUDENT_LAYERS}_layers multiply-adds": round(
          float(base_macs / (_STUDENT_LAYERS * layer_macs)), 1),
      "student_layer_gflop_per_s": round(float(2 * layer_macs / slope / 1e6),
                                         1),
      "base_gflop_per_s": round(float(2 * base_macs / p50["base"] / 1e6), 1),
      "ms_layer_matmuls": round(p50["layer_matmuls"], 4),
      "layer_matmuls_gflop_per_s": round(
          float(2 * dense_macs / p50["layer_matmuls"] / 1e6), 1),
      f"base/({_STUDENT_LAYERS}_layers_matmuls_only + besides_layers)": round(
          float(p50["base"] / matmuls_only), 1),
  }
  if _STUDENT_LAYERS in p50:
    result[f"base/student_{_STUDENT_LAYERS}_layers"] = round(
        p50["base"] / p50[_STUDENT_LAYERS], 1)
  print(json.dumps(result, indent=1))


if __name__ == "__main__":
  app.run(main)
