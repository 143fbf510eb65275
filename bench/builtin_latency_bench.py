r"""p50 latency of an export's two .tflite files, in one process, interleaved.

The raw-string file (tokenizer inside, tensorflow_text's kernels) against the
builtin-ops file (token ids in, LiteRT builtins only; the app tokenizes), as
an own-data job writes them (`export/model_dynamic.tflite`,
`export/model_builtin.tflite`, `export/saved_model`). One query per call,
one interpreter thread, the two files alternating query by query so that
other load on the machine hits both alike. The builtin file is timed on the
ids of the export's own tokenizer, each query at its own length (padded to
the file's length for a file exported before its inputs took any length),
and also with Hugging Face `tokenizers` WordPiece in front (what an app's
tokenizer adds).

  python bench/builtin_latency_bench.py --export_dir=runs/mine/export \
      --queries=queries.txt [--limit=300]

Prints JSON: p50 / p90 ms of each, and builtin / raw-string p50.
"""

import json
import os
import time

from absl import app
from absl import flags
import numpy as np

from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import tflite_conversion

_EXPORT_DIR = flags.DEFINE_string("export_dir", None, "An own-data export.")
_QUERIES = flags.DEFINE_string("queries", None, "One text per line.")
_LIMIT = flags.DEFINE_integer("limit", 300, "Queries timed.")


def _ms(times, q):
  return round(1000 * float(np.percentile(times, q)), 3)


def main(argv):
  del argv
  export = _EXPORT_DIR.value
  with open(_QUERIES.value, encoding="utf-8") as f:
    queries = [line.strip() for line in f if line.strip()][:_LIMIT.value]
  raw = tflite_conversion.TFLiteRunner(
      os.path.join(export, "model_dynamic.tflite"), num_threads=1)
  path = os.path.join(export, "model_builtin.tflite")
  builtin = builtin_model.BuiltinRunner(path, num_threads=1)
  features = [builtin.fit(f) for f in builtin_model.features(
      os.path.join(export, "saved_model"), queries)]
  from tokenizers import BertWordPieceTokenizer  # pylint: disable=g-import-not-at-top
  vocab = builtin_model.read_metadata(open(path, "rb").read())["files"][
      "vocab.txt"].splitlines()
  wordpiece = BertWordPieceTokenizer({t: i for i, t in enumerate(vocab)},
                                     lowercase=True)
  times = {"raw_string": [], "builtin_model_only": [],
           "builtin_with_hf_tokenizer": []}
  for query, inputs in zip(queries * 2, features * 2):  # The first pass warms.
    start = time.perf_counter()
    raw([query])
    times["raw_string"].append(time.perf_counter() - start)
    start = time.perf_counter()
    builtin.runner(**inputs)
    times["builtin_model_only"].append(time.perf_counter() - start)
    start = time.perf_counter()
    ids = wordpiece.encode(query).ids[:builtin.seq_length]
    builtin.runner(**builtin.fit({"input_word_ids": [ids],
                                  "input_mask": [[1] * len(ids)],
                                  "input_type_ids": [[0] * len(ids)]}))
    times["builtin_with_hf_tokenizer"].append(time.perf_counter() - start)
  result = {name: {"p50_ms": _ms(t[len(queries):], 50),
                   "p90_ms": _ms(t[len(queries):], 90)}
            for name, t in times.items()}
  result["queries"] = len(queries)
  result["builtin_seq_length"] = builtin.seq_length
  result["builtin_own_length"] = builtin.dynamic
  result["builtin_over_raw_p50"] = round(
      result["builtin_model_only"]["p50_ms"] /
      result["raw_string"]["p50_ms"], 2)
  print(json.dumps(result, indent=1))


if __name__ == "__main__":
  flags.mark_flags_as_required(["export_dir", "queries"])
  app.run(main)
