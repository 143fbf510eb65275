"""Constrained IOB decoding of per-word slot scores (SNIPS).

The SNIPS slot head scores every tag at each word's first piece, and the
default decoder takes the arg-max word by word (`snips_data.decode_slot_tags`),
which can emit an `I-x` after `O` or after another type's tag: an ill-formed
chunk that CoNLL scoring reads as the start of a new chunk. `viterbi_decode`
instead finds the best-scoring *valid* sequence: `I-x` only after `B-x` or
`I-x` (and not first). Scores are per-word log-probabilities, so the path
score is the sum of the words' log-probabilities (no learnt transitions).
"""

from typing import List, Sequence

import numpy as np

OUTSIDE_TAG = "O"


def allowed_transitions(slots: Sequence[str]) -> np.ndarray:
  """[S, S] bool: allowed[i, j] = tag j may follow tag i."""
  slots = list(slots)
  allowed = np.ones([len(slots)] * 2, bool)
  for j, tag in enumerate(slots):
    if tag.startswith("I-"):
      kind = tag[2:]
      allowed[:, j] = [t in (f"B-{kind}", f"I-{kind}") for t in slots]
  return allowed


def allowed_starts(slots: Sequence[str]) -> np.ndarray:
  """[S] bool: tags a query may start with (no I-x)."""
  return np.array([not t.startswith("I-") for t in slots])


def log_softmax(logits: np.ndarray) -> np.ndarray:
  logits = np.asarray(logits, np.float64)
  shifted = logits - logits.max(axis=-1, keepdims=True)
  return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def viterbi_decode(word_logits: np.ndarray, slots: Sequence[str],
                   allowed=None, starts=None) -> List[str]:
  """Best valid IOB sequence for one query.

  Args:
    word_logits: [words, S] slot logits at each word's first piece.
    slots: the tag names by id (`SnipsLabels.slots`).
    allowed, starts: precomputed `allowed_transitions(slots)` and
      `allowed_starts(slots)` (optional).

  Returns:
    One tag per word, with no I-x after anything but B-x / I-x.
  """
  if allowed is None:
    allowed = allowed_transitions(slots)
  if starts is None:
    starts = allowed_starts(slots)
  scores = log_softmax(word_logits)
  n = scores.shape[0]
  if n == 0:
    return []
  penalty = np.where(allowed, 0.0, -np.inf)
  best = np.where(starts, scores[0], -np.inf)
  back = np.zeros([n, scores.shape[1]], np.int64)
  for i in range(1, n):
    candidates = best[:, None] + penalty  # [from, to]
    back[i] = candidates.argmax(axis=0)
    best = candidates.max(axis=0) + scores[i]
  tags = [int(best.argmax())]
  for i in range(n - 1, 0, -1):
    tags.append(int(back[i, tags[-1]]))
  return [slots[t] for t in reversed(tags)]


def invalid_inside_tags(tags: Sequence[str]) -> int:
  """Number of I-x tags not preceded by B-x or I-x (ill-formed chunks)."""
  count, previous = 0, OUTSIDE_TAG
  for tag in tags:
    if tag.startswith("I-") and previous not in (f"B-{tag[2:]}", tag):
      count += 1
    previous = tag
  return count
