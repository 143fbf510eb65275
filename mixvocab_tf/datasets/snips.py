"""SNIPS by name: the built-in copy, or a directory in its layout.

SNIPS (Coucke et al., 2018) in the Goo et al. (2018) split: 13,084 training
and 700 validation queries of 7 intents and 72 IOB slot tags, the intent and
slot task of the paper (Zhao et al., EACL 2021, §4.2, Table 3). The package
ships a copy (`assets.snips_dir`), a dataset directory like a user's (Goo
layout, `train/` and `valid/`), read and checked by the same reader
(`user_dataset.load_dataset`).
"""

import os

from mixvocab_tf import assets
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import user_dataset


def builtin_dir() -> str:
  """The built-in SNIPS copy's directory (`train/`, `valid/`)."""
  return os.path.dirname(assets.snips_dir("train"))


class Snips(user_dataset.IntentSlotFiles):
  """SNIPS as a dataset an intent-and-slot task reads.

  Args:
    data_dir: a directory of SNIPS in the Goo et al. layout (any layout of
      the data contract reads); None: the built-in copy, which has no test
      split.
  """

  name = "snips"

  def __init__(self, data_dir: str | None = None):
    super().__init__(data_dir or builtin_dir())
    self.builtin = data_dir is None

  def examples(self, split: str) -> examples_lib.IntentSlotExamples:
    if self.builtin and split == "test":
      raise FileNotFoundError("The built-in SNIPS copy has no test split.")
    return super().examples(split)

  def describe(self) -> str:
    return ("SNIPS from " +
            ("the built-in copy" if self.builtin else self.data_dir))
