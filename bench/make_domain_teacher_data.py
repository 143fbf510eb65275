"""Writes two intent-and-slot datasets of one app, split by intent.

A team that has shipped one model of its app (its earlier intents) has a
teacher the own-data job fine-tuned on them; this script makes that
situation from the SNIPS queries the package ships, to measure what such a
teacher (`mixvocab-export --bert`, then `TEACHER`) gives a job on the app's
new intents:

- `<output_dir>/earlier`: SNIPS train and valid queries of `--earlier`
  intents (default: the music and books ones), without any query of
  `examples/intent_slot`;
- `<output_dir>/new`: `examples/intent_slot`'s train, dev and test queries
  of the other intents (a small labelled set, as a new feature has).

  python bench/make_domain_teacher_data.py --output_dir=/tmp/app
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = '/tmp/app/earlier'" --model_dir=/tmp/earlier
  mixvocab-export --model_dir=/tmp/earlier/teacher --bert \
      --export_dir=/tmp/teachers/earlier
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = '/tmp/app/new'" \
      --gin_bindings="TEACHER = '/tmp/teachers/earlier'" --model_dir=/tmp/new

The first job's teacher is all it needs (stop it once `teacher/DONE`
exists). No query of the new set's intents, and no query of the new set,
reaches the earlier teacher.
"""

import argparse
import os

from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files
from make_long_queries import write_goo  # bench/, beside this script

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EARLIER = ("AddToPlaylist", "PlayMusic", "RateBook", "SearchCreativeWork")


def rows(directory):
  """(words, tags, intent) of a Goo-layout split."""
  data = intent_slot_files.read_intent_slot(directory)
  return list(zip(data.words, data.tags, data.intents))


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--earlier", default=",".join(EARLIER),
                      help="The intents of the earlier model, comma-separated.")
  parser.add_argument("--examples",
                      default=os.path.join(_ROOT, "examples", "intent_slot"),
                      help="The small dataset whose other intents are new.")
  args = parser.parse_args()
  earlier = set(args.earlier.split(","))
  new = {split: [r for r in rows(os.path.join(args.examples, split))
                 if r[2] not in earlier] for split in ("train", "dev", "test")}
  taken = {" ".join(r[0]) for split in ("train", "dev", "test")
           for r in rows(os.path.join(args.examples, split))}
  known = {r[2] for r in rows(assets.snips_dir("train"))}
  if not earlier < known:
    parser.error(f"--earlier names intents SNIPS lacks: "
                 f"{sorted(earlier - known)}; it has {sorted(known)}.")
  for split, name in (("train", "train"), ("valid", "valid")):
    write_goo(os.path.join(args.output_dir, "earlier", name), [
        r for r in rows(assets.snips_dir(split))
        if r[2] in earlier and " ".join(r[0]) not in taken])
  for split, split_rows in new.items():
    write_goo(os.path.join(args.output_dir, "new", split), split_rows)
  print(f"Wrote {args.output_dir}/earlier ({', '.join(sorted(earlier))}) and "
        f"{args.output_dir}/new ({len(new['train'])} train, "
        f"{len(new['dev'])} dev, {len(new['test'])} test queries of "
        f"{', '.join(sorted(known - earlier))}).")


if __name__ == "__main__":
  main()
