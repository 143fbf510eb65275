"""Writes an intent-and-slot dataset of queries longer than the student reads.

The own-data job's student reads 48 WordPieces of a query ([CLS] and [SEP]
included); the job warns when a split holds longer queries and names the
bindings that lengthen both runs' sequences. This script makes such a set
from the SNIPS queries the package ships, without downloading one: each
query joins `--join` queries of one intent (their words, their slot tags),
so about 40% of them are longer than 48 pieces at the default 3.

The queries are made up: measure what a longer sequence buys on them, do not
read their scores as a result on real long queries.

  python bench/make_long_queries.py --output_dir=/tmp/long
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = '/tmp/long'" --model_dir=/tmp/long_run
"""

import argparse
import os
import random

from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files


def joined_queries(snips_split, count, join, rng):
  """`count` (words, tags, intent) of `join` queries of one intent each."""
  data = intent_slot_files.read_intent_slot(assets.snips_dir(snips_split))
  by_intent = {}
  for words, tags, intent in zip(data.words, data.tags, data.intents):
    by_intent.setdefault(intent, []).append((words, tags))
  intents = sorted(by_intent)
  rows = []
  for _ in range(count):
    intent = rng.choice(intents)
    parts = rng.sample(by_intent[intent], join)
    rows.append(([w for words, _ in parts for w in words],
                  [t for _, tags in parts for t in tags], intent))
  return rows


def write_goo(directory, rows):
  """The Goo et al. layout: seq.in, seq.out and label."""
  os.makedirs(directory, exist_ok=True)
  for name, column in (("seq.in", lambda row: " ".join(row[0])),
                       ("seq.out", lambda row: " ".join(row[1])),
                       ("label", lambda row: row[2])):
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
      f.write("".join(column(row) + "\n" for row in rows))


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--train", type=int, default=2000,
                      help="Train queries (joined from SNIPS train).")
  parser.add_argument("--valid", type=int, default=300,
                      help="Validation queries (joined from SNIPS valid).")
  parser.add_argument("--join", type=int, default=3,
                      help="SNIPS queries of one intent per query.")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  if args.join < 1 or args.train < 1 or args.valid < 1:
    parser.error("--join, --train and --valid must be at least 1.")
  rng = random.Random(args.seed)
  write_goo(os.path.join(args.output_dir, "train"),
            joined_queries("train", args.train, args.join, rng))
  write_goo(os.path.join(args.output_dir, "valid"),
            joined_queries("valid", args.valid, args.join, rng))
  print(f"Wrote {args.train} train and {args.valid} validation queries of "
        f"{args.join} SNIPS queries each to {args.output_dir}.")


if __name__ == "__main__":
  main()
