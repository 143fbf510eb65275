r"""Learns a student WordPiece vocabulary (Zhao et al., EACL 2021, Section 3).

Learns on all but a held-out slice of the input (every 100th line by default),
writes the vocabulary, and prints a JSON summary on stdout that compares it
with the teacher's vocabulary on the held-out slice: size, share of student
tokens in the teacher vocabulary, WordPieces per word, [UNK] share. Progress
goes to stderr. With --prune_to_teacher the learned vocabulary is cut to its
intersection with the teacher's (the alternative of Section 6).

`mixvocab-build-vocab` (installed) or `python tools/build_vocab.py` (in a
checkout), the same flags. The shipped default student vocabulary is built
with (about a minute):

  python tools/build_vocab.py --vocab_size=5000 \
    --output=mixvocab_tf/assets/student_vocab.txt

Other corpora: --input takes comma-separated files and globs, e.g.

  mixvocab-build-vocab --input='corpus/*.txt,extra.txt' \
    --vocab_size=5000 --output=/tmp/vocab.txt
"""

import glob
import json
import os
import time

from absl import flags
from absl import logging

from mixvocab_tf import assets
from mixvocab_tf.cli import console
from mixvocab_tf.text import vocab
from mixvocab_tf.text import vocab_learning

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags (`run` defines them; importing this does not)."""
  flags.DEFINE_string(
      "input", None,
      "Comma-separated text files and globs (one paragraph per line). "
      "Default: the built-in public-domain corpus.")
  flags.DEFINE_integer(
      "vocab_size", 5000,
      "Target vocabulary size; the result is at most this.")
  flags.DEFINE_string("output", None, "Where to write vocab.txt.")
  flags.DEFINE_string(
      "teacher_vocab", None,
      "Teacher vocab.txt to compare with (and prune to). Default: the "
      "default teacher's.")
  flags.DEFINE_float(
      "heldout_fraction", 0.01,
      "Share of lines held out from learning (every n-th line) for the "
      "summary.")
  flags.DEFINE_bool(
      "prune_to_teacher", False,
      "Keep only the learned tokens that the teacher vocabulary also has.")
  flags.DEFINE_integer(
      "max_lines", None, "Read at most this many non-blank lines.")
  flags.DEFINE_integer(
      "max_unique_chars", 1000,
      "Alphabet size the learner keeps; each character costs two tokens.")


def expand_inputs(spec):
  """Files named by comma-separated paths and globs, in order, once each."""
  patterns = [p.strip() for p in spec.split(",") if p.strip()]
  if not patterns:
    raise ValueError(f"--input names no files; received {spec!r}.")
  files = []
  for pattern in patterns:
    matches = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
    if not matches:
      raise FileNotFoundError(f"--input: no file matches {pattern!r}.")
    files.extend(m for m in matches if m not in files)
  return files


def _teacher_vocab_path():
  if FLAGS.teacher_vocab:
    return FLAGS.teacher_vocab
  try:
    return assets.default_teacher_vocab()
  except FileNotFoundError as e:
    logging.warning("No teacher to compare with: %s", e)
    return None


def build(files, teacher_path):
  """Learns, writes and summarises the vocabulary; returns the summary."""
  start = time.time()
  lines = vocab_learning.read_corpus_lines(files, max_lines=FLAGS.max_lines)
  if not lines:
    raise ValueError(f"The input holds no text: {files}.")
  train, heldout = vocab_learning.split_heldout(lines,
                                                FLAGS.heldout_fraction)
  logging.info("Read %d lines from %d files: %d to learn from, %d held out.",
               len(lines), len(files), len(train), len(heldout))
  teacher = vocab.load_vocab(teacher_path) if teacher_path else None
  tokens = vocab_learning.learn_vocabulary_from_lines(
      train, FLAGS.vocab_size, max_unique_chars=FLAGS.max_unique_chars)
  result = {"input_files": files, "train_lines": len(train),
            "vocab_size_target": FLAGS.vocab_size, "learned_size": len(tokens)}
  if FLAGS.prune_to_teacher:
    if teacher is None:
      raise ValueError("--prune_to_teacher needs a teacher vocabulary: pass "
                       "--teacher_vocab or install the default teacher.")
    tokens = vocab_learning.prune_to_teacher(tokens, teacher)
    result["pruned_to_teacher"] = True
  vocab.write_vocab(tokens, FLAGS.output)
  logging.info("Wrote %d tokens to %s; summarising.", len(tokens),
               FLAGS.output)
  result.update({"output": FLAGS.output,
                 "fingerprint": vocab.vocab_fingerprint(tokens),
                 "teacher_vocab": teacher_path})
  result.update(vocab_learning.vocabulary_summary(tokens, teacher, heldout))
  result["seconds"] = round(time.time() - start, 1)
  return result


def _run():
  files = (expand_inputs(FLAGS.input) if FLAGS.input
           else assets.builtin_corpus_files())
  print(json.dumps(build(files, _teacher_vocab_path()), indent=2))


def main(argv):
  """The absl main of `mixvocab-build-vocab` (flags: `define_flags`)."""
  # A bad argument or input is the user's to fix: say what, not where.
  console.run_tool(argv, _run, (ValueError, FileNotFoundError))


def run():
  """The `mixvocab-build-vocab` console script."""
  define_flags()
  flags.mark_flag_as_required("output")
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
