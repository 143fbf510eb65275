"""Held-out text for pretraining: a train part and documents no run reads.

A masked-LM loss means something only on text the model has not trained on,
and only beside the loss of a model that learned nothing but word frequencies
(`unigram_floor`). Corpora in BERT create_pretraining_data layout often have
a few very long documents (whole novels), so holding out every k-th
*document* can hold out a quarter of the corpus or nothing of a genre. Here
each document is first cut into blocks of at most `block_lines` lines, and
every `heldout_every`-th block is held out; the blocks of a document never
straddle the two parts, and each block is written as a document of its own.
"""

import json
import os
from typing import List, Sequence, Tuple, Union

from mixvocab_tf.text import pretraining_input

TRAIN_TEXT = "train.txt"
HELDOUT_TEXT = "heldout.txt"
SUMMARY_JSON = "split.json"

Document = List[str]


def split_documents(documents: Sequence[Document], heldout_every: int = 10,
                    block_lines: int = 100
                    ) -> Tuple[List[Document], List[Document]]:
  """(train, held-out) blocks of `documents`.

  Args:
    documents: lists of lines.
    heldout_every: every this-many-th block (the 1st, the (k+1)-th, ...) is
      held out.
    block_lines: lines per block at most.

  Returns:
    Two lists of blocks (lists of lines), in corpus order.
  """
  if int(heldout_every) < 2:
    raise ValueError(f"heldout_every must be at least 2; received "
                     f"{heldout_every!r}.")
  if int(block_lines) < 1:
    raise ValueError(f"block_lines must be positive; received "
                     f"{block_lines!r}.")
  blocks = [doc[i:i + block_lines] for doc in documents
            for i in range(0, len(doc), block_lines)]
  if len(blocks) < 2:
    raise ValueError(f"The text has {len(blocks)} block(s) of at most "
                     f"{block_lines} lines; a split needs two or more.")
  heldout = blocks[::heldout_every]
  train = [b for i, b in enumerate(blocks) if i % heldout_every]
  return train, heldout


def split_files(input_files: Union[str, Sequence[str]], output_dir: str,
                heldout_every: int = 10, block_lines: int = 100) -> dict:
  """Writes `train.txt` and `heldout.txt` of `input_files` to `output_dir`.

  Returns:
    A summary (files, blocks, lines and words of each part), also written as
    `split.json`.
  """
  files = pretraining_input.expand_files(input_files)
  documents = [d for f in files for d in pretraining_input.read_documents(f)]
  train, heldout = split_documents(documents, heldout_every, block_lines)
  os.makedirs(output_dir, exist_ok=True)
  summary = {"input_files": files, "heldout_every": heldout_every,
             "block_lines": block_lines}
  for name, blocks in ((TRAIN_TEXT, train), (HELDOUT_TEXT, heldout)):
    with open(os.path.join(output_dir, name), "w", encoding="utf-8") as f:
      f.write("\n\n".join("\n".join(b) for b in blocks) + "\n")
    part = name.split(".")[0]
    summary[f"{part}_blocks"] = len(blocks)
    summary[f"{part}_lines"] = sum(map(len, blocks))
    summary[f"{part}_words"] = sum(len(line.split()) for b in blocks
                                   for line in b)
  with open(os.path.join(output_dir, SUMMARY_JSON), "w",
            encoding="utf-8") as f:
    json.dump(summary, f, indent=1)
  return summary
