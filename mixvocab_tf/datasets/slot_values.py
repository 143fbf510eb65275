"""A user's lists of slot values: the artists, cities, dishes an app knows.

An app that fills slots usually has lists of the values it can act on (a
music catalogue's artists and tracks, the cities a weather service covers),
as Rasa's lookup tables and Alexa's custom slot types hold them. The
own-data job's distillation swaps slot values into copies of train's
queries (`intent_slot.augment`); given lists, the copies draw from them as
well as from train's own values, so the student reads each slot type with
many more values than a small train split holds, tagged by construction.

The lists are a directory with one UTF-8 file per slot type, named after
the type as train's tags name it (`B-artist` -> `artist.txt`), one value per
line:

    slot_values/
      artist.txt        # Madonna\\nJohn Coltrane\\n...
      city.txt          # paris\\nnew york\\n...

Blank lines are skipped, whitespace inside a value is collapsed, and a value
met twice is kept once. Hidden files (.DS_Store) are ignored.

Example:
  values = read_slot_values("slot_values", slot_types=("artist", "city"))
  values["artist"][1]  # ('John', 'Coltrane')
"""

import hashlib
import os
from typing import Iterable, Optional

import tensorflow as tf

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors

#: The extension of a list's file.
EXTENSION = ".txt"


def read_slot_values(
    directory: str,
    slot_types: Optional[Iterable[str]] = None) -> dict[str, list[tuple[str, ...]]]:
  """{slot type: its values, each a tuple of words, in file order}.

  Args:
    directory: a directory of `<slot type>.txt` files.
    slot_types: the slot types the lists may name (train's); None: any.

  Raises:
    DataError: the directory is missing or holds no list, a file is not a
      `.txt` list, names a slot type not in `slot_types`, is not UTF-8 or
      holds no value; the message names the file and the fix.
  """
  expected = (f"a directory of {EXTENSION} files, one per slot type, named "
              f"after the type (artist{EXTENSION} for the tags B-artist, "
              "I-artist), one value per line")
  if not tf.io.gfile.isdir(directory):
    found = ("it is a file" if errors.isfile(directory) else
             "the directory does not exist")
    raise errors.data_error(directory, None, found, expected)
  names = [n for n in errors.listdir(directory) if not n.startswith(".")]
  others = [n for n in names if not n.endswith(EXTENSION)]
  if others:
    raise errors.data_error(
        os.path.join(directory, others[0]), None,
        f"the file is not a {EXTENSION} list", expected,
        f"Rename it <slot type>{EXTENSION}, or move it out of {directory}.")
  if not names:
    raise errors.data_error(directory, None, "the directory holds no list",
                            expected)
  known = None if slot_types is None else sorted(set(slot_types))
  values = {}
  for name in sorted(names):
    path = os.path.join(directory, name)
    kind = name[:-len(EXTENSION)]
    if known is not None and kind not in known:
      raise errors.data_error(
          path, None, f"train's tags have no slot type {kind!r}",
          f"one of train's slot types: {', '.join(known) or 'none'}",
          "Name the file after a slot type of train's tags (B-<type>), "
          "or leave it out: a value of a type the model never learns "
          "cannot be tagged.")
    seen, kept = set(), []
    for line in decoding.read_lines(path, "one slot value per line"):
      words = tuple(line.split())
      if words and words not in seen:
        seen.add(words)
        kept.append(words)
    values[kind] = kept
  return values


def slot_types(tags: Iterable[Iterable[str]]) -> set[str]:
  """The slot types of IOB tag sequences (`B-artist`, `I-artist`: 'artist')."""
  return {tag[2:] for sequence in tags for tag in sequence
          if tag[:2] in ("B-", "I-")}


def fingerprint(values: dict[str, list[tuple[str, ...]]]) -> str:
  """8 hex digits of the lists' contents, for names that must change with
  them (a teacher-output cache)."""
  text = "\n".join(f"{kind}\t{' '.join(words)}"
                   for kind in sorted(values) for words in values[kind])
  return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
