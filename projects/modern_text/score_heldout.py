r"""Held-out masked-token loss of a packaged student on several texts, beside
one fixed unigram floor.

The package scores a student on the held-out blocks of its own corpus
beside the unigram floor of its own training text (`jobs.mlm_curve`). To
compare students pretrained on different corpora (the development corpus
alone, or with `make_corpus.py`'s modern text) on the same texts, this
scores each student, through its own recipe's input pipeline (student
segmentation, 32 x 64 tokens, 20 masks, seed 0, file order), on:

- the held-out blocks of the development corpus (every 10th block of 100
  lines: the split the shipped student was measured on), 50 batches as in
  its `metrics.json`;
- each `--heldout` file (`modern_heldout.txt`, `wikisplit_validation.txt`,
  `mnli_dev_sample.txt`), all of it;

each beside the unigram floor of the development corpus's train part (the
same floor for every student, so that only the students differ):

  python -m projects.modern_text.score_heldout \
      --student=mixvocab_tf/assets/pretrained_student \
      --corpus=PATH/TO/pretrain_corpus.txt \
      --heldout=projects/modern_text/corpus/modern_heldout.txt \
      --heldout=projects/modern_text/corpus/wikisplit_validation.txt \
      --heldout=projects/modern_text/corpus/mnli_dev_sample.txt \
      --output=projects/modern_text/results/shipped_student.json

`--student` is a packaged student (`package_student`'s folder: the shipped
one, or `<model_dir>/package/pretrained_student` of a
`pretrained_student.gin` run). About 2 minutes on 2 cores for the four
texts, most of it counting the floor's token frequencies.
"""

import argparse
import json
import os
import tempfile
import time

from mixvocab_tf.core import evaluation
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks.pretraining import mlm_eval
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.text import heldout

#: As the shipped student's metrics.json: every 10th block of 100 lines,
#: 50 batches of it.
HELDOUT_EVERY, BLOCK_LINES, CORPUS_BATCHES = 10, 100, 50


def student_task(student_dir, train_text):
  """The NoKD task that reads `student_dir`'s student with its own inputs
  (its unigram floor counted on `train_text`)."""
  with open(os.path.join(student_dir, "metrics.json"), encoding="utf-8") as f:
    metrics = json.load(f)
  inputs = dict(metrics["inputs"], input_files=[train_text])
  return nokd.NoKDTask(
      student=student_spec.StudentSpec(
          preset=metrics["preset"],
          vocab=os.path.join(student_dir, "student_vocab.txt")),
      inputs=mlm_inputs.MlmInputs(**inputs)), metrics


def score(student_dir, corpus, heldout_files, name=None):
  """{text name: loss, accuracy, masked tokens, floor, gap to the floor}."""
  with tempfile.TemporaryDirectory() as split_dir:
    heldout.split_files(corpus, split_dir, HELDOUT_EVERY, BLOCK_LINES)
    task, metrics = student_task(
        student_dir, os.path.join(split_dir, heldout.TRAIN_TEXT))
    model = task.build_model()
    evaluation.restore_model(task, model, student_dir)
    start = time.time()
    floors = mlm_eval.unigram_floors(task)
    texts = [("corpus_heldout_blocks",
              os.path.join(split_dir, heldout.HELDOUT_TEXT), CORPUS_BATCHES)]
    texts += [(os.path.splitext(os.path.basename(p))[0], p, None)
              for p in heldout_files]
    results = {}
    for name, path, batches in texts:
      r = mlm_eval.masked_word_accuracy(task, model, batches,
                                        input_files=[path], floors=floors)
      results[name] = {
          "loss": round(float(r["student_mlm/loss"]), 4),
          "accuracy": round(float(r["student_mlm/accuracy"]), 4),
          "unigram_loss": round(float(r["student_mlm/unigram_loss"]), 4),
          "unigram_accuracy": round(float(r["student_mlm/unigram_accuracy"]),
                                    4),
          "below_floor": round(float(r["student_mlm/unigram_loss"] -
                                     r["student_mlm/loss"]), 4),
          "masked_tokens": int(r["student_mlm/masked_tokens"]),
          "batches": int(r["eval_batches"]),
          "file": (f"{os.path.basename(corpus)} held-out blocks"
                   if path.startswith(split_dir) else os.path.basename(path))}
      print(name, json.dumps(results[name]), flush=True)
  return {"student": name or student_dir, "source_run": metrics.get("source_run"),
          "step": metrics.get("step"),
          "floor_text": f"train part of {os.path.basename(corpus)} (every "
                        f"{HELDOUT_EVERY}th block of {BLOCK_LINES} lines out)",
          "seconds": round(time.time() - start, 1), "texts": results}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--student", required=True,
                      help="A packaged student's folder.")
  parser.add_argument("--corpus", required=True,
                      help="The development corpus (pretrain_corpus.txt).")
  parser.add_argument("--heldout", action="append", default=[],
                      help="A held-out text file (repeatable).")
  parser.add_argument("--name", default=None,
                      help="What to call the student in the JSON (default: "
                      "its folder).")
  parser.add_argument("--output", default=None, help="Also write JSON here.")
  args = parser.parse_args(argv)
  result = score(args.student, args.corpus, args.heldout, args.name)
  if args.output:
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
      json.dump(result, f, indent=1)
      f.write("\n")


if __name__ == "__main__":
  main()
