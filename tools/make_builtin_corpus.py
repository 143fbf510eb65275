r"""Selects the public-domain part of the shared corpus as the built-in corpus.

The package ships a small pretraining corpus so that the quickstart (student
vocabulary, Section 3 of Zhao et al., EACL 2021, and the pretraining stages)
runs without anything outside the installed package. It is cut from the
project's development corpus (`../shared/data/corpus/pretrain_corpus.txt`,
BERT `create_pretraining_data` layout: one paragraph per line, a blank line
between documents), keeping only documents whose licence is clear:

  * Project Gutenberg novels with the Project Gutenberg header, footer and
    credit lines removed (the remaining text is in the US public domain; the
    Project Gutenberg licence only governs texts that carry its trademark):
    Pride and Prejudice and The Adventures of Sherlock Holmes.
  * US presidential inaugural addresses, 1789-2021 (works of the US federal
    government, public domain).
  * US State of the Union addresses (same), newest first until the size budget
    is reached.

The only edit to the kept text repairs mis-decoded punctuation in four NLTK
inaugural addresses (2005, 2013, 2017, 2021; `_MOJIBAKE` lists every
replacement), so that the vocabulary learner does not spend tokens on debris.

Left out: NLTK abc and webtext (licence not stated), and, for size only, War
and Peace, Moby-Dick and the Shakespeare text.

The source is pinned by its SHA-256 and the documents are picked by index; the
script checks the first line of every boundary document, so a changed source
fails loudly instead of producing a different corpus.

Usage (from the project root; the output is what `mixvocab_tf/assets/corpus/`
holds):

  python tools/make_builtin_corpus.py \
    --source=../shared/data/corpus/pretrain_corpus.txt \
    --output_dir=mixvocab_tf/assets/corpus
"""

import hashlib
import os
import re

from absl import app
from absl import flags
from absl import logging

from mixvocab_tf.text.pretraining_input import read_documents

_SOURCE = flags.DEFINE_string(
    "source", "../shared/data/corpus/pretrain_corpus.txt",
    "The shared development corpus to select from.")
_OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", "mixvocab_tf/assets/corpus",
    "Where to write gutenberg.txt, inaugural.txt and state_union.txt.")
_MAX_BYTES = flags.DEFINE_integer(
    "max_bytes", 3_000_000, "Size budget for all output files together.")

SOURCE_SHA256 = (
    "cf4c6a29983ad3d25963c6daee08e587164e23e1e8052c746ab3216bcbf06193")

# Document indices in the pinned source, with the start of each range's first
# and last document as a check that the indices still mean what they meant.
_GUTENBERG = {0: "PRIDE AND PREJUDICE", 1: "THE ADVENTURES OF SHERLOCK HOLMES"}
_STATE_UNION = (7, 71, "PRESIDENT HARRY S. TRUMAN'S ADDRESS",
                "PRESIDENT GEORGE W. BUSH'S ADDRESS")
_INAUGURAL = (72, 130, "Fellow-Citizens of the Senate",
              "Chief Justice Roberts, Vice President Harris")

# Lines that carry the Project Gutenberg name or volunteer credits: removing
# them is what leaves plain public-domain text.
_GUTENBERG_LINE = re.compile(r"gutenberg", re.IGNORECASE)
_CREDIT_LINE = re.compile(r"^(Produced by|An Anonymous Volunteer)")

# Punctuation that NLTK's inaugural files carry mis-decoded (UTF-8 read as
# Latin-1, and Big5 punctuation read as Latin-1), with what it stands for.
_MOJIBAKE = (
    ("\u00e2\u0080\u0094", "\u2014"),  # Em dash.
    ("\u00a1X", "\u2014"),  # Em dash.
    ("\u00a1K", "\u2026"),  # Ellipsis.
    ("\u00a1\u00a6", "\u2019"),  # Right single quotation mark.
    ("\u00a1\u00a7", "\u201c"),  # Left double quotation mark.
    ("\u00a1\u00a8", "\u201d"),  # Right double quotation mark.
)
_LEFTOVER = re.compile("[\u0080-\u00bf]")


def _expect_start(doc, index, prefix):
  if not doc[0].startswith(prefix):
    raise ValueError(
        f"Document {index} of the source should start with {prefix!r}; it "
        f"starts with {doc[0][:80]!r}. The source is not the pinned corpus.")


def _repair(doc, index):
  repaired = []
  for line in doc:
    for bad, good in _MOJIBAKE:
      line = line.replace(bad, good)
    if _LEFTOVER.search(line):
      raise ValueError(f"Document {index} has unrepaired mis-decoded text: "
                       f"{line[:80]!r}.")
    repaired.append(line)
  return repaired


def _strip_gutenberg(doc, index, title):
  lines = [l for l in doc if not _GUTENBERG_LINE.search(l)]
  while lines and _CREDIT_LINE.match(lines[0]):
    lines = lines[1:]
  _expect_start(lines, index, title)
  return lines


def _doc_bytes(doc):
  return sum(len(l.encode("utf-8")) + 1 for l in doc) + 1  # +1: blank line.


def select(docs, max_bytes):
  """Returns {file name: documents} within `max_bytes`."""
  gutenberg = [_strip_gutenberg(docs[i], i, t) for i, t in _GUTENBERG.items()]
  ranges = {}
  for name, (first, last, first_start, last_start) in (
      ("inaugural", _INAUGURAL), ("state_union", _STATE_UNION)):
    _expect_start(docs[first], first, first_start)
    _expect_start(docs[last], last, last_start)
    ranges[name] = list(range(first, last + 1))
  inaugural = [_repair(docs[i], i) for i in ranges["inaugural"]]
  used = sum(_doc_bytes(d) for d in gutenberg + inaugural)
  if used > max_bytes:
    raise ValueError(
        f"max_bytes must be at least {used}; received {max_bytes}.")
  # Newest addresses first: their vocabulary is closest to today's queries.
  state_union = []
  for i in reversed(ranges["state_union"]):
    size = _doc_bytes(docs[i])
    if used + size > max_bytes:
      break
    state_union.append(i)
    used += size
  return {
      "gutenberg.txt": gutenberg,
      "inaugural.txt": inaugural,
      "state_union.txt": [_repair(docs[i], i) for i in sorted(state_union)],
  }


def write_documents(path, docs):
  # The trailing blank line ends the last document, so that readers which
  # concatenate files (BERT's create_pretraining_data does) do not merge it with
  # the next file's first document.
  with open(path, "w", encoding="utf-8", newline="\n") as f:
    f.write("\n\n".join("\n".join(d) for d in docs) + "\n\n")


def main(argv):
  del argv  # Unused.
  with open(_SOURCE.value, "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()
  if digest != SOURCE_SHA256:
    raise ValueError(f"{_SOURCE.value} has SHA-256 {digest}; expected the "
                     f"pinned corpus {SOURCE_SHA256}.")
  selection = select(read_documents(_SOURCE.value), _MAX_BYTES.value)
  os.makedirs(_OUTPUT_DIR.value, exist_ok=True)
  for name, docs in selection.items():
    path = os.path.join(_OUTPUT_DIR.value, name)
    write_documents(path, docs)
    logging.info("%s: %d documents, %d lines, %d bytes", path, len(docs),
                 sum(len(d) for d in docs), os.path.getsize(path))


if __name__ == "__main__":
  app.run(main)
