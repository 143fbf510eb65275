"""Writes a Prodigy export (`prodigy db-out`) of an intent-and-slot dataset.

Each query of a Goo et al. dataset directory (`seq.in`, `seq.out`, `label`
in each split) becomes the line Prodigy writes for a task of a `blocks`
recipe of `ner_manual` and `choice`: its text, token objects, spans (with
token indices), the intent picked as `"accept": [intent]`, hashes, view id,
`"answer": "accept"`; `--rejected` lines, drawn with `--seed`, are answered
'reject' or 'ignore', as an annotator leaves some. No Prodigy is needed; it
shows what the own-data job reads (`docs/own_data_prodigy/`).

  python bench/make_prodigy_export.py --data=examples/intent_slot \
      --output=/tmp/prodigy/annotations.jsonl
  mixvocab-split-data --data=/tmp/prodigy/annotations.jsonl \
      --output_dir=/tmp/prodigy_data --seed=0
"""

import argparse
import json
import os
import random
import zlib

from mixvocab_tf.datasets import intent_slot_files


def prodigy_line(words, tags, intent, options, number):
  """One accepted task: the query's text, tokens, spans and intent."""
  text = " ".join(words)
  starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words))]
  tokens = [{"text": w, "start": s, "end": s + len(w), "id": i,
             "ws": i < len(words) - 1}
            for i, (w, s) in enumerate(zip(words, starts))]
  spans = []
  for i, tag in enumerate(tags):
    if tag.startswith("B-"):
      end = i + 1
      while end < len(tags) and tags[end] == "I-" + tag[2:]:
        end += 1
      spans.append({"start": starts[i],
                    "end": starts[end - 1] + len(words[end - 1]),
                    "token_start": i, "token_end": end - 1,
                    "label": tag[2:]})
  return {"text": text, "_input_hash": zlib.crc32(text.encode("utf-8")),
          "_task_hash": number, "tokens": tokens, "spans": spans,
          "options": options, "accept": [intent], "_view_id": "blocks",
          "answer": "accept", "_timestamp": 1700000000 + number}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--data", required=True,
                      help="A dataset directory of Goo split directories.")
  parser.add_argument("--splits", default="train,dev",
                      help="Its split directories to write, in order.")
  parser.add_argument("--output", required=True)
  parser.add_argument("--rejected", type=int, default=12)
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  queries = []
  for split in args.splits.split(","):
    data = intent_slot_files.read_intent_slot(os.path.join(args.data, split))
    queries += zip(data.words, data.tags, data.intents)
  options = [{"id": i, "text": i} for i in sorted({q[2] for q in queries})]
  lines = [prodigy_line(*query, options, number)
           for number, query in enumerate(queries)]
  rng = random.Random(args.seed)
  for line in rng.sample(lines, args.rejected):
    line["answer"] = rng.choice(["reject", "ignore"])
  os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
  with open(args.output, "w", encoding="utf-8") as f:
    f.writelines(json.dumps(line) + "\n" for line in lines)
  print(f"Wrote {args.output}: {len(lines)} lines, {args.rejected} answered "
        "reject or ignore.")


if __name__ == "__main__":
  main()
