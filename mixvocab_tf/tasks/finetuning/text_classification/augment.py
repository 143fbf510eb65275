"""GLUE transfer-set augmentation for distillation: word edits, pair swaps.

TinyBERT (Jiao et al., 2020, Section 3.1) distils a small student on an
augmented transfer set: new sentences made by replacing words, labelled by
the fine-tuned teacher (not by the gold label, which an edit may no longer
fit). TinyBERT proposes replacements with BERT's masked-LM (single-piece
words) and GloVe neighbours; here each word of a copy is, with probability
`p`, replaced by one of its nearest neighbours among whole-word tokens in the
teacher's input embedding table (`embedding_neighbours`; words without
neighbours stay) or, without a neighbour table, by a word drawn from the
training sentences (by frequency); with probability `p_delete` it is
dropped. For sentence-pair tasks (MRPC, MNLI) a copy can also swap its two
sentences (`swap_pairs`): paraphrase is symmetric, so MRPC's gold label stays
right.

`augment(...)` is deterministic given its arguments. Copies keep the
original's gold label; `distill_text_classification` gives them hard-label weight 0 unless
told otherwise (the teacher's soft label is their target).
"""

import random
import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np


def embedding_neighbours(table: np.ndarray, tokens: Sequence[str],
                         words: Iterable[str], k: int = 15,
                         chunk: int = 2048) -> Dict[str, List[str]]:
  """The `k` nearest whole-word tokens of each word, by embedding cosine.

  Args:
    table: float [vocab, width], the teacher's input word embeddings.
    tokens: the teacher's vocabulary, in id order.
    words: the words to find neighbours for; those that are not alphabetic
      whole-word tokens of `tokens` get none.
    k: neighbours per word.
    chunk: words compared at once.

  Returns:
    {word: [neighbour, ...]} nearest first, the word itself excluded.
  """
  if len(tokens) != len(table):
    raise ValueError(f"{len(tokens)} tokens but {len(table)} embedding rows.")
  candidates = np.array([i for i, t in enumerate(tokens) if t.isalpha()])
  if not len(candidates):
    return {}
  row = {tokens[i]: n for n, i in enumerate(candidates)}
  vectors = np.asarray(table, np.float32)[candidates]
  vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
  queries = sorted({w for w in words if w in row})
  k = min(k, len(candidates) - 1)
  out = {}
  for start in range(0, len(queries), chunk):
    batch = queries[start:start + chunk]
    rows = np.array([row[w] for w in batch])
    similarity = vectors[rows] @ vectors.T
    similarity[np.arange(len(batch)), rows] = -np.inf
    top = np.argpartition(-similarity, k, axis=1)[:, :k]
    for word, r, near in zip(batch, similarity, top):
      near = near[np.argsort(-r[near])]
      out[word] = [tokens[candidates[j]] for j in near]
  return out


def augment(sentences_a: Sequence[str], sentences_b: Sequence[str],
            labels: Sequence[int], copies: int = 1, p: float = 0.1,
            p_delete: float = 0.1, swap_pairs: bool = False, seed: int = 0,
            neighbours: Optional[Dict[str, Sequence[str]]] = None,
            min_words: int = 0
            ) -> Tuple[List[str], List[str], List[int], List[bool]]:
  """The examples followed by `copies` edited copies of each.

  Args:
    sentences_a, sentences_b, labels: the training split ('' in sentences_b
      for single-sentence tasks).
    copies: edited copies per example (0: the examples unchanged).
    p: probability that a word of a copy is replaced: by one of its
      `neighbours` (a word without any stays), or without them by a random
      training word.
    p_delete: probability that a word of a copy is dropped (a sentence keeps
      at least one word).
    swap_pairs: swap sentence A and B in every copy of a pair.
    seed: seed of the choices.
    neighbours: {word: replacements} (`embedding_neighbours`), or None.
    min_words: only examples of at least this many words (both sentences
      together) are copied. SST-2's training set is mostly short phrases
      (9.4 words on average) cut from the sentences that its dev split holds
      whole (19.5), so copies of the long examples look like what is scored.

  Returns:
    (sentences_a, sentences_b, labels, is_original): the originals first (in
    order), then copy 1 of every example of `min_words` or more, copy 2, ...
  """
  if not 0 <= p + p_delete <= 1:
    raise ValueError(f"p + p_delete must be in [0, 1]; received {p} and "
                     f"{p_delete}.")
  if min_words < 0:
    raise ValueError(f"min_words must be >= 0; received {min_words}.")
  out_a, out_b = list(sentences_a), list(sentences_b)
  out_labels = [int(l) for l in labels]
  is_original = [True] * len(out_labels)
  if copies <= 0:
    return out_a, out_b, out_labels, is_original
  pool = [w for s in list(sentences_a) + list(sentences_b) for w in s.split()]
  if not pool:
    raise ValueError("augment needs training sentences with words.")
  rng = random.Random(seed)

  def replacement(word):
    if neighbours is None:
      return rng.choice(pool)
    options = neighbours.get(word.lower())
    return rng.choice(options) if options else word

  def edit(sentence):
    words = sentence.split()
    if not words:
      return sentence
    kept = []
    for word in words:
      r = rng.random()
      if r < p_delete:
        continue
      kept.append(replacement(word) if r < p_delete + p else word)
    return " ".join(kept or [rng.choice(words)])

  for _ in range(copies):
    for a, b, label in zip(sentences_a, sentences_b, labels):
      if len(a.split()) + len(b.split()) < min_words:
        continue
      a, b = edit(a), (edit(b) if b else b)
      if swap_pairs and b:
        a, b = b, a
      out_a.append(a)
      out_b.append(b)
      out_labels.append(int(label))
      is_original.append(False)
  return out_a, out_b, out_labels, is_original


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def text_sentences(paths: Sequence[str], max_sentences: int,
                   min_words: int = 3, max_words: int = 40,
                   seed: int = 0) -> List[str]:
  """Sentences of plain-text files, for a transfer set without labels.

  "Well-read students" (Turc et al., 2019) and TinyBERT distil small students
  on much more text than the task's training set, labelled by the teacher.
  Each line (a paragraph, or one sentence) is cut after `.`, `!` or `?`;
  sentences of `min_words` to `max_words` words are kept once each, and
  `max_sentences` of them drawn with `seed`.

  Args:
    paths: text files (blank lines and BERT-layout document breaks are
      skipped).
    max_sentences: how many to return at most.
    min_words, max_words: the sentence lengths kept, in whitespace words.
    seed: seed of the draw.

  Returns:
    Sentences, in the order drawn.

  Raises:
    ValueError: no file, or no sentence of the lengths asked for.
  """
  if not paths:
    raise ValueError("text_sentences needs at least one text file.")
  if not 0 < min_words <= max_words:
    raise ValueError(f"Need 0 < min_words <= max_words; received {min_words} "
                     f"and {max_words}.")
  seen, sentences = set(), []
  for path in paths:
    with open(path, encoding="utf-8", errors="replace") as f:
      for line in f:
        for sentence in _SENTENCE_END.split(line.strip()):
          sentence = " ".join(sentence.split())
          if (min_words <= len(sentence.split()) <= max_words and
              sentence not in seen):
            seen.add(sentence)
            sentences.append(sentence)
  if not sentences:
    raise ValueError(f"No sentence of {min_words}-{max_words} words in "
                     f"{list(paths)}.")
  random.Random(seed).shuffle(sentences)
  return sentences[:max(0, int(max_sentences))]
