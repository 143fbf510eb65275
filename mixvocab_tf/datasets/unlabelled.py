"""A user's unlabelled texts: queries or sentences without labels, checked.

An app's logs hold far more queries than anyone labels. The own-data job's
distillation can read them beside train (`own_data_steps.unlabelled`): the
teacher labels each one (its intent and slot distributions, or its class
logits) and the student learns those soft labels, with no gold-label loss.

A file of unlabelled texts is one of:

- plain text (any extension other than the three below): one text per
  line; blank lines are skipped;
- `.csv`, `.tsv` or `.jsonl`: the text column (`text` unless named), read
  as a split of a text-classification dataset is (`text_classification_files`),
  a label column ignored if there is one.

Whitespace inside a text is collapsed, and a text met twice is kept once.
The file is UTF-8 (`decoding`). Texts are single: a pair task's unlabelled
data would need both texts, which a line does not hold.

Example:
  texts = read_unlabelled("logs/queries.txt")
"""

import hashlib
import os

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import records
from mixvocab_tf.datasets import text_classification_files


def read_unlabelled(path: str, text_column: str = "text") -> list[str]:
  """The distinct texts of `path`, in file order, whitespace collapsed.

  Args:
    path: a plain-text file (one text per line) or a `.csv`, `.tsv` or
      `.jsonl` file with a text column.
    text_column: the column (key) of the text in a CSV, TSV or JSONL file.

  Raises:
    DataError: the file is missing, not UTF-8, holds no text, or (CSV, TSV,
      JSONL) lacks the text column; the message names the file and line.
  """
  ext = os.path.splitext(path)[1].lower().lstrip(".")
  if ext in records.FORMATS:
    split = text_classification_files.read_text_classification(
        path, text_column=text_column, require_labels=False)
    if split.texts_b is not None:
      raise errors.data_error(
          path, None, "the file holds pairs of texts (text_a, text_b)",
          "single texts", "Unlabelled data serves tasks of one text.")
    texts = split.texts_a
  else:
    texts = decoding.read_lines(path, "one unlabelled text per line")
  seen, kept = set(), []
  for text in texts:
    text = " ".join(text.split())
    if text and text not in seen:
      seen.add(text)
      kept.append(text)
  if not kept:
    raise errors.data_error(path, None, "the file holds no text",
                            "one unlabelled text per line")
  return kept


def cache_suffix(texts: list[str]) -> str:
  """A teacher-output cache name's suffix for a transfer set holding
  `texts`, so that caches of different texts stay apart (each cache's
  fingerprint checks the texts themselves)."""
  return "_unlabelled" + hashlib.sha256(
      "\n".join(texts).encode("utf-8")).hexdigest()[:8]
