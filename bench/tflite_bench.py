r"""On-device-style latency and file size of SNIPS models in TFLite.

Zhao et al. (EACL 2021) make BERTs small enough for phones; this measures what
a phone would run: the .tflite of a SNIPS export module (raw query in, intent
and slot tags out, tokenization included), in the LiteRT interpreter with one
thread, pinned to one CPU core, one query per call, on SNIPS valid queries.

Models (SNIPS heads: 7 intents, 72 slot tags; sequences up to 64 tokens):
- `student`: the 6x96 student (4 heads, the shipped 4,929-token student
  vocabulary); random weights, or `--student_saved_model` (an export of a
  fine-tuned student, from tools/export_saved_model.py);
- `teacher`: the default teacher's dimensions (6 layers, hidden 384, 12 heads,
  the 30,522-token teacher vocabulary), random weights;
- `base`: BERT-base's dimensions (12 layers, hidden 768, 12 heads, 30,522
  tokens), random weights.

For each model and quantization it prints the .tflite size, the size of the
tokenizer's model buffers inside it (the vocabulary in tensorflow_text's
FastWordpiece form plus the normalizer), and latency p50 / p90 over the
queries, both wall-clock and as the thread's CPU time (robust to other jobs
on a shared machine). Ratios: base / student and teacher / student p50, per
quantization. Usage (about 15 minutes on 2 busy cores, most of it converting
BERT-base):

  python bench/tflite_bench.py [--queries=300] [--large_queries=100] \
      [--quantizations=none,dynamic,float16,int8] \
      [--large_quantizations=none,dynamic] [--output_dir=/tmp/tflite_bench]

Targets (issue 19): the 6x96 dynamic-range file <= 2.0 MB including its
tokenizer, p50 <= 1 ms, base / student fp32 p50 >= 57 (the paper's phone
figure). Measured on an idle 2-core machine, random weights,
`--models=student,base --quantizations=none,dynamic
--large_quantizations=none,dynamic`, 3 processes (min / median / max),
2026-11-24:
- student dynamic: 1.897 MB, p50 0.819 / 0.841 / 0.844 ms;
- student fp32: 5.29 MB, p50 1.000 / 1.005 / 1.027 ms; base fp32 63.3 / 64.9 /
  65.8 ms: ratio 61.7 / 64.5 / 65.8 (dynamic-range: 8.5 to 10.3, because
  LiteRT's int8 kernels speed BERT-base up 8x and the student's time is
  mostly its tokenizer, gathers and Viterbi loop, not matmuls).
On another idle 2-core machine (Intel with AMX), 2026-11-24, the code of
aa4a33d gave: student dynamic 1.897 MB, p50 0.926 / 0.935 / 0.951 ms;
student fp32 p50 1.177 / 1.189 / 1.215 ms, base fp32 56.9 / 58.1 / 58.2 ms:
ratio 47.8 / 47.9 / 49.4, below the target. The student's time there was
per-operator overhead, not arithmetic (6 layers at ~12 tokens are ~8M
multiply-adds). Split by building the same module with a trivial model in
place of the encoder and with arg-max tags (one core, interleaved; another
job on the other core): tokenizer, packing and runner ~0.17 ms, encoder
~0.5-0.7 ms (LiteRT's XNNPACK delegate runs it: 1.7 ms without), valid-IOB
decoding loop ~0.25 ms, and np.vectorize in the Python runner 0.05 ms.
Two changes took the query from 1.12 to 0.95 ms in an interleaved A/B
(same tags on all 700 SNIPS valid queries): the Viterbi step gathers each
`I-X` tag's two allowed predecessors by constant indices instead of forming
[tags x tags] scores (`iob_decoding._sparse_step`; the loop 0.17 -> 0.07 ms
alone), and the runner encodes strings element by element. With them
(0e323a3), the same 3-run command there: student dynamic 1.873 MB, p50
0.627 / 0.633 / 0.647 ms; fp32 0.842 / 0.875 / 0.915 ms, base 57.7 / 59.2 /
59.9 ms: ratio 65.5 / 66.0 / 70.4, above the target. Rewriting the
encoder's attention for fewer operators (one QKV matmul, per-head batch
matmuls, no reshapes or transposes) took only 0.51 -> 0.49 ms of the
encoder under XNNPACK and is not done.
(The day before, on the same machine running BERT-base 18% faster, the
previous tokenizer gave 2.255 MB, p50 0.645 / 0.657 / 0.662 ms, fp32 ratio
57.3 / 59.1 / 62.0.)
Where the bytes are: 0.501 MB of tokenizer models (a FastWordpiece model of
the 4,929-token vocabulary without pre-tokenization, 0.256 MB, and the
package's own normalizer model, 0.245 MB, which also spaces out BERT's
punctuation and CJK characters, `export/spaced_normalizer.py`; with
tensorflow_text's prebuilt models the split took 0.35 MB more inside the
FastWordpiece model), 0.473 MB of int8 word embeddings, 0.664 MB of int8
layer weights, and ~0.26 MB of float biases, LayerNorms, heads, per-channel
scales (64 KB) and graph. Cutting the position table to the served length
took 0.17 MB off (2.43 -> 2.26 MB), the normalizer 0.36 MB (-> 1.90 MB).
Leaving letters that are no character of any token out of the normalizer
(their words are [UNK] either way) took its model from 0.245 to 0.029 MB:
student dynamic 1.873 -> 1.657 MB (2026-11-28). Storing the word table at
4 bits per weight, a scale per row (`export/packed_embedding.py`), took
0.473 MB of int8 embeddings to 0.242: student dynamic 1.427 MB, p50 0.960 ms
(0.976 before), builtin dynamic 1.126 MB, on idle cores of a 131 GFLOP/s
machine (2026-11-28; issue 44's target: <= 1.5 MB).
Since 2026-12-02 the runner (`tflite_conversion.TFLiteRunner`) allocates the
interpreter's tensors only when the input shapes change; LiteRT's Python
signature runner did it at every call, which with a string input re-plans
the whole graph and its XNNPACK delegate: 6x96 fp32 p50 0.775 -> 0.674 ms,
dynamic-range 0.584 -> 0.482 ms (the same files, one pinned core, an AMX
Xeon), BERT-base's ~61 ms unchanged within noise.
Since f57f15a the exports' graphs run the Viterbi loop only for invalid
arg-max tags (a trained tagger's are mostly valid; random weights' almost
never), add the position table and the attention mask by broadcasting, and
take fewer operators for embeddings and the slot head; and each file is
timed in a new process (in the converting one, TensorFlow's pinned thread
pools took 5-10% of the student's query). With `--student_saved_model` the
main job's trained stage II student, one run: fp32 0.554 ms against
BERT-base's 53.3 ms, 96.1x; dynamic-range raw-string file 1.469 MB,
0.394 ms (docs/PERFORMANCE.md). (Its builtin ratio, 211.1x, compared the
student's [1, 48] file with BERT-base's [1, 64] one: the bench now refuses
a `--seq_length` other than the student export's. With random weights at
64, one run: builtin fp32 144.7x, raw-string 89.3x.)
Beside the latency ratios it prints `multiply-adds` ratios: BERT-base's
encoder multiply-adds a query over the student's (`core/flops.py`), each
query at its own length for the raw-string files and at `--seq_length` for
the builtin ones padded (at its own length, a builtin file's arithmetic
is the raw-string file's): the latency ratio each pair would have at equal
FLOP/s and no cost outside the layers. The student's vocabulary cuts a SNIPS
query into about 1.4x as many pieces as BERT-base's, so on raw strings
that ratio is about 87x (119x at one length); `bench/tflite_layers_bench.py`
times the student's layers alone.
Since the intent-and-slot builtin files take any length (2026-12-05), each
builtin file is timed twice: padded to [1, seq_length], as LiteRT.js runs
it, and at each query's own length (the `, own length` rows), as a stock
LiteRT app can feed it.
"""

import json
import multiprocessing
import os
import tempfile
import time

from absl import app
from absl import flags
import numpy as np

_QUERIES = flags.DEFINE_integer("queries", 300,
                                "SNIPS valid queries timed per student model.")
_LARGE_QUERIES = flags.DEFINE_integer(
    "large_queries", 100, "Queries timed for the teacher- and base-sized "
    "models.")
_WARMUP = flags.DEFINE_integer("warmup", 20, "Untimed calls first.")
_QUANTIZATIONS = flags.DEFINE_list("quantizations",
                                   ["none", "dynamic", "float16", "int8"],
                                   "Quantizations of the student.")
_LARGE_QUANTIZATIONS = flags.DEFINE_list(
    "large_quantizations", ["none", "dynamic"],
    "Quantizations of the teacher- and base-sized models.")
_MODELS = flags.DEFINE_list("models", ["student", "teacher", "base"],
                            "Models to measure.")
_STUDENT_SAVED_MODEL = flags.DEFINE_string(
    "student_saved_model", None, "Export of a fine-tuned 6x96 SNIPS student "
    "(default: random weights).")
_OUTPUT_DIR = flags.DEFINE_string("output_dir", None,
                                  "Keeps the SavedModels and .tflite files.")
_CORE = flags.DEFINE_integer("core", 0, "CPU core to pin the process to.")
_SEQ_LENGTH = flags.DEFINE_integer("seq_length", 64,
                                   "Most tokens per query.")
_CALIBRATION = flags.DEFINE_integer("calibration_examples", 100,
                                    "SNIPS train queries calibrating int8.")
_BUILTIN = flags.DEFINE_list(
    "builtin_quantizations", ["none", "dynamic"],
    "Quantizations of each model's builtin-ops file too (token ids in, the "
    "model only: padded to [1, seq_length], as LiteRT.js runs it, and at each "
    "query's own length, as MediaPipe Tasks and a stock LiteRT app can); "
    "empty: none.")

# name -> (num_layers, hidden_size, num_attention_heads, vocabulary).
_MODEL_SIZES = {
    "student": (6, 96, 4, "student"),
    "teacher": (6, 384, 12, "teacher"),
    "base": (12, 768, 12, "teacher"),
}
_TOKENIZER_OPS = ("FastBertNormalize", "FastWordpieceTokenizeWithOffsets")


def _export(name, export_dir, labels):
  """Exports a random-weight SNIPS model of size `name`."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf import export
  from mixvocab_tf import models
  from mixvocab_tf import networks
  from mixvocab_tf.tasks.finetuning.intent_slot import export_module as intent_slot_export
  from mixvocab_tf.text import vocab as vocab_lib
  # pylint: enable=g-import-not-at-top
  layers, hidden, heads, which = _MODEL_SIZES[name]
  vocab = (assets.default_student_vocab() if which == "student" else
           assets.default_teacher_vocab())
  encoder = networks.build_student_encoder(
      None, vocab_size=len(vocab_lib.load_vocab(vocab)), num_layers=layers,
      hidden_size=hidden, num_attention_heads=heads)
  model = models.JointIntentSlotModel(encoder, labels.num_intents,
                                      labels.num_slots)
  module = intent_slot_export.IntentSlotExportModule(
      model, labels, vocab, seq_length=_SEQ_LENGTH.value)
  export.export_saved_model(module, export_dir)
  return export_dir


def _tokenizer_bytes(tflite_model):
  """Bytes of the constant inputs of the tokenizer ops (their models)."""
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  model = schema.Model.GetRootAsModel(tflite_model, 0)
  subgraph = model.Subgraphs(0)
  total = 0
  for i in range(subgraph.OperatorsLength()):
    operator = subgraph.Operators(i)
    code = model.OperatorCodes(operator.OpcodeIndex())
    custom = code.CustomCode()
    if custom is None or custom.decode() not in _TOKENIZER_OPS:
      continue
    for j in range(operator.InputsLength()):
      tensor = subgraph.Tensors(operator.Inputs(j))
      total += model.Buffers(tensor.Buffer()).DataLength()
  return total


def _timed(call, items, warmup):
  """(wall p50, wall p90, cpu p50, cpu p90) in ms of `call(item)`, one item
  per call, after `warmup` untimed calls."""
  for item in items[:warmup]:
    call(item)
  wall, cpu = [], []
  for item in items:
    start_wall, start_cpu = time.perf_counter(), time.thread_time()
    call(item)
    cpu.append(time.thread_time() - start_cpu)
    wall.append(time.perf_counter() - start_wall)
  ms = lambda values, q: round(1000 * float(np.percentile(values, q)), 3)
  return ms(wall, 50), ms(wall, 90), ms(cpu, 50), ms(cpu, 90)


def _latency_in_process(tflite_path, queries, core, warmup):
  """Latency of a raw-string file (`_timed`), one query per call."""
  os.sched_setaffinity(0, {core})
  from mixvocab_tf.export import tflite_conversion  # pylint: disable=g-import-not-at-top
  runner = tflite_conversion.TFLiteRunner(model_path=tflite_path,
                                          num_threads=1)
  return _timed(lambda query: runner([query]), queries, warmup)


def _builtin_latency_in_process(tflite_model, inputs, own_length, core,
                                warmup):
  """Latency of a builtin-ops file (`_timed`) on token-id inputs, the model
  only, one query per call: each at its own length (`own_length`, as a
  stock LiteRT app feeds it) or padded to the file's [1, seq_length] (as
  LiteRT.js runs it)."""
  os.sched_setaffinity(0, {core})
  from mixvocab_tf.export import builtin_model  # pylint: disable=g-import-not-at-top
  runner = builtin_model.BuiltinRunner(model_content=tflite_model,
                                       num_threads=1)
  fitted = [runner.fit(f) for f in inputs]
  if not own_length:
    fitted = [{name: np.pad(value, ((0, 0),
                                    (0, runner.seq_length - value.shape[1])))
               for name, value in f.items()} for f in fitted]
  return _timed(lambda features: runner.runner(**features), fitted, warmup)


def _arithmetic(name, features):
  """Mean tokens and encoder multiply-adds of a query (`flops.encoder_macs`).

  `raw`: each query at its own length, [CLS] and [SEP] included, as the
  raw-string file runs it (and the builtin file's "own length" rows);
  `builtin`: at `--seq_length`, the builtin file padded. Sizes are
  `_MODEL_SIZES`' (a `--student_saved_model` is taken to be a 6x96
  student).
  """
  from mixvocab_tf.core import flops  # pylint: disable=g-import-not-at-top
  layers, hidden, _, _ = _MODEL_SIZES[name]
  tokens = [int(np.sum(f["input_mask"])) for f in features]
  macs = lambda length: flops.encoder_macs(layers, hidden, 4 * hidden, length)
  return dict(raw_tokens=round(float(np.mean(tokens)), 2),
              raw_macs=round(float(np.mean([macs(t) for t in tokens]))),
              builtin_tokens=_SEQ_LENGTH.value,
              builtin_macs=macs(_SEQ_LENGTH.value))


def _in_new_process(function, *args):
  """`function(*args, core, warmup)` in a new Python process, as an app runs
  a model: without this process's TensorFlow, whose thread pools, pinned to
  the same core and still spinning after a conversion, took 5-10% of a
  6x96 student's query (0.62 against 0.57 ms for the same file)."""
  context = multiprocessing.get_context("spawn")
  with context.Pool(1) as pool:
    return pool.apply(function, args + (_CORE.value, _WARMUP.value))


def _latency(tflite_path, queries):
  return _in_new_process(_latency_in_process, tflite_path, queries)


def _builtin_latency(tflite_model, inputs, own_length):
  return _in_new_process(_builtin_latency_in_process, tflite_model, inputs,
                         own_length)


def main(argv):
  del argv
  os.sched_setaffinity(0, {_CORE.value})
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.config.threading.set_intra_op_parallelism_threads(1)
  tf.config.threading.set_inter_op_parallelism_threads(1)
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import assets
  from mixvocab_tf.export import builtin_model
  from mixvocab_tf.export import tflite_conversion
  from mixvocab_tf.datasets import intent_slot_files
  from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data

  # pylint: enable=g-import-not-at-top

  if _STUDENT_SAVED_MODEL.value:
    # The builtin files run at their export's fixed length: compare like
    # with like.
    from mixvocab_tf.export import saved_model_export  # pylint: disable=g-import-not-at-top
    length = saved_model_export.read_export_info(
        _STUDENT_SAVED_MODEL.value)["seq_length"]
    if length != _SEQ_LENGTH.value:
      raise app.UsageError(
          f"--student_saved_model was exported with seq_length {length}; pass "
          f"--seq_length={length} so that the other models' builtin files "
          f"run at the same length (now {_SEQ_LENGTH.value}).")
  output_dir = _OUTPUT_DIR.value or tempfile.mkdtemp(prefix="tflite_bench")
  os.makedirs(output_dir, exist_ok=True)
  train = intent_slot_files.read_intent_slot(assets.snips_dir("train"))
  labels = intent_slot_data.IntentSlotLabels.from_examples(train)
  calibration = [" ".join(w) for w in train.words[:_CALIBRATION.value]]
  valid = [" ".join(w) for w in
           intent_slot_files.read_intent_slot(assets.snips_dir("valid")).words]
  results = []
  inputs = {}  # model -> the builtin files' token ids of its queries
  arithmetic = {}  # model -> (tokens a query, its layers' multiply-adds)
  for name in _MODELS.value:
    export_dir = os.path.join(output_dir, f"{name}_savedmodel")
    if name == "student" and _STUDENT_SAVED_MODEL.value:
      export_dir = _STUDENT_SAVED_MODEL.value
    elif not os.path.exists(export_dir):
      _export(name, export_dir, labels)
    student = name == "student"
    quantizations = (_QUANTIZATIONS.value if student else
                     _LARGE_QUANTIZATIONS.value)
    queries = valid[:_QUERIES.value if student else _LARGE_QUERIES.value]
    for quantize in quantizations:
      start = time.time()
      tflite_model = tflite_conversion.convert_saved_model(
          export_dir, quantize, calibration)
      convert_seconds = time.time() - start
      path = os.path.join(output_dir, f"{name}_{quantize}.tflite")
      with open(path, "wb") as f:
        f.write(tflite_model)
      wall50, wall90, cpu50, cpu90 = _latency(path, queries)
      row = dict(model=name, quantize=quantize,
                 size_bytes=len(tflite_model),
                 tokenizer_bytes=_tokenizer_bytes(tflite_model),
                 p50_ms=wall50, p90_ms=wall90, cpu_p50_ms=cpu50,
                 cpu_p90_ms=cpu90, queries=len(queries),
                 convert_seconds=round(convert_seconds, 1))
      del tflite_model
      results.append(row)
      print(json.dumps(row), flush=True)
    for quantize in _BUILTIN.value:
      start = time.time()
      tflite_model = builtin_model.convert_builtin(export_dir, quantize)
      convert_seconds = time.time() - start
      with open(os.path.join(output_dir, f"{name}_{quantize}_builtin.tflite"),
                "wb") as f:
        f.write(tflite_model)
      if name not in inputs:
        inputs[name] = builtin_model.features(export_dir, queries)
      dynamic = builtin_model.BuiltinRunner(model_content=tflite_model).dynamic
      for own_length in (False, True) if dynamic else (False,):
        wall50, wall90, cpu50, cpu90 = _builtin_latency(
            tflite_model, inputs[name], own_length)
        label = f"{quantize} builtin" + (", own length" if own_length
                                          else "")
        row = dict(model=name, quantize=label, size_bytes=len(tflite_model),
                   tokenizer_bytes=0, p50_ms=wall50, p90_ms=wall90,
                   cpu_p50_ms=cpu50, cpu_p90_ms=cpu90, queries=len(queries),
                   convert_seconds=round(convert_seconds, 1))
        results.append(row)
        print(json.dumps(row), flush=True)
      del tflite_model
    if name not in inputs:
      inputs[name] = builtin_model.features(export_dir, queries)
    arithmetic[name] = _arithmetic(name, inputs[name])
    print(json.dumps(dict(model=name, **arithmetic[name])), flush=True)

  by_key = {(r["model"], r["quantize"]): r for r in results}
  ratios = {}
  for (name, quantize), row in by_key.items():
    student = by_key.get(("student", quantize))
    if name != "student" and student:
      for key in ("p50_ms", "cpu_p50_ms"):
        ratios[f"{name}/student {quantize} {key}"] = round(
            row[key] / student[key], 1)
  student = arithmetic.get("student")
  for name, row in arithmetic.items():
    if name != "student" and student:
      # What each latency ratio would be if both files ran nothing but their
      # encoder layers, at the same FLOP/s.
      for key in ("raw", "builtin"):
        ratios[f"{name}/student multiply-adds {key}"] = round(
            row[f"{key}_macs"] / student[f"{key}_macs"], 1)
  print("\n| model | quantize | size (MB) | tokenizer (MB) | p50 ms | p90 ms "
        "| CPU p50 ms | CPU p90 ms |\n|---|---|---:|---:|---:|---:|---:|---:|")
  for r in results:
    print(f"| {r['model']} | {r['quantize']} | {r['size_bytes'] / 1e6:.3f} | "
          f"{r['tokenizer_bytes'] / 1e6:.3f} | {r['p50_ms']} | {r['p90_ms']} "
          f"| {r['cpu_p50_ms']} | {r['cpu_p90_ms']} |")
  print(json.dumps({"ratios": ratios, "output_dir": output_dir}, indent=1))


if __name__ == "__main__":
  app.run(main)
