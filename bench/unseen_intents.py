"""How a model answers requests for an intent it was not trained on.

`bench/off_topic.py` measures text of another kind (prose, reviews); an
app's users also ask for things of its own kind that it does not do
("what's the weather" to a music app). This script writes `--data` (Goo
layout, every split) without `--intent`, runs the own-data job on it
without `OUT_OF_SCOPE` and with `OUT_OF_SCOPE = 'builtin'`, and has each
job's exported file answer `--count` queries of the left-out intent drawn
from `--unseen_data` (default: the SNIPS copy the package ships) that
`--data` does not hold. With `--logged_intent`, that intent is left out
too and `--logged` of its queries stand for the requests of other kinds an
app's logs hold: two more jobs take them as `OUT_OF_SCOPE`, alone and after
the built-in sentences, and its other queries are measured as well.
Printed for each job and source: the share answered `out_of_scope` and the
share given one of the trained intents at a score of 0.9 or more
(`out_of_scope.off_topic`), beside the file's validation scores (from the
job's report); the peer is the job without `OUT_OF_SCOPE`.

  python bench/unseen_intents.py --data=examples/intent_slot \\
      --intent=GetWeather --logged_intent=BookRestaurant \\
      --output_dir=/tmp/unseen

The jobs resume: a rerun with the same arguments finishes what an
interrupted one left and measures again.
"""

import argparse
import json
import os
import random
import subprocess
import sys

from make_long_queries import write_goo  # bench/, beside this script
from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import out_of_scope
from mixvocab_tf.serving import predictor as predict_lib

#: The splits' directory names a Goo dataset may use.
_SPLITS = ("train", "valid", "dev", "test")


def rows_of(path):
  """[(words, tags, intent)] of a Goo split directory."""
  data = intent_slot_files.read_intent_slot(path)
  return list(zip(data.words, data.tags, data.intents))


def without_intents(data_dir, intents, output_dir):
  """Writes every split of `data_dir` without `intents`' queries; returns
  how many queries each split kept."""
  kept = {}
  for split in _SPLITS:
    path = os.path.join(data_dir, split)
    if os.path.isdir(path):
      rows = [row for row in rows_of(path) if row[2] not in intents]
      write_goo(os.path.join(output_dir, split), rows)
      kept[split] = len(rows)
  return kept


def unseen_queries(unseen_dirs, data_dir, intent, count, seed=0):
  """`count` distinct queries of `intent` from `unseen_dirs` that no split
  of `data_dir` holds, drawn with `seed`."""
  known = set()
  for split in _SPLITS:
    path = os.path.join(data_dir, split)
    if os.path.isdir(path):
      known.update(" ".join(row[0]) for row in rows_of(path))
  found = []
  for path in unseen_dirs:
    found += [" ".join(row[0]) for row in rows_of(path) if row[2] == intent]
  found = [query for query in dict.fromkeys(found) if query not in known]
  if not found:
    raise SystemExit(f"No query of intent {intent!r} in {unseen_dirs} that "
                     f"{data_dir} does not hold.")
  return random.Random(seed).sample(found, min(count, len(found)))


def run_job(data_dir, model_dir, out_of_scope_option):
  """Runs (or resumes) the own-data job, `OUT_OF_SCOPE` bound to
  `out_of_scope_option` (a source or a list of them) unless it is None;
  returns its dynamic-range .tflite."""
  command = [sys.executable, "-m", "mixvocab_tf.train",
             "--gin_file=own_data.gin",
             f"--gin_bindings=DATA_DIR = '{data_dir}'",
             f"--model_dir={model_dir}"]
  if out_of_scope_option:
    command.append(f"--gin_bindings=OUT_OF_SCOPE = {out_of_scope_option!r}")
  print("Running:", " ".join(command), flush=True)
  subprocess.run(command, check=True)
  return os.path.join(model_dir, "export", "model_dynamic.tflite")


def validation_scores(model_dir):
  """The exported file's validation intent accuracy and slot F1, from the
  job's report (`report/summary.json`)."""
  with open(os.path.join(model_dir, "report", "summary.json"),
            encoding="utf-8") as f:
    rows = json.load(f)["rows"]
  # Each row: [model, split, parameters, intent accuracy, slot F1].
  row = next(row for row in rows
             if row[0].startswith("student .tflite") and row[1] == "validation")
  return float(row[3]), float(row[4])


def write_texts(path, texts):
  """Writes `texts`, one a line, to `path`; returns `path`."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write("".join(text + "\n" for text in texts))
  return path


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--data", required=True,
                      help="An intent-and-slot dataset, Goo layout.")
  parser.add_argument("--intent", required=True,
                      help="The intent left out and measured.")
  parser.add_argument("--logged_intent", default=None,
                      help="An intent also left out, `--logged` of whose "
                      "queries stand for requests the app's logs hold.")
  parser.add_argument("--logged", type=int, default=100)
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--unseen_data", default=None,
                      help="Comma-separated Goo split directories to draw "
                      "the left-out intents' queries from (default: the "
                      "package's SNIPS train and valid).")
  parser.add_argument("--count", type=int, default=300)
  args = parser.parse_args()
  if args.logged_intent == args.intent:
    parser.error("--logged_intent must be another intent than --intent.")
  if args.logged < 1 or args.count < 1:
    parser.error("--logged and --count must be at least 1.")
  unseen_dirs = (args.unseen_data.split(",") if args.unseen_data else
                 [assets.snips_dir("train"), assets.snips_dir("valid")])
  left_out = [args.intent] + ([args.logged_intent] if args.logged_intent
                              else [])
  data_dir = os.path.abspath(os.path.join(args.output_dir, "data"))
  kept = without_intents(args.data, left_out, data_dir)
  print(f"{', '.join(left_out)} left out: {json.dumps(kept)}", flush=True)
  sources = {f"{args.intent} (unseen)": unseen_queries(
      unseen_dirs, args.data, args.intent, args.count)}
  arms = {"none": None, "builtin": out_of_scope.BUILTIN}
  if args.logged_intent:
    queries = unseen_queries(unseen_dirs, args.data, args.logged_intent,
                             args.logged + args.count)
    logged, others = queries[:args.logged], queries[args.logged:]
    sources[f"{args.logged_intent} (others than the file's)"] = others
    logged_path = write_texts(
        os.path.abspath(os.path.join(args.output_dir, "logged.txt")), logged)
    arms[f"{len(logged)} {args.logged_intent}"] = logged_path
    arms[f"builtin + {len(logged)} {args.logged_intent}"] = [
        out_of_scope.BUILTIN, logged_path]
  sources["built-in corpus, held out"] = out_of_scope.held_out_texts()
  results = []
  for i, (name, option) in enumerate(arms.items()):
    model_dir = os.path.join(args.output_dir, f"run{i}")
    model = run_job(data_dir, model_dir, option)
    predictor = predict_lib.load_predictor(model)
    scores = validation_scores(model_dir)
    for source, texts in sources.items():
      counts = out_of_scope.off_topic(predictor.predict(texts), "intent")
      n = counts["texts"]
      results.append((name, *scores, source, n,
                      100 * counts["out_of_scope"] / n,
                      100 * counts["confident"] / n))
  print("OUT_OF_SCOPE\tvalid intent\tvalid slot F1\tqueries\ttexts\t"
        f"out_of_scope\tanother intent >= {out_of_scope.CONFIDENT}")
  for name, accuracy, f1, source, n, oos, confident in results:
    print(f"{name}\t{accuracy:.1f}\t{f1:.1f}\t{source}\t{n}\t{oos:.1f}%\t"
          f"{confident:.1f}%")


if __name__ == "__main__":
  main()
