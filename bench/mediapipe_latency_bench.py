r"""p50 latency of text classifiers in MediaPipe Tasks, as an app runs them.

Loads each builtin .tflite (an export's `model_builtin.tflite`) in MediaPipe
Tasks' `TextClassifier` (its own WordPiece tokenizer from the metadata, then
the model; TensorFlow blocked, as on a device) and times `classify(text)`,
one text per call, the models alternating text by text so that other load
on the machine hits them alike. Prints each model's p50 / p90 ms and every
model's p50 over the first's. For example the same export's file before and
after a change:

  python bench/mediapipe_latency_bench.py --queries=queries.txt \
      --models=runs/a/export/model_builtin.tflite,runs/b/export/model_builtin.tflite

MediaPipe Tasks' text tasks run on one thread (XNNPACK on CPU).
"""

import json
import sys
import time

from absl import app
from absl import flags
import numpy as np

_MODELS = flags.DEFINE_list("models", None, "Builtin .tflite files.")
_QUERIES = flags.DEFINE_string("queries", None, "Texts, one per line.")
_LIMIT = flags.DEFINE_integer("limit", 300, "Texts timed.")
_WARMUP = flags.DEFINE_integer("warmup", 20, "Untimed calls first.")
flags.mark_flags_as_required(["models", "queries"])


def main(argv):
  del argv
  sys.modules["tensorflow"] = None  # An app has no TensorFlow.
  from mediapipe.tasks import python as mp_tasks  # pylint: disable=g-import-not-at-top
  from mediapipe.tasks.python import text as mp_text  # pylint: disable=g-import-not-at-top
  with open(_QUERIES.value, encoding="utf-8") as f:
    texts = [line.strip() for line in f if line.strip()][:_LIMIT.value]
  classifiers = [mp_text.TextClassifier.create_from_options(
      mp_text.TextClassifierOptions(
          base_options=mp_tasks.BaseOptions(model_asset_path=path)))
                 for path in _MODELS.value]
  for text in texts[:_WARMUP.value]:
    for classifier in classifiers:
      classifier.classify(text)
  times = [[] for _ in classifiers]
  labels = [[] for _ in classifiers]
  for text in texts:
    for i, classifier in enumerate(classifiers):
      start = time.perf_counter()
      result = classifier.classify(text)
      times[i].append(time.perf_counter() - start)
      categories = result.classifications[0].categories
      labels[i].append(max(categories, key=lambda c: c.score).category_name)
  for classifier in classifiers:
    classifier.close()
  ms = lambda values, q: round(1000 * float(np.percentile(values, q)), 3)
  rows = [{"model": path, "p50_ms": ms(t, 50), "p90_ms": ms(t, 90),
           "same_top1_as_first": sum(a == b for a, b in
                                     zip(labels[0], labels[i])) / len(texts)}
          for i, (path, t) in enumerate(zip(_MODELS.value, times))]
  for row in rows:
    row["p50_over_first"] = round(row["p50_ms"] / rows[0]["p50_ms"], 3)
  print(json.dumps({"texts": len(texts), "models": rows}, indent=1))


if __name__ == "__main__":
  app.run(main)
