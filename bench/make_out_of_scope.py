"""Writes SNIPS with an `out_of_scope` intent: requests and other sentences.

A softmax over an app's intents gives every input one of them, often with a
high score (docs/SERVING.md, "Scoring an export on new labelled data"); the
remedy SERVING.md gives is a label of its own for what the app should not
answer. This script makes a set to measure that remedy, in the own-data
job's Goo layout (`train/` and `valid/` with `seq.in`, `seq.out`, `label`),
from what the package ships, without downloading anything: the SNIPS
queries (train, valid) plus sentences of the built-in corpus (novels,
inaugural addresses, State of the Union messages: none a SNIPS request),
lowercased, punctuation dropped as SNIPS writes its queries, 3-20 words,
every word tagged `O`, intent `out_of_scope`. Train and valid take
sentences from disjoint lines.

  python bench/make_out_of_scope.py --output_dir=/tmp/oos
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = '/tmp/oos'" --model_dir=/tmp/oos_run
"""

import argparse
import os
import random
import re

from make_long_queries import write_goo  # bench/, beside this script
from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files

OUT_OF_SCOPE = "out_of_scope"
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def corpus_sentences(min_words=3, max_words=20):
  """[(line number, words)] of the built-in corpus's sentences."""
  sentences = []
  line_number = 0
  for path in assets.builtin_corpus_files():
    with open(path, encoding="utf-8") as f:
      for line in f:
        line_number += 1
        for sentence in _SENTENCE_END.split(line.strip()):
          words = _WORD.findall(sentence.lower())
          if min_words <= len(words) <= max_words:
            sentences.append((line_number, words))
  return sentences


def split_rows(snips_split, others):
  """(words, tags, intent) of a SNIPS split plus `others` (word lists)."""
  data = intent_slot_files.read_intent_slot(assets.snips_dir(snips_split))
  rows = list(zip(data.words, data.tags, data.intents))
  rows += [(words, ["O"] * len(words), OUT_OF_SCOPE) for words in others]
  return rows


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--train", type=int, default=2000,
                      help="Out-of-scope sentences added to SNIPS train.")
  parser.add_argument("--valid", type=int, default=300,
                      help="Out-of-scope sentences added to SNIPS valid.")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  rng = random.Random(args.seed)
  sentences = corpus_sentences()
  lines = sorted({line for line, _ in sentences})
  rng.shuffle(lines)
  # Lines of valid sentences are never lines of train sentences.
  valid_lines = set(lines[:len(lines) // 5])
  pools = {True: [], False: []}
  for line, words in sentences:
    pools[line in valid_lines].append(words)
  if len(pools[False]) < args.train or len(pools[True]) < args.valid:
    parser.error(f"The corpus has {len(pools[False])} train and "
                 f"{len(pools[True])} valid sentences; ask for fewer.")
  train = split_rows("train", rng.sample(pools[False], args.train))
  valid = split_rows("valid", rng.sample(pools[True], args.valid))
  rng.shuffle(train)
  write_goo(os.path.join(args.output_dir, "train"), train)
  write_goo(os.path.join(args.output_dir, "valid"), valid)
  print(f"Wrote {len(train)} train and {len(valid)} valid queries "
        f"({args.train} and {args.valid} {OUT_OF_SCOPE}) to "
        f"{args.output_dir}.")


if __name__ == "__main__":
  main()
