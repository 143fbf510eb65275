"""How exported models answer text of another kind than their task's.

The own-data report answers 300 held-out sentences of the built-in corpus
(`out_of_scope.held_out_texts`) with the exported file; a model trained with
`OUT_OF_SCOPE = 'builtin'` saw other sentences of the same corpus, so this
script adds sources it never saw: 500 SST-2 dev sentences (movie reviews)
and 500 MNLI dev-sample premises (fiction, letters, government reports,
...), each of 3-20 words, lowercased and without punctuation as SNIPS
writes its queries, drawn with a fixed seed. For each model, side by side:
the share answered `out_of_scope` and the share given another label at a
score of 0.9 or more (`out_of_scope.off_topic`). The peer is the same job's
model without `OUT_OF_SCOPE`, given first.

  python bench/off_topic.py --glue_dir=../shared/data/glue \\
      --models=runs/base/export/model_dynamic.tflite,runs/oos/export/model_dynamic.tflite
"""

import argparse
import json
import os
import random
import re

from mixvocab_tf.datasets import out_of_scope
from mixvocab_tf.serving import predictor as predict_lib

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def query_like(texts, count, seed=0):
  """`count` distinct texts of 3-20 words, lowercased, punctuation dropped,
  drawn with `seed`."""
  found = []
  for text in texts:
    words = _WORD.findall(text.lower())
    if out_of_scope.MIN_WORDS <= len(words) <= out_of_scope.MAX_WORDS:
      found.append(" ".join(words))
  found = list(dict.fromkeys(found))
  return random.Random(seed).sample(found, min(count, len(found)))


def sources(glue_dir, count):
  """{name: texts} of the three sources."""
  with open(os.path.join(glue_dir, "SST-2", "dev.tsv"), encoding="utf-8") as f:
    reviews = [line.split("\t")[0] for line in f.read().splitlines()[1:]]
  with open(os.path.join(glue_dir, "MNLI", "dev_sample.json"),
            encoding="utf-8") as f:
    premises = [row["text_a"] for row in json.load(f).values()]
  return {"built-in corpus, held out": out_of_scope.held_out_texts(),
          "SST-2 dev": query_like(reviews, count),
          "MNLI premises": query_like(premises, count)}


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--models", required=True,
                      help="Comma-separated .tflite files or SavedModels.")
  parser.add_argument("--glue_dir", required=True,
                      help="GLUE root with SST-2/dev.tsv, MNLI/dev_sample.json.")
  parser.add_argument("--count", type=int, default=500)
  args = parser.parse_args()
  texts = sources(args.glue_dir, args.count)
  print("model\tsource\ttexts\tout_of_scope\tanother label >= "
        f"{out_of_scope.CONFIDENT}")
  for path in args.models.split(","):
    predictor = predict_lib.load_predictor(path)
    for name, chosen in texts.items():
      records = predictor.predict(chosen)
      key = "intent" if "intent" in records[0] else "label"
      counts = out_of_scope.off_topic(records, key)
      n = counts["texts"]
      print(f"{path}\t{name}\t{n}\t{100 * counts['out_of_scope'] / n:.1f}%\t"
            f"{100 * counts['confident'] / n:.1f}%")


if __name__ == "__main__":
  main()
