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

Or a Rasa NLU file (`.yml`, `.yaml`; `rasa_files`): its lookup tables are
the lists, each read for the slot types named as it is (`- lookup: city`
for `city`, and for `city.departure`, `city.destination` when entities
carry roles). A table named after no slot type of train is left out
(`unused_lookups` names them; Rasa's lookup tables may name what they list
otherwise), but one table must match.

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
from mixvocab_tf.datasets import rasa_files

#: The extension of a list's file.
EXTENSION = ".txt"


def read_slot_values(
    directory: str,
    slot_types: Optional[Iterable[str]] = None) -> dict[str, list[tuple[str, ...]]]:
  """{slot type: its values, each a tuple of words, in file order}.

  Args:
    directory: a directory of `<slot type>.txt` files, or a Rasa NLU
      `.yml` file whose lookup tables are the lists.
    slot_types: the slot types the lists may name (train's); None: any.

  Raises:
    DataError: the directory is missing or holds no list, a file is not a
      `.txt` list, names a slot type not in `slot_types`, is not UTF-8 or
      holds no value; a Rasa file has no lookup table named after one of
      `slot_types`; the message names the file and the fix.
  """
  if rasa_files.is_rasa(directory) and not tf.io.gfile.isdir(directory):
    if not errors.isfile(directory):
      raise errors.data_error(directory, None, "the file does not exist",
                              "a Rasa NLU file with lookup tables")
    return _read_lookups(directory, slot_types)
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


def _lookup_types(name: str, slot_types: Optional[Iterable[str]]) -> list[str]:
  """The slot types a lookup table `name` lists values of."""
  if slot_types is None:
    return [name]
  return sorted(kind for kind in slot_types
                if kind == name or kind.startswith(name + "."))


def _read_lookups(path: str, slot_types: Optional[Iterable[str]]
                  ) -> dict[str, list[tuple[str, ...]]]:
  tables = rasa_files.read_lookups(path)
  if not tables:
    raise errors.data_error(
        path, None, "the file has no lookup table",
        "a Rasa NLU file with `- lookup: <slot type>` items, or a directory "
        f"of <slot type>{EXTENSION} lists", "Give the file that holds them.")
  values, seen = {}, {}
  for name, entries in tables.items():
    for kind in _lookup_types(name, slot_types):
      kept = values.setdefault(kind, [])
      for value, _ in entries:
        words = tuple(value.split())
        if words and words not in seen.setdefault(kind, set()):
          seen[kind].add(words)
          kept.append(words)
  if not values:
    known = ", ".join(sorted(set(slot_types))) or "none"
    raise errors.data_error(
        path, None,
        f"no lookup table is named after a slot type of train (tables: "
        f"{', '.join(sorted(tables))})", f"a table named after one of "
        f"train's slot types: {known}",
        "Rename a table after the entity whose values it lists.")
  return {kind: values[kind] for kind in sorted(values) if values[kind]}


def unused_lookups(path: str, slot_types: Iterable[str]) -> list[str]:
  """The lookup tables of a Rasa file `path` named after none of
  `slot_types` (`read_slot_values` leaves them out); [] for a directory."""
  if not (rasa_files.is_rasa(path) and errors.isfile(path)):
    return []
  slot_types = list(slot_types)
  return sorted(name for name in rasa_files.read_lookups(path)
                if not _lookup_types(name, slot_types))


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
