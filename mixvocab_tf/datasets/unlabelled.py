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

Texts that the labelled dataset already holds are left out of the transfer
set (`without_known`): a validation or test text whose teacher answer the
student learnt would be scored on what it was taught, and a train text is
learnt with its own label already. Logs often hold the queries that were
picked for labelling, so this is the common case, not a corner.

Example:
  texts = read_unlabelled("logs/queries.txt")
  texts, known = without_known(texts, dataset.known_texts())
"""

import hashlib
import os
from typing import Mapping, Optional

import numpy as np

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import records
from mixvocab_tf.datasets import text_classification_files

#: At most this many unlabelled texts join a transfer set by default
#: (`sample`): the teacher labels each one (measured as the student step's
#: added CPU time: about 250 SST-2 sentences or 370 SNIPS queries a CPU
#: second, so 100,000 cost 4-7 CPU minutes), and a student's step budget
#: reads 128K (intents and slots) to 384K (sentence labels) examples in all,
#: train's included, so more would mostly never be read.
MOST = 100_000
#: The seed of the draw.
SEED = 0


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


def normalized(text: str) -> str:
  """`text` as texts are compared across files: lowercased, its runs of
  whitespace one space (`user_dataset.UserDataset.known_texts`)."""
  return " ".join(text.lower().split())


def without_known(texts: list[str], known: Mapping[str, set]
                  ) -> tuple[list[str], dict[str, int]]:
  """`texts` without those a labelled split holds, and how many each held.

  Args:
    texts: unlabelled texts (`read_unlabelled`).
    known: {split: its texts, `normalized`}; a text held by several splits
      is counted once, under the first split in this order that holds it
      (give validation and test before train).

  Returns:
    (the other texts, in order; {split: texts left out because it holds
    them}, every split of `known` named).
  """
  counts = dict.fromkeys(known, 0)
  kept = []
  for text in texts:
    key = normalized(text)
    split = next((name for name, held in known.items() if key in held),
                 None)
    if split is None:
      kept.append(text)
    else:
      counts[split] += 1
  return kept, counts


def known_warning(path: str, total: int, known: Mapping[str, int]
                  ) -> str | None:
  """One message on the unlabelled texts left out because the dataset
  holds them (`without_known`); None if there are none."""
  left_out = sum(known.values())
  if not left_out:
    return None
  parts = ", ".join(f"{count:,} in {split}"
                    for split, count in known.items() if count)
  return (f"{left_out:,} of the {total:,} unlabelled texts of {path} are "
          f"texts of the labelled dataset ({parts}; compared lowercased, "
          "spaces collapsed) and are left out of the student's transfer "
          "set: a validation or test text's teacher answer would teach the "
          "student what it is scored on, and train's texts are learnt with "
          f"their labels. The student learns from the other "
          f"{total - left_out:,}.")


def sample(texts: list[str], most: Optional[int] = MOST,
           seed: int = SEED) -> list[str]:
  """At most `most` of `texts` (None: all), drawn at random without
  replacement with `seed`, in their order in `texts`."""
  if most is not None and most <= 0:
    raise ValueError(f"max_unlabelled must be positive or None; received "
                     f"{most!r}.")
  if most is None or len(texts) <= most:
    return list(texts)
  chosen = np.sort(np.random.default_rng(seed).choice(
      len(texts), size=most, replace=False))
  return [texts[i] for i in chosen]


def sample_warning(total: int, drawn: int) -> str | None:
  """One message when `sample` drew `drawn` of `total` texts; else None."""
  if drawn == total:
    return None
  return (f"The student's transfer set takes {drawn:,} of the {total:,} "
          f"unlabelled texts, drawn at random (seed {SEED}): the teacher "
          "labels each one (about 250-370 texts a CPU second) and the "
          "student's step budget would never read most of the rest. "
          "own_data_steps.max_unlabelled = None takes them all.")


def cache_suffix(texts: list[str]) -> str:
  """A teacher-output cache name's suffix for a transfer set holding
  `texts`, so that caches of different texts stay apart (each cache's
  fingerprint checks the texts themselves)."""
  return "_unlabelled" + hashlib.sha256(
      "\n".join(texts).encode("utf-8")).hexdigest()[:8]
