r"""The main job on built-in defaults: the mixed-vocabulary method end to end.

  python -m mixvocab_tf.quickstart --output_dir=runs/quickstart

Steps (each one resumes: rerunning skips what is already in --output_dir):
  1. learn a ~5K student WordPiece vocabulary from the built-in public-domain
     corpus (Zhao et al., EACL 2021, Section 3) and compare it with the
     teacher's on held-out text;
  2. stream stage I mixed-vocabulary MLM batches (p_SV = 0.5, 20 masks of which
     at most 10 teacher) from the corpus and summarise them.

Training (stage I, stage II, fine-tuning), export and the report are added to
this job as the trainer grows; until then it stops after step 2 and says so.
"""

import json
import os
import time

from absl import app
from absl import flags
from absl import logging
import numpy as np

from mixvocab_tf import data

_OUTPUT_DIR = flags.DEFINE_string("output_dir", "runs/quickstart",
                                  "Where the job writes everything.")
_VOCAB_SIZE = flags.DEFINE_integer("vocab_size", 5000,
                                   "Target student vocabulary size.")
_NUM_BATCHES = flags.DEFINE_integer("num_batches", 50,
                                    "Stage I batches to stream and summarise.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 32, "Sequences per batch.")
_SEQ_LENGTH = flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")


def learn_student_vocabulary(output_dir, vocab_size):
  """Step 1: learns the student vocabulary, or reuses the one already there."""
  from mixvocab_tf.text import vocab  # pylint: disable=g-import-not-at-top
  path = os.path.join(output_dir, "student_vocab.txt")
  summary_path = os.path.join(output_dir, "vocab_summary.json")
  if os.path.exists(path) and os.path.exists(summary_path):
    logging.info("Student vocabulary already learned: %s", path)
    with open(summary_path, encoding="utf-8") as f:
      return path, json.load(f)
  lines = vocab.read_corpus_lines(data.builtin_corpus_files())
  train_lines, heldout = vocab.split_heldout(lines, 0.01)
  logging.info("Learning a %d-token student vocabulary from %d lines of the "
               "built-in corpus (about a minute)...", vocab_size,
               len(train_lines))
  start = time.time()
  tokens = vocab.learn_vocabulary_from_lines(train_lines, vocab_size)
  summary = vocab.vocabulary_summary(tokens, data.default_teacher_vocab(),
                                     heldout)
  summary["seconds"] = round(time.time() - start, 1)
  vocab.write_vocab(tokens, path + ".tmp")
  os.replace(path + ".tmp", path)
  with open(summary_path, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=2)
  return path, summary


def summarise_stage1_batches(student_vocab, num_batches, batch_size,
                             seq_length):
  """Step 2: streams stage I batches and returns their statistics."""
  from mixvocab_tf import text  # pylint: disable=g-import-not-at-top
  config = text.PretrainingInputConfig(
      input_files=data.builtin_corpus_files(), mode="mixed",
      seq_length=seq_length, output_word_ids=True)
  dataset = text.pretraining_dataset(config, data.default_teacher_vocab(),
                                     student_vocab, batch_size)
  masks, teacher_masks, fill, student_words, words = [], [], [], 0, 0
  start = None
  for i, batch in enumerate(dataset.take(num_batches + 1)):
    if i == 0:
      start = time.time()  # the first batch pays for building the graph
      continue
    weights = batch["masked_lm_weights"].numpy()
    masked_vocab = batch["masked_lm_vocab_ids"].numpy()
    masks.append(weights.sum(1))
    teacher_masks.append(((masked_vocab == 0) * weights).sum(1))
    fill.append(batch["input_mask"].numpy().mean(1))
    word_ids, vocab_ids = batch["word_ids"].numpy(), batch[
        "input_vocab_ids"].numpy()
    for row_words, row_vocab in zip(word_ids, vocab_ids):
      real = row_words >= 0
      _, first = np.unique(row_words[real], return_index=True)
      student_words += int(row_vocab[real][first].sum())
      words += len(first)
    if i % 10 == 0:
      logging.info("streamed %d/%d stage I batches", i, num_batches)
  seconds = time.time() - start
  masks, teacher_masks = np.concatenate(masks), np.concatenate(teacher_masks)
  return {
      "sequences": int(masks.size),
      "sequences_per_second": round(masks.size / seconds, 1),
      "seq_length": seq_length,
      "mean_fill": round(float(np.concatenate(fill).mean()), 4),
      "masked_per_sequence_mean": round(float(masks.mean()), 2),
      "masked_per_sequence_max": int(masks.max()),
      "teacher_masked_per_sequence_max": int(teacher_masks.max()),
      "student_word_share": round(student_words / max(words, 1), 4),
  }


def main(argv):
  del argv
  output_dir = _OUTPUT_DIR.value
  os.makedirs(output_dir, exist_ok=True)
  vocab_path, vocab_summary = learn_student_vocabulary(output_dir,
                                                       _VOCAB_SIZE.value)
  print("Student vocabulary:", json.dumps(vocab_summary, indent=2))
  batch_summary = summarise_stage1_batches(vocab_path, _NUM_BATCHES.value,
                                           _BATCH_SIZE.value,
                                           _SEQ_LENGTH.value)
  with open(os.path.join(output_dir, "stage1_batches.json"), "w",
            encoding="utf-8") as f:
    json.dump(batch_summary, f, indent=2)
  print("Stage I batches:", json.dumps(batch_summary, indent=2))
  print(f"Wrote {vocab_path} and summaries to {output_dir}. Training, "
        "export and the report are not part of this job yet.")


if __name__ == "__main__":
  app.run(main)
