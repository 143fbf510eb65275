"""GLUE by name: SST-2, MRPC and MNLI from any of three sources.

The paper (Zhao et al., EACL 2021, §4.2, Table 2) fine-tunes students on SST-2,
MRPC and MNLI. `Glue(task, data_dir, source)` is one of them as a dataset a
text classification task reads (`catalog`: 'glue/sst2', 'glue/mrpc',
'glue/mnli'), from

- `tsv`: GLUE-format directories as GLUE's download script writes them
  (`SST-2/{train,dev}.tsv`, `MRPC/{train,dev}.tsv`,
  `MNLI/{train,dev_matched,dev_mismatched}.tsv`), on any file system
  `tf.io.gfile` reads. They are read by the reader of a user's files,
  `text_classification_files.read_text_classification` (`read_glue_tsv`
  names the task's columns and checks its labels), so SST-2 given as a
  user's TSV or CSV is read, and refused, by the same code as SST-2 by name;
- `mnli_json`: the MNLI sample files `MNLI/{train_sample,dev_sample}.json`
  (`{"i": {"text_a", "text_b", "label"}}`), for machines without the full set,
  read by `read_mnli_json`;
- `tfds`: tensorflow-datasets `glue/sst2`, `glue/mrpc`, `glue/mnli`, read as
  a stream (`Glue.tfds_examples`);

and gives the same examples whatever the source (`TextClassificationExamples`,
labels by name; no second text for SST-2), with the tensorflow-datasets label
order: SST-2 0 negative, 1 positive; MRPC 0 not_equivalent, 1 equivalent;
MNLI 0 entailment, 1 neutral, 2 contradiction.
"""

import collections
import json
import os

import tensorflow as tf

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import text_classification_files

SOURCES = ("auto", "tsv", "mnli_json", "tfds")

LABEL_NAMES = {
    "sst2": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "mnli": ("entailment", "neutral", "contradiction"),
}
#: Training examples of the full GLUE sets (tensorflow-datasets agrees), used
#: when the data is read from tensorflow-datasets.
TRAIN_SIZES = {"sst2": 67349, "mrpc": 3668, "mnli": 392702}

# glue_dir: directory in a GLUE download. columns: TSV header names of
# sentence A, sentence B (None: single sentence) and label. labels_by_name:
# whether the label column holds names (MNLI) or ids. tfds_features: names of
# sentences A and B in tensorflow-datasets.
_TaskSpec = collections.namedtuple(
    "_TaskSpec",
    ["glue_dir", "columns", "labels_by_name", "tfds_name", "tfds_features"])
_TASKS = {
    "sst2": _TaskSpec("SST-2", ("sentence", None, "label"), False,
                      "glue/sst2", ("sentence", None)),
    "mrpc": _TaskSpec("MRPC", ("#1 String", "#2 String", "Quality"), False,
                      "glue/mrpc", ("sentence1", "sentence2")),
    "mnli": _TaskSpec("MNLI", ("sentence1", "sentence2", "gold_label"), True,
                      "glue/mnli", ("premise", "hypothesis")),
}

# Split (as tensorflow-datasets names it) -> GLUE TSV file.
_TSV_FILES = {
    "sst2": {"train": "train.tsv", "validation": "dev.tsv"},
    "mrpc": {"train": "train.tsv", "validation": "dev.tsv"},
    "mnli": {
        "train": "train.tsv",
        "validation_matched": "dev_matched.tsv",
        "validation_mismatched": "dev_mismatched.tsv",
    },
}
_MNLI_JSON_FILES = {
    "train": "train_sample.json",
    "validation_matched": "dev_sample.json",
}
_SPLIT_ALIASES = {
    "dev": "validation",
    "dev_matched": "validation_matched",
    "dev_mismatched": "validation_mismatched",
}


def canonical_task(task):
  """'sst2', 'mrpc' or 'mnli' from any spelling ('SST-2', 'sst_2', 'MNLI')."""
  key = str(task).lower().replace("-", "").replace("_", "")
  if key not in _TASKS:
    raise ValueError(
        f"Unknown GLUE task {task!r}; expected one of {sorted(_TASKS)} "
        "(any case, with or without '-').")
  return key


def is_pair_task(task):
  """Whether `task` classifies sentence pairs (MRPC, MNLI) or sentences."""
  return _TASKS[canonical_task(task)].columns[1] is not None


def canonical_split(task, split):
  """The tensorflow-datasets name of `split` of `task`.

  'dev' means 'validation'; for MNLI, 'validation' and 'dev' mean the matched
  set.
  """
  task = canonical_task(task)
  name = _SPLIT_ALIASES.get(split, split)
  if task == "mnli" and name == "validation":
    name = "validation_matched"
  if name not in _TSV_FILES[task]:
    raise ValueError(
        f"Unknown split {split!r} for GLUE {task}; expected one of "
        f"{sorted(_TSV_FILES[task])} (or 'dev'/'validation'). Test splits "
        "have no public labels and are not read.")
  return name


def _label_values(task):
  """The label strings of a GLUE file, by label id: SST-2 and MRPC files hold
  the ids ('0', '1'), MNLI files the names."""
  if _TASKS[task].labels_by_name:
    return list(LABEL_NAMES[task])
  return [str(i) for i in range(len(LABEL_NAMES[task]))]


def read_glue_tsv(task, path) -> examples_lib.TextClassificationExamples:
  """Reads a GLUE TSV file; its labels by name (`LABEL_NAMES`).

  The file is read and checked by the reader of a user's files
  (`text_classification_files.read_text_classification`) with the task's
  columns, looked up by their header names, so the MNLI layout (`index
  promptID ... sentence1 sentence2 label1 ... gold_label`) reads the same for
  train and dev. Quotes are text, not quoting (MRPC and MNLI sentences start
  with `"`), as in GLUE's own reader. Unlike a user's file, a GLUE file may
  hold an empty sentence (`allow_empty_text`). Labels must be the task's:
  ids in SST-2 and MRPC files, names in MNLI's, read as the names of
  `LABEL_NAMES` (the tensorflow-datasets order), not as a user's dataset's
  labels, which are whatever train holds.

  Raises:
    DataError (a ValueError): the file is not UTF-8, a column is missing, a
      row has the wrong number of fields, or a label is empty or not one of
      the task's; the message names the file and the 1-based line.
  """
  task = canonical_task(task)
  col_a, col_b, col_label = _TASKS[task].columns
  split = text_classification_files.read_text_classification(
      path, text_column=col_a, text_b_column=col_b, label_column=col_label,
      allow_empty_text=True)
  allowed = _label_values(task)
  names = dict(zip(allowed, LABEL_NAMES[task]))
  labels = []
  for label, line in zip(split.labels, split.line_numbers):
    if label not in names:
      raise errors.DataError(
          f"{path}, line {line}: the label {label!r} is not a GLUE {task} "
          f"label. Expected one of {allowed} in the column {col_label!r}.",
          path=path, line=line)
    labels.append(names[label])
  split.labels = labels
  return split


def read_mnli_json(path) -> examples_lib.TextClassificationExamples:
  """Reads an MNLI sample `{"i": {"text_a", "text_b", "label"}}`, by key.

  Its own small reader: the file is one JSON object keyed by example index,
  not JSONL (one object per line), so `read_text_classification` cannot read
  it. The examples have no line numbers.
  """
  with tf.io.gfile.GFile(path, "r") as f:
    content = json.load(f)
  sentences_a, sentences_b, labels = [], [], []
  for key in sorted(content, key=int):
    example = content[key]
    where = f"{path} example {key!r}"
    try:
      sentences_a.append(example["text_a"])
      sentences_b.append(example["text_b"])
      label = example["label"]
    except (KeyError, TypeError):
      raise ValueError(
          f"{where} must be an object with text_a, text_b and label; "
          f"received {example!r}.") from None
    if label not in LABEL_NAMES["mnli"]:
      raise ValueError(f"{where}: label {label!r} is not one of "
                       f"{list(LABEL_NAMES['mnli'])}.")
    labels.append(label)
  return examples_lib.TextClassificationExamples(
      path=path, texts_a=sentences_a, texts_b=sentences_b, labels=labels,
      line_numbers=None)


def _local_file(data_dir, task, file_name):
  """`data_dir/<GLUE task dir>/file_name`, else `data_dir/file_name`."""
  for path in (os.path.join(data_dir, _TASKS[task].glue_dir, file_name),
               os.path.join(data_dir, file_name)):
    if tf.io.gfile.exists(path):
      return path
  return None


class Glue:
  """A GLUE task as a dataset a text classification task reads.

  Args:
    task: 'sst2', 'mrpc' or 'mnli' (any case; 'SST-2' works).
    data_dir: for 'tsv' and 'mnli_json', the GLUE root holding `SST-2/`,
      `MRPC/` and `MNLI/` (or one task's directory; any file system that
      `tf.io.gfile` reads); for 'tfds', the tensorflow-datasets data
      directory (None: its default).
    source: 'tsv', 'mnli_json', 'tfds', or 'auto': with `data_dir`, the TSV
      file if present, else (MNLI) the sample JSON; without `data_dir`,
      tensorflow-datasets.

  Local files are read once per object (`examples`); tensorflow-datasets is
  read as a stream (`tfds_examples`).
  """

  def __init__(self, task, data_dir=None, source="auto"):
    if source not in SOURCES:
      raise ValueError(
          f"source must be one of {SOURCES}; received {source!r}.")
    if source in ("tsv", "mnli_json") and data_dir is None:
      raise ValueError(
          f"source={source!r} needs data_dir, the GLUE root directory.")
    self.glue_task = canonical_task(task)
    self.data_dir = data_dir
    self.source = source
    self.name = f"glue/{self.glue_task}"
    self._examples = {}

  @property
  def label_names(self):
    """The label names, indexed by label id (tensorflow-datasets' order)."""
    return LABEL_NAMES[self.glue_task]

  @property
  def is_pair(self):
    return is_pair_task(self.glue_task)

  @property
  def in_memory(self):
    """Whether the splits are read as lists (local files), not streamed."""
    return self.data_dir is not None and self.source != "tfds"

  @property
  def fingerprint_name(self):
    """What names the data in a teacher cache's fingerprint: the task."""
    return self.glue_task

  @property
  def title(self):
    return f"GLUE {self.glue_task}"

  @property
  def short_name(self):
    return self.glue_task

  def split_name(self, split):
    """The tensorflow-datasets name of `split` (`canonical_split`)."""
    return canonical_split(self.glue_task, split)

  def examples(self, split) -> examples_lib.TextClassificationExamples:
    """The examples of `split`, in file order (read once).

    Raises:
      ValueError: an unknown split, or a malformed file (a TSV file:
        `DataError`, naming the file and the line).
      FileNotFoundError: the split's local file is not in `data_dir`.
    """
    split = self.split_name(split)
    if split not in self._examples:
      self._examples[split] = self._read(split)
    return self._examples[split]

  def _read(self, split):
    if not self.in_memory:
      rows = list(self.tfds_examples(split).as_numpy_iterator())
      names = self.label_names
      return examples_lib.TextClassificationExamples(
          path=_TASKS[self.glue_task].tfds_name,
          texts_a=[r["sentence_a"].decode("utf-8") for r in rows],
          texts_b=([r["sentence_b"].decode("utf-8") for r in rows]
                   if self.is_pair else None),
          labels=[names[int(r["label"])] for r in rows], line_numbers=None)
    task, data_dir, source = self.glue_task, self.data_dir, self.source
    tried = []
    if source in ("auto", "tsv"):
      file_name = _TSV_FILES[task][split]
      path = _local_file(data_dir, task, file_name)
      if path:
        return read_glue_tsv(task, path)
      tried.append(file_name)
    if source in ("auto", "mnli_json"):
      if task == "mnli" and split in _MNLI_JSON_FILES:
        file_name = _MNLI_JSON_FILES[split]
        path = _local_file(data_dir, task, file_name)
        if path:
          return read_mnli_json(path)
        tried.append(file_name)
      elif source == "mnli_json":
        raise ValueError(
            f"source='mnli_json' has only MNLI {sorted(_MNLI_JSON_FILES)}; "
            f"received {task} {split}.")
    raise FileNotFoundError(
        f"No GLUE {task} {split} file in {data_dir}: looked for {tried} in "
        f"{os.path.join(data_dir, _TASKS[task].glue_dir)} and {data_dir}. "
        "Pass source='tfds' to read tensorflow-datasets instead.")

  def tfds_examples(self, split):
    """`split` from tensorflow-datasets, as a stream.

    Returns:
      An unbatched `tf.data.Dataset` of `{'sentence_a': string,
      'sentence_b': string ('' for SST-2), 'label': int32}`, labels by id.
    """
    # Imported here: only this source needs it, and it is slow to import.
    import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
    spec = _TASKS[self.glue_task]
    dataset, info = tfds.load(spec.tfds_name, split=self.split_name(split),
                              data_dir=self.data_dir, with_info=True,
                              shuffle_files=False)
    names = tuple(info.features["label"].names)
    if names != self.label_names:
      raise ValueError(
          f"tensorflow-datasets {spec.tfds_name} labels are {names}; this "
          f"package expects {self.label_names}.")
    key_a, key_b = spec.tfds_features

    def convert(example):
      return {
          "sentence_a": example[key_a],
          "sentence_b": example[key_b] if key_b else tf.constant(""),
          "label": tf.cast(example["label"], tf.int32),
      }

    return dataset.map(convert, num_parallel_calls=tf.data.AUTOTUNE)

  def num_train_examples(self):
    """Training examples: the local file's, or tensorflow-datasets' size."""
    if not self.in_memory:
      return TRAIN_SIZES[self.glue_task]
    return len(self.examples("train"))

  def describe(self, eval_split):
    where = (os.path.join(self.data_dir, "") if self.in_memory else
             "tensorflow-datasets")
    return (f"GLUE {self.glue_task} from {where} (evaluated on "
            f"{eval_split})")
