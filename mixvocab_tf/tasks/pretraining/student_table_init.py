"""A warm start for stage I: the student table as a factor of the teacher's.

Zhao et al. (EACL 2021), Section 3, start stage I's student table and its
up-projection from random values and train them for 500K steps of batch 2048.
A CPU run has a few hundred steps of batch 16, in which most of the ~5K
student tokens are seen a handful of times: the table stage II inherits is
then mostly its random initialisation. Most student tokens are teacher tokens
too (about 92% for a 5K vocabulary learnt like the teacher's), and the teacher
already has an embedding for each, so the warm start begins where stage I is
meant to arrive: student table E [V_s, d_s] and affine up-projection (K
[d_s, d_t], b [d_t]) with E K + b the best rank-d_s approximation (truncated
SVD) of the teacher's embeddings of the student tokens. A student token the
teacher lacks gets the mean of the teacher embeddings of its teacher
WordPieces. Stage I then trains everything as before.

This is not in the paper; `Stage1Task.student_table_init = 'random'` gives
the paper's initialisation.
"""

from typing import Sequence, Tuple

import numpy as np
import tensorflow as tf

from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece

SUFFIX_INDICATOR = vocab_lib.SUFFIX_INDICATOR


def teacher_rows_of_student_tokens(teacher_table: np.ndarray,
                                   teacher_tokens: Sequence[str],
                                   student_tokens: Sequence[str]
                                  ) -> Tuple[np.ndarray, int]:
  """A teacher embedding for each student token.

  Args:
    teacher_table: the teacher's word embeddings [V_t, d_t].
    teacher_tokens: the teacher vocabulary, in id order.
    student_tokens: the student vocabulary, in id order.

  Returns:
    ([V_s, d_t] rows, how many student tokens the teacher has as they are).
    A token the teacher lacks gets the mean row of its teacher WordPieces
    (the word without its `##`, cut by the teacher's WordPiece); one with
    no piece at all, the mean of the teacher table.
  """
  teacher_table = np.asarray(teacher_table, np.float32)
  if teacher_table.shape[0] != len(teacher_tokens):
    raise ValueError(
        f"The teacher table has {teacher_table.shape[0]} rows but the teacher "
        f"vocabulary {len(teacher_tokens)} tokens.")
  index = {token: i for i, token in enumerate(teacher_tokens)}
  rows = np.empty((len(student_tokens), teacher_table.shape[1]), np.float32)
  missing = []
  for i, token in enumerate(student_tokens):
    j = index.get(token)
    if j is None:
      missing.append(i)
    else:
      rows[i] = teacher_table[j]
  if missing:
    words = [student_tokens[i][len(SUFFIX_INDICATOR):]
             if student_tokens[i].startswith(SUFFIX_INDICATOR)
             and len(student_tokens[i]) > len(SUFFIX_INDICATOR)
             else student_tokens[i] for i in missing]
    tokenizer = wordpiece.word_piece_tokenizer(teacher_tokens)
    pieces = tokenizer.tokenize(tf.constant(words)).to_list()
    unk = index.get(vocab_lib.UNK)
    fallback = teacher_table.mean(axis=0)
    for i, ids in zip(missing, pieces):
      ids = [j for j in ids if j != unk]
      rows[i] = teacher_table[ids].mean(axis=0) if ids else fallback
  return rows, len(student_tokens) - len(missing)


def factorized_student_table(rows: np.ndarray, width: int
                            ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
  """E, K, b with E K + b the best rank-`width` approximation of `rows`.

  Args:
    rows: [V_s, d_t], a teacher embedding per student token.
    width: d_s, the student table's width (at most d_t).

  Returns:
    table E [V_s, d_s] (centred), kernel K [d_s, d_t] (orthonormal rows),
    bias b [d_t] (the mean row).
  """
  rows = np.asarray(rows, np.float64)
  if not 0 < width <= rows.shape[1]:
    raise ValueError(f"width must be in [1, {rows.shape[1]}] (the teacher's "
                     f"width); received {width}.")
  bias = rows.mean(axis=0)
  u, s, vt = np.linalg.svd(rows - bias, full_matrices=False)
  # Columns beyond the rank (fewer tokens than width) get zero singular
  # values, so E K + b is still the best approximation.
  k = min(width, s.shape[0])
  table = np.zeros((rows.shape[0], width))
  kernel = np.zeros((width, rows.shape[1]))
  table[:, :k] = u[:, :k] * s[:k]
  kernel[:k] = vt[:k]
  return (table.astype(np.float32), kernel.astype(np.float32),
          bias.astype(np.float32))


def warm_start(embedding_layer, teacher_tokens: Sequence[str],
               student_tokens: Sequence[str]) -> dict:
  """Writes the factorized teacher rows into a `DualVocabEmbedding`.

  Args:
    embedding_layer: the stage I teacher's `DualVocabEmbedding` (built, its
      teacher table loaded).
    teacher_tokens: the teacher vocabulary.
    student_tokens: the student vocabulary.

  Returns:
    A summary: tokens shared with the teacher, and the fraction of the
    rows' (centred) variance the rank-d_s factors keep.
  """
  rows, shared = teacher_rows_of_student_tokens(
      embedding_layer.teacher_embeddings.numpy(), teacher_tokens,
      student_tokens)
  width = embedding_layer.student_embedding_width
  table, kernel, bias = factorized_student_table(rows, width)
  embedding_layer.student_embeddings.assign(table)
  embedding_layer.up_projection.kernel.assign(kernel)
  embedding_layer.up_projection.bias.assign(bias)
  centred = rows - rows.mean(axis=0)
  approx = table @ kernel
  kept = float(np.sum(approx ** 2) / max(np.sum(centred ** 2), 1e-12))
  return {"student_tokens": len(student_tokens), "shared_with_teacher": shared,
          "variance_kept": kept}
