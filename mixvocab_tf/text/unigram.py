"""The unigram floor of a masked-LM loss: what word frequencies alone give.

Masked positions are drawn uniformly over a sequence's tokens, so a model
that has learned only how often each token occurs (and nothing of context)
reaches the cross-entropy of the token distribution of its training text, and
the accuracy of always guessing the most frequent token. Every masked-LM
number the package reports stands beside this floor, computed on exactly the
same masked tokens: a loss at or above it means the model learned word
frequencies and little else.

Frequencies are counted in the segmentation of one vocabulary over the
training text (every word cut with that vocabulary, as in stage II; in mixed
input each word's vocabulary is drawn independently of the word, so the
share of each token among that vocabulary's tokens is the same). Counts get
add-one smoothing so that a token unseen in training has a finite cost.
"""

import functools
import os
from typing import Dict, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

from mixvocab_tf.text import mixed_vocab_tokenizer
from mixvocab_tf.text import pretraining_input
from mixvocab_tf.text import vocab as vocab_lib


def token_counts(input_files: Union[str, Sequence[str]], vocab,
                 lines_per_batch: int = 1024) -> np.ndarray:
  """Occurrences of every token of `vocab` in `input_files`.

  Args:
    input_files: text files or globs (comma-separated string or list).
    vocab: a vocab.txt path or a list of tokens.
    lines_per_batch: lines tokenized per call.

  Returns:
    int64 [vocab size] counts (special tokens are never counted: the text
    has none).
  """
  files = pretraining_input.expand_files(input_files)
  tokens = vocab_lib.load_vocab(vocab)
  return _cached_counts(tuple(files), tuple(_mtime(f) for f in files),
                        tuple(tokens), int(lines_per_batch)).copy()


def _mtime(path):
  return os.stat(path).st_mtime_ns


@functools.lru_cache(maxsize=8)
def _cached_counts(files, mtimes, tokens, lines_per_batch):
  del mtimes  # Part of the cache key only: an edited file is counted again.
  # Both slots hold the same vocabulary: p_student=0 cuts every word with it.
  tokenizer = mixed_vocab_tokenizer.MixedVocabTokenizer(
      list(tokens), list(tokens), p_student=0.0)

  @tf.function(autograph=False)
  def count(lines):
    ids, _ = tokenizer.tokenize_words(lines)
    return tf.math.bincount(ids.flat_values, minlength=len(tokens),
                            maxlength=len(tokens), dtype=tf.int64)

  counts = np.zeros(len(tokens), np.int64)
  lines = tf.data.TextLineDataset(list(files)).batch(lines_per_batch)
  for batch in lines:
    counts += count(batch).numpy()
  return counts


class UnigramFloor:
  """Scores masked tokens with token frequencies alone.

  Example:
  ```python
  floor = UnigramFloor.from_files("train.txt", "student_vocab.txt")
  loss, accuracy = floor.score(masked_lm_ids, masked_lm_weights)
  ```

  Args:
    counts: int [vocab size] token occurrences in the training text.
  """

  def __init__(self, counts):
    counts = np.asarray(counts, np.float64)
    if counts.ndim != 1 or counts.size == 0 or (counts < 0).any():
      raise ValueError("counts must be a non-empty 1-d array of non-negative "
                       f"numbers; received shape {counts.shape}.")
    self.counts = counts
    smoothed = counts + 1.0
    self.log_probs = np.log(smoothed / smoothed.sum())
    self.most_frequent = int(np.argmax(counts))

  @classmethod
  def from_files(cls, input_files, vocab) -> "UnigramFloor":
    return cls(token_counts(input_files, vocab))

  def sums(self, ids, weights) -> Tuple[float, float, float]:
    """(cross-entropy sum, token count, correct count) over weighted ids."""
    ids = np.asarray(ids)
    weights = np.asarray(weights, np.float64)
    safe = np.clip(ids, 0, self.log_probs.size - 1)
    loss = float(-(self.log_probs[safe] * weights).sum())
    correct = float(((ids == self.most_frequent) * weights).sum())
    return loss, float(weights.sum()), correct

  def score(self, ids, weights) -> Tuple[float, float]:
    """(mean cross-entropy in nats, accuracy) of the weighted ids."""
    loss, count, correct = self.sums(ids, weights)
    if not count:
      return float("nan"), float("nan")
    return loss / count, correct / count

  def summary(self) -> Dict[str, float]:
    """Entropy of the training distribution and its top token's share."""
    probs = self.counts / max(self.counts.sum(), 1.0)
    nonzero = probs[probs > 0]
    return {"tokens": int(self.counts.sum()),
            "entropy": float(-(nonzero * np.log(nonzero)).sum()),
            "most_frequent_share": float(probs.max())}
