"""Writes a sentence-pair dataset: do two SNIPS queries ask for the same intent?

The package's examples hold no sentence pairs. This script makes a set in
the own-data job's pair layout (CSV files with columns `text_a`, `text_b`,
`label`) from the SNIPS queries the package ships, without downloading one:
every other pair is two queries of one intent (`same_intent`), the others
two queries of two intents (`different_intent`), so the majority floor is
50%. It exercises the pair path end to end (the job, its files, the
`examples/web` page); the task is made up, so do not read its scores as a
result on a real pair task.

  python bench/make_intent_pairs.py --output_dir=/tmp/pairs
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = '/tmp/pairs'" --model_dir=/tmp/pairs_run
"""

import argparse
import csv
import os
import random

from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files


def intent_pairs(snips_split, count, rng):
  """`count` (text_a, text_b, label) rows, half of them of one intent."""
  data = intent_slot_files.read_intent_slot(assets.snips_dir(snips_split))
  by_intent = {}
  for words, intent in zip(data.words, data.intents):
    by_intent.setdefault(intent, []).append(" ".join(words))
  intents = sorted(by_intent)
  rows = []
  for index in range(count):
    if index % 2 == 0:
      intent = rng.choice(intents)
      rows.append((*rng.sample(by_intent[intent], 2), "same_intent"))
    else:
      first, second = rng.sample(intents, 2)
      rows.append((rng.choice(by_intent[first]),
                   rng.choice(by_intent[second]), "different_intent"))
  rng.shuffle(rows)
  return rows


def write_csv(path, rows):
  with open(path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["text_a", "text_b", "label"])
    writer.writerows(rows)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--train", type=int, default=2000,
                      help="Train pairs (from SNIPS train).")
  parser.add_argument("--valid", type=int, default=300,
                      help="Validation pairs (from SNIPS valid).")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  if args.train < 2 or args.valid < 2:
    parser.error("--train and --valid must be at least 2 (one pair of "
                 "each label).")
  rng = random.Random(args.seed)
  os.makedirs(args.output_dir, exist_ok=True)
  write_csv(os.path.join(args.output_dir, "train.csv"),
            intent_pairs("train", args.train, rng))
  write_csv(os.path.join(args.output_dir, "dev.csv"),
            intent_pairs("valid", args.valid, rng))
  print(f"Wrote {args.train} train and {args.valid} validation pairs of "
        f"SNIPS queries to {args.output_dir}.")


if __name__ == "__main__":
  main()
