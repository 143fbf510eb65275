"""Writes a many-class text classification set of real queries, from SNIPS.

The own-data job is promised for a CSV of about 15,000 short queries over
150 intents, where a 6 x 96 student must stay close to its teacher. SNIPS
has real queries but only 7 intents, which both models get almost right.
This script makes a harder set from the same queries: the label of a query
is its intent together with the set of slot types it mentions, e.g.
`AddToPlaylist|artist+playlist`. Classes differ by a word or two (is there
an artist? a playlist owner?), as the intents of a fine-grained set do.

Classes with fewer than --min_train training queries are dropped. The SNIPS
train split is shuffled (seed 0) into train and validation (--valid_fraction);
the SNIPS valid split, with its labels not in train left in, becomes test, so
the run also shows how unseen labels are counted.

  python bench/make_fine_grained_intents.py \\
      --snips_dir=/path/to/snips --output_dir=/tmp/snips_fine
  python -m mixvocab_tf.train --gin_file=own_data.gin \\
      --gin_bindings="DATA_DIR = '/tmp/snips_fine'" --model_dir=/tmp/snips_fine_run
"""

import argparse
import collections
import csv
import os
import random


def read_split(directory):
  """[(query, fine-grained label)] of one SNIPS split directory."""
  def lines(name):
    with open(os.path.join(directory, name), encoding="utf-8") as f:
      return f.read().splitlines()
  examples = []
  for words, tags, intent in zip(lines("seq.in"), lines("seq.out"),
                                 lines("label")):
    slots = sorted({tag[2:] for tag in tags.split() if tag.startswith("B-")})
    examples.append((words, f"{intent}|{'+'.join(slots) or 'none'}"))
  return examples


def write_csv(path, examples):
  with open(path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["text", "label"])
    writer.writerows(examples)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--snips_dir", required=True,
                      help="SNIPS in the Goo et al. layout: train/, valid/.")
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--min_train", type=int, default=20,
                      help="Keep classes with at least this many queries in "
                      "SNIPS train.")
  parser.add_argument("--valid_fraction", type=float, default=0.2)
  args = parser.parse_args()

  train = read_split(os.path.join(args.snips_dir, "train"))
  counts = collections.Counter(label for _, label in train)
  kept = {label for label, n in counts.items() if n >= args.min_train}
  train = [example for example in train if example[1] in kept]
  random.Random(0).shuffle(train)
  n_valid = int(len(train) * args.valid_fraction)
  splits = {"train": train[n_valid:], "validation": train[:n_valid],
            "test": read_split(os.path.join(args.snips_dir, "valid"))}
  os.makedirs(args.output_dir, exist_ok=True)
  for name, examples in splits.items():
    write_csv(os.path.join(args.output_dir, f"{name}.csv"), examples)
  unseen = sum(label not in kept for _, label in splits["test"])
  top = max(collections.Counter(l for _, l in splits["train"]).values())
  print(f"{len(kept)} classes; train {len(splits['train'])}, validation "
        f"{n_valid}, test {len(splits['test'])} ({unseen} with a label train "
        f"lacks); largest class {top / len(splits['train']):.1%} of train; "
        f"written to {args.output_dir}")


if __name__ == "__main__":
  main()
