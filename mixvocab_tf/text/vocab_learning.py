"""Learning a student WordPiece vocabulary, and judging one, offline.

Implements the student vocabulary of Zhao et al., "Extremely Small BERT Models
from Mixed-Vocabulary Training" (EACL 2021), Section 3: a WordPiece vocabulary
of about 5K tokens learned on the pretraining corpus with the teacher's
normalisation (BERT uncased basic tokenization), so that the student's
embedding table is small while most of its tokens (the paper reports 93.9%)
also occur in the teacher's 30K vocabulary. `prune_to_teacher` builds the
alternative of Section 6, the intersection with the teacher's vocabulary.

Learning uses tensorflow_text's WordPiece learner; what this module adds is
the guarantee that every printable ASCII character is in the vocabulary, whole
and as a `##` piece, so that ASCII text never becomes [UNK], and a size that
stays within the requested `vocab_size` after that guarantee is met.

Used by `tools/build_vocab.py` and the quickstart's vocabulary step; training
and serving only load vocabularies (`vocab`), so they never import the
learner.
"""

import collections
import os
import time
from typing import Iterable, Optional, Sequence, Union

from absl import logging
import tensorflow as tf
from tensorflow_text.python.ops import bert_tokenizer
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece

SPECIAL_TOKENS = vocab_lib.SPECIAL_TOKENS
SUFFIX_INDICATOR = vocab_lib.SUFFIX_INDICATOR
UNK = vocab_lib.UNK

# Printable ASCII without space (which never reaches a vocabulary) and without
# A-Z: the vocabulary is uncased, every tokenizer that uses it lower-cases
# first (the teacher's uncased vocabulary has no A-Z either), so upper-case
# tokens would be embedding rows that no input can reach.
ASCII_CHARS = tuple(
    chr(c) for c in range(0x21, 0x7F) if not "A" <= chr(c) <= "Z")


def ascii_tokens() -> list[str]:
  """The tokens the ASCII guarantee requires: each char whole and as ##char."""
  return list(ASCII_CHARS) + [SUFFIX_INDICATOR + c for c in ASCII_CHARS]


def missing_ascii_tokens(tokens: Iterable[str]) -> list[str]:
  """The tokens of `ascii_tokens()` that `tokens` lacks."""
  present = set(tokens)
  return [t for t in ascii_tokens() if t not in present]


def read_corpus_lines(files: Union[str, Sequence[str]],
                      max_lines: Optional[int] = None) -> list[str]:
  """Non-blank lines of text files (BERT pretraining layout), stripped."""
  if isinstance(files, (str, os.PathLike)):
    files = [files]
  if not files:
    raise ValueError("No input files given.")
  lines = []
  for path in files:
    if not os.path.isfile(path):
      raise FileNotFoundError(f"Input file not found: {path}")
    with open(path, encoding="utf-8") as f:
      try:
        for line in f:
          line = line.strip()
          if line:
            lines.append(line)
            if max_lines is not None and len(lines) >= max_lines:
              return lines
      except UnicodeDecodeError as e:
        raise ValueError(f"Input file {path} is not UTF-8: {e}") from e
  return lines


def split_heldout(lines: Sequence[str], heldout_fraction: float = 0.01):
  """Splits off every (1/fraction)-th line, deterministically.

  Every n-th line rather than a tail, so that the held-out text samples every
  document and source of the corpus, not only the last one.

  Args:
    lines: the corpus lines.
    heldout_fraction: share of lines to hold out, in [0, 0.5].

  Returns:
    (train_lines, heldout_lines).
  """
  if not 0 <= heldout_fraction <= 0.5:
    raise ValueError("heldout_fraction must be in [0, 0.5]; received "
                     f"{heldout_fraction}.")
  if heldout_fraction == 0:
    return list(lines), []
  period = max(2, round(1 / heldout_fraction))
  train = [l for i, l in enumerate(lines) if i % period != period - 1]
  heldout = list(lines[period - 1::period])
  return train, heldout


def _basic_tokenizer():
  # The teacher's normalisation: lower case, NFD, accents stripped, split on
  # whitespace and punctuation (BERT uncased basic tokenization).
  return bert_tokenizer.BasicTokenizer(lower_case=True)


def count_words(lines: Sequence[str], batch_size: int = 1024,
                log_every_s: float = 30.0) -> collections.Counter:
  """Counts the words (basic-tokenizer tokens) of `lines`."""
  tokenizer = _basic_tokenizer()
  dataset = tf.data.Dataset.from_tensor_slices(tf.constant(list(lines)))
  dataset = dataset.batch(batch_size).map(tokenizer.tokenize)
  num_batches = -(-len(lines) // batch_size)
  start = last_log = time.time()

  def batches():
    nonlocal last_log
    for i, words in enumerate(dataset):
      yield words
      if time.time() - last_log > log_every_s:
        last_log = time.time()
        logging.info("Counting words: batch %d of %d, %.0f s.", i + 1,
                     num_batches, last_log - start)

  try:
    return learner.count_words(batches())
  except StopIteration:
    # tensorflow_text's count_words peeks at the first word to decode bytes,
    # and raises this when there is none.
    return collections.Counter()


def learn_vocabulary_from_lines(
    lines: Sequence[str],
    vocab_size: int = 5000,
    *,
    reserved_tokens: Sequence[str] = SPECIAL_TOKENS,
    max_unique_chars: int = 1000,
    learn_params: Optional[dict] = None) -> list[str]:
  """Learns a WordPiece vocabulary of at most `vocab_size` tokens.

  Args:
    lines: the training text, one line per element.
    vocab_size: the target size; the learner stops within about 5% below it.
    reserved_tokens: tokens placed first, in this order (ids 0, 1, ...).
    max_unique_chars: alphabet size the learner keeps (its own default); each
      kept character costs two tokens (whole and ##), so lower it for corpora
      with many rare scripts.
    learn_params: further keyword arguments of tensorflow_text's
      `wordpiece_tokenizer_learner_lib.learn` (e.g. `lower_thresh`,
      `num_iterations`).

  Returns:
    The tokens: `reserved_tokens`, then the learned vocabulary, then any
    printable ASCII character (whole or ##) the corpus did not supply.

  Raises:
    ValueError: `lines` is empty or holds no words, or `vocab_size` cannot hold
      the reserved tokens and the characters.
  """
  reserved_tokens = list(reserved_tokens)
  minimum = len(reserved_tokens) + len(ascii_tokens())
  if vocab_size < minimum:
    raise ValueError(
        f"vocab_size must be at least {minimum} to hold the "
        f"{len(reserved_tokens)} reserved tokens and the {len(ASCII_CHARS)} "
        f"printable ASCII characters whole and as ## pieces; received "
        f"{vocab_size}.")
  if not lines:
    raise ValueError("No text to learn a vocabulary from: the input is empty.")
  learn_params = dict(learn_params or {})
  learn_params.setdefault("max_unique_chars", max_unique_chars)

  # This is tensorflow_text's `bert_vocab_from_dataset` (basic tokenizer,
  # `count_words`, `learn`) taken apart, so that the word counts, computed
  # once, also tell which ASCII characters the learner will not supply: their
  # tokens are subtracted from the learner's target so the result still fits.
  start = time.time()
  word_counts = count_words(lines)
  if not word_counts:
    raise ValueError("No text to learn a vocabulary from: the input holds no "
                     "words.")
  logging.info("Counted %d distinct words (%d in all) in %d lines, %.0f s.",
               len(word_counts), sum(word_counts.values()), len(lines),
               time.time() - start)
  alphabet = learner.get_allowed_chars(
      learner.get_input_words(word_counts.items(), reserved_tokens,
                              learn_params.get("max_token_length", 50)),
      learn_params["max_unique_chars"])
  reserve = 2 * sum(c not in alphabet for c in ASCII_CHARS)
  if len(reserved_tokens) + 2 * len(alphabet) + reserve > vocab_size:
    raise ValueError(
        f"vocab_size must be at least "
        f"{len(reserved_tokens) + 2 * len(alphabet) + reserve} to hold the "
        f"reserved tokens, the corpus's {len(alphabet)} characters and the "
        f"printable ASCII characters, each whole and as a ## piece; received "
        f"{vocab_size}. Lower max_unique_chars or raise vocab_size.")
  logging.info("Learning WordPieces: target %d (%d kept for ASCII), "
               "alphabet %d.", vocab_size - reserve, reserve, len(alphabet))
  vocab = learner.learn(word_counts.items(), vocab_size - reserve,
                        reserved_tokens, **learn_params)
  logging.info("Learned %d tokens in %.0f s.", len(vocab), time.time() - start)
  vocab = vocab + missing_ascii_tokens(vocab)
  return _trim(vocab, vocab_size, protected=set(reserved_tokens))


def _trim(vocab, vocab_size, protected):
  """Drops the rarest multi-character tokens until `vocab` fits.

  The learner lists its learned tokens by decreasing count after the single
  characters, so the tail holds the rarest. Characters stay: with every
  character present any word still has a segmentation.
  """
  excess = len(vocab) - vocab_size
  if excess <= 0:
    return vocab
  drop = set()
  for token in reversed(vocab):
    if len(drop) == excess:
      break
    stem = token[len(SUFFIX_INDICATOR):] if token.startswith(
        SUFFIX_INDICATOR) else token
    if token not in protected and len(stem) > 1:
      drop.add(token)
  if len(drop) < excess:
    raise ValueError(f"vocab_size {vocab_size} cannot hold the reserved tokens "
                     f"and the characters ({len(vocab) - len(drop)} tokens).")
  logging.info("Dropped the %d rarest tokens to fit vocab_size %d.", excess,
               vocab_size)
  return [t for t in vocab if t not in drop]


def learn_vocabulary(files: Union[str, Sequence[str]],
                     vocab_size: int = 5000,
                     *,
                     max_lines: Optional[int] = None,
                     **kwargs) -> list[str]:
  """Learns a vocabulary from text files; see `learn_vocabulary_from_lines`."""
  return learn_vocabulary_from_lines(
      read_corpus_lines(files, max_lines=max_lines), vocab_size, **kwargs)


def prune_to_teacher(student_tokens: Sequence[str],
                     teacher_tokens: Sequence[str],
                     reserved_tokens: Sequence[str] = SPECIAL_TOKENS
                    ) -> list[str]:
  """The student tokens that the teacher also has, in student order.

  The alternative of Section 6: a student vocabulary inside the teacher's, so
  every student token has a teacher embedding to start from. The ASCII
  guarantee holds only as far as the teacher's vocabulary has those tokens
  (the uncased BERT vocabulary has them all); `missing_ascii_tokens` on the
  result says what was lost. Reserved tokens are kept even where the teacher
  spells them differently, so the result stays a loadable vocabulary.
  """
  teacher = set(teacher_tokens)
  keep = teacher | set(reserved_tokens)
  return [t for t in student_tokens if t in keep]


def segmentation_stats(tokens: Sequence[str], lines: Sequence[str],
                       batch_size: int = 512) -> dict:
  """Words, WordPieces per word and [UNK] share of `lines` under `tokens`.

  A word is a token of the uncased BERT basic tokenizer; the pieces come from
  tensorflow_text's BertTokenizer with the same normalisation. A word with no
  segmentation becomes one [UNK] piece, so the [UNK] share is per word.
  """
  tokens = list(tokens)
  tokenizer = wordpiece.reference_bert_tokenizer(tokens)
  unk_id = tokens.index(UNK)
  words = pieces = unk_words = 0
  for i in range(0, len(lines), batch_size):
    # [batch, (words), (pieces)] -> [words, (pieces)].
    ids = tokenizer.tokenize(tf.constant(list(lines[i:i + batch_size])))
    ids = ids.merge_dims(0, 1)
    words += int(ids.nrows())
    pieces += int(tf.size(ids.flat_values))
    unk_words += int(tf.reduce_sum(tf.cast(
        tf.reduce_any(tf.equal(ids, unk_id), axis=1), tf.int64)))
  return {
      "words": words,
      "pieces_per_word": pieces / words if words else None,
      "unk_share": unk_words / words if words else None,
  }


def vocabulary_summary(student: vocab_lib.PathOrTokens,
                       teacher: Optional[vocab_lib.PathOrTokens],
                       heldout_lines: Sequence[str]) -> dict:
  """Compares a student vocabulary with the teacher's on held-out text.

  Args:
    student: the student vocabulary (path or tokens).
    teacher: the teacher vocabulary, or None to describe the student alone.
    heldout_lines: text not used to learn the student vocabulary.

  Returns:
    A JSON-ready dict: `student_size`, `student_missing_ascii` (tokens of the
    ASCII guarantee it lacks), `heldout_lines`, `heldout_words`, and
    `student_pieces_per_word`, `student_unk_share` (share of held-out words
    that map to [UNK]); with a teacher also `teacher_size`,
    `student_in_teacher` (share of student tokens the teacher has; the paper
    reports 0.939), `teacher_pieces_per_word` and `teacher_unk_share`.
  """
  student = vocab_lib.load_vocab(student)
  stats = segmentation_stats(student, heldout_lines)
  summary = {
      "student_size": len(student),
      "student_missing_ascii": len(missing_ascii_tokens(student)),
      "heldout_lines": len(heldout_lines),
      "heldout_words": stats["words"],
      "student_pieces_per_word": stats["pieces_per_word"],
      "student_unk_share": stats["unk_share"],
  }
  if teacher is not None:
    teacher = vocab_lib.load_vocab(teacher)
    teacher_set = set(teacher)
    teacher_stats = segmentation_stats(teacher, heldout_lines)
    summary.update({
        "teacher_size": len(teacher),
        "student_in_teacher": sum(t in teacher_set for t in student) /
                              len(student),
        "teacher_pieces_per_word": teacher_stats["pieces_per_word"],
        "teacher_unk_share": teacher_stats["unk_share"],
    })
  return summary
