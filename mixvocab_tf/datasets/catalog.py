"""Datasets by name: what a fine-tuning task reads, chosen by one value.

Text classification:

- 'glue/sst2', 'glue/mrpc', 'glue/mnli' (`glue.Glue`): `data_dir` the GLUE
  root (`SST-2/`, `MRPC/`, `MNLI/`: TSV files or the MNLI sample JSON);
  None: tensorflow-datasets;
- 'files' (`user_dataset.TextClassificationFiles`): `data_dir` a user's
  dataset directory of CSV, TSV or JSONL files (the data contract:
  `user_dataset`'s docstring).

Intent and slots:

- 'snips' (`snips.Snips`): `data_dir` None for the built-in copy, or a
  directory of SNIPS;
- 'files' (`user_dataset.IntentSlotFiles`): `data_dir` a user's dataset
  directory in the Goo et al. layout or of JSONL files.

A text classification dataset has `label_names`, `is_pair`,
`split_name(split)`, `examples(split)` (`TextClassificationExamples`),
`num_train_examples()`, `in_memory` (False: streamed from
tensorflow-datasets, `tfds_examples(split)`), `glue_task` (the GLUE task
whose metrics score it, or None), `fingerprint_name`, `title`, `short_name`
and `describe(eval_split)`. An intent-and-slot dataset has `examples(split)`
(`IntentSlotExamples`) and `describe()`. Both are read once per process: the
same arguments give the same object.

Example:
  sst2 = catalog.text_classification("glue/sst2", "/data/glue")
  mine = catalog.text_classification("files", "/data/mine",
                                     text_column="review")
  snips = catalog.intent_slot("snips")
  snips.examples("valid").words[0]
"""

import functools

from mixvocab_tf.datasets import glue
from mixvocab_tf.datasets import snips
from mixvocab_tf.datasets import user_dataset

FILES = "files"
TEXT_CLASSIFICATION_NAMES = tuple(
    f"glue/{task}" for task in glue.LABEL_NAMES) + (FILES,)
INTENT_SLOT_NAMES = (snips.Snips.name, FILES)


def text_classification(name: str = "glue/sst2",
                        data_dir: str | None = None,
                        source: str = "auto",
                        text_column: str = "text",
                        text_b_column: str | None = None,
                        label_column: str = "label",
                        out_of_scope: str | None = None):
  """The text classification dataset `name` (see the module docstring).

  Args:
    name: 'glue/sst2', 'glue/mrpc', 'glue/mnli' (any spelling of the task:
      'glue/SST-2') or 'files'.
    data_dir: GLUE: the GLUE root for local files, or the
      tensorflow-datasets data directory with `source='tfds'`; None:
      tensorflow-datasets' default. 'files': the user's dataset directory
      (required).
    source: GLUE only: 'auto', 'tsv', 'mnli_json' or 'tfds' (`glue.Glue`).
    text_column, text_b_column, label_column: 'files' only: the columns (or
      JSONL keys) of the text, of the second text of a pair, and of the
      label (`user_dataset.load_dataset`).
    out_of_scope: 'files' only: a file of texts (one a line) that join
      train labelled 'out_of_scope' (`datasets.out_of_scope`); None: none.

  Raises:
    ValueError: an unknown name, GLUE task or source; 'files' without
      `data_dir`, or with a `source`.
  """
  return _text_classification(name, data_dir, source, text_column,
                              text_b_column, label_column, out_of_scope)


@functools.lru_cache(maxsize=16)
def _text_classification(name, data_dir, source, text_column, text_b_column,
                         label_column, out_of_scope=None):
  if name == FILES:
    if not data_dir:
      raise ValueError(
          "The text classification dataset 'files' is a user's dataset: "
          "data_dir must name its directory (train, validation and "
          "optionally test files; see mixvocab_tf.datasets.user_dataset). "
          "For GLUE, name 'glue/sst2', 'glue/mrpc' or 'glue/mnli'.")
    if source != "auto":
      raise ValueError(
          "source chooses where GLUE data is read from; a user's dataset "
          f"('files') is read from data_dir: leave source 'auto', received "
          f"{source!r}.")
    return user_dataset.TextClassificationFiles(
        data_dir, out_of_scope, text_column=text_column,
        text_b_column=text_b_column, label_column=label_column)
  if out_of_scope:
    raise ValueError(
        f"out_of_scope adds texts to a user's dataset ('files'); {name!r} "
        "is not one: give its files as a dataset directory.")
  prefix, _, task = str(name).partition("/")
  if prefix != "glue" or not task:
    raise ValueError(
        f"Unknown text classification dataset {name!r}; expected one of "
        f"{list(TEXT_CLASSIFICATION_NAMES)}.")
  return glue.Glue(task, data_dir, source)


def intent_slot(name: str = "snips", data_dir: str | None = None,
                out_of_scope: str | None = None):
  """The intent-and-slot dataset `name` (see the module docstring).

  Args:
    name: 'snips' or 'files'.
    data_dir: 'snips': None for the built-in copy, or a directory of SNIPS;
      'files': the user's dataset directory (required).
    out_of_scope: 'files' only: a file of texts (one a line) that join
      train as intent 'out_of_scope', every word 'O'
      (`datasets.out_of_scope`); None: none.

  Raises:
    ValueError: an unknown name, or 'files' without `data_dir`.
  """
  return _intent_slot(name, data_dir, out_of_scope)


@functools.lru_cache(maxsize=8)
def _intent_slot(name, data_dir, out_of_scope=None):
  if name == snips.Snips.name and not out_of_scope:
    return snips.Snips(data_dir)
  if name == snips.Snips.name:
    raise ValueError(
        "out_of_scope adds texts to a user's dataset ('files'); the "
        "built-in SNIPS is not one: give its files as a dataset directory.")
  if name == FILES:
    if not data_dir:
      raise ValueError(
          "The intent-and-slot dataset 'files' is a user's dataset: "
          "data_dir must name its directory (train/, valid/ and optionally "
          "test/ with seq.in, seq.out and label, or JSONL files; see "
          "mixvocab_tf.datasets.user_dataset). For SNIPS, name 'snips'.")
    return user_dataset.IntentSlotFiles(data_dir, out_of_scope)
  raise ValueError(
      f"Unknown intent-and-slot dataset {name!r}; expected one of "
      f"{list(INTENT_SLOT_NAMES)}.")
