"""GLUE SST-2, MRPC and MNLI: one loader over three sources, and packing.

The paper (Zhao et al., EACL 2021, §4.2, Table 2) fine-tunes students on SST-2,
MRPC and MNLI. A task's name is a shortcut to a directory or a
tensorflow-datasets name: `load_glue` reads a task's split from any of

- `tsv`: GLUE-format directories as GLUE's download script writes them
  (`SST-2/{train,dev}.tsv`, `MRPC/{train,dev}.tsv`,
  `MNLI/{train,dev_matched,dev_mismatched}.tsv`), on any file system
  `tf.io.gfile` reads. They are read by the reader of a user's files,
  `user_data.read_text_classification` (`read_glue_tsv` names the task's
  columns and maps its labels to ids), so SST-2 given as a user's TSV or
  CSV is read, and refused, by the same code as SST-2 by name;
- `mnli_json`: the MNLI sample files `MNLI/{train_sample,dev_sample}.json`
  (`{"i": {"text_a", "text_b", "label"}}`), for machines without the full set,
  read by `read_mnli_json`;
- `tfds`: tensorflow-datasets `glue/sst2`, `glue/mrpc`, `glue/mnli`;

and gives the same examples whatever the source, `{'sentence_a': string [],
'sentence_b': string [] ('' for SST-2), 'label': int32 []}`, with the
tensorflow-datasets label order: SST-2 0 negative, 1 positive; MRPC
0 not_equivalent, 1 equivalent; MNLI 0 entailment, 1 neutral, 2 contradiction.

`text_classification_featurizer` packs `[CLS] A [SEP] B [SEP]` in graph with tensorflow_text;
its round-robin trimmer cuts the longer sentence first, as BERT's
`_truncate_seq_pair` does.
"""

import collections
import json
import os

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.tasks.finetuning import user_data
from mixvocab_tf.text import wordpiece

DEFAULT_SEQ_LENGTH = 128
SOURCES = ("auto", "tsv", "mnli_json", "tfds")
#: Features the encoder takes; `label` is the other key of a featurized
#: example.
MODEL_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")

LABEL_NAMES = {
    "sst2": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "mnli": ("entailment", "neutral", "contradiction"),
}

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


def _label_id(task, value, where):
  allowed = _label_values(task)
  if value not in allowed:
    raise ValueError(f"{where}: label {value!r} is not one of {allowed}.")
  return allowed.index(value)


def read_glue_tsv(task, path):
  """Reads a GLUE TSV file into (sentences_a, sentences_b, labels).

  The file is read and checked by the reader of a user's files
  (`user_data.read_text_classification`) with the task's columns, looked up
  by their header names, so the MNLI layout (`index promptID ... sentence1
  sentence2 label1 ... gold_label`) reads the same for train and dev. Quotes
  are text, not quoting (MRPC and MNLI sentences start with `"`), as in
  GLUE's own reader. Unlike a user's file, a GLUE file may start with a UTF-8
  byte-order mark and hold an empty sentence (`allow_bom`,
  `allow_empty_text`). Labels are then mapped to the fixed ids of
  `LABEL_NAMES` (tensorflow-datasets order), not to train's sorted labels as
  for a user's dataset. `sentences_b` is all '' for SST-2.

  Raises:
    user_data.DataError (a ValueError): the file is not UTF-8, a column is
      missing, a row has the wrong number of fields, or a label is empty or
      not one of the task's; the message names the file and the 1-based
      line.
  """
  task = canonical_task(task)
  col_a, col_b, col_label = _TASKS[task].columns
  split = user_data.read_text_classification(
      path, text_column=col_a, text_b_column=col_b, label_column=col_label,
      allow_bom=True, allow_empty_text=True)
  allowed = _label_values(task)
  ids = {value: i for i, value in enumerate(allowed)}
  labels = []
  for label, line in zip(split.labels, split.line_numbers):
    if label not in ids:
      raise user_data.DataError(
          f"{path}, line {line}: the label {label!r} is not a GLUE {task} "
          f"label. Expected one of {allowed} in the column {col_label!r}.",
          path=path, line=line)
    labels.append(ids[label])
  sentences_b = split.texts_b if col_b else [""] * len(split)
  return list(split.texts_a), list(sentences_b), labels


def read_mnli_json(path):
  """Reads an MNLI sample `{"i": {"text_a", "text_b", "label"}}`, by key.

  Its own small reader: the file is one JSON object keyed by example index,
  not JSONL (one object per line), so `user_data` cannot read it.
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
    labels.append(_label_id("mnli", label, where))
  return sentences_a, sentences_b, labels


def _from_lists(sentences_a, sentences_b, labels):
  return tf.data.Dataset.from_tensor_slices({
      "sentence_a": tf.constant(sentences_a, tf.string),
      "sentence_b": tf.constant(sentences_b, tf.string),
      "label": tf.constant(np.asarray(labels, np.int32)),
  })


def _local_file(data_dir, task, file_name):
  """`data_dir/<GLUE task dir>/file_name`, else `data_dir/file_name`."""
  for path in (os.path.join(data_dir, _TASKS[task].glue_dir, file_name),
               os.path.join(data_dir, file_name)):
    if tf.io.gfile.exists(path):
      return path
  return None


def _load_tfds(task, split, data_dir):
  # Imported here: only this source needs it, and it is slow to import.
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  spec = _TASKS[task]
  dataset, info = tfds.load(spec.tfds_name, split=split, data_dir=data_dir,
                            with_info=True, shuffle_files=False)
  names = tuple(info.features["label"].names)
  if names != LABEL_NAMES[task]:
    raise ValueError(
        f"tensorflow-datasets {spec.tfds_name} labels are {names}; this "
        f"package expects {LABEL_NAMES[task]}.")
  key_a, key_b = spec.tfds_features

  def convert(example):
    return {
        "sentence_a": example[key_a],
        "sentence_b": example[key_b] if key_b else tf.constant(""),
        "label": tf.cast(example["label"], tf.int32),
    }

  return dataset.map(convert, num_parallel_calls=tf.data.AUTOTUNE)


def load_glue(task, split, data_dir=None, source="auto"):
  """Loads one split of a GLUE task as sentence pairs with integer labels.

  Args:
    task: 'sst2', 'mrpc' or 'mnli' (any case; 'SST-2' works).
    split: 'train' or 'validation' ('dev'); for MNLI also
      'validation_matched' ('dev_matched', what 'validation' means) and
      'validation_mismatched' ('dev_mismatched').
    data_dir: for 'tsv' and 'mnli_json', the GLUE root holding `SST-2/`,
      `MRPC/` and `MNLI/` (or one task's directory; any file system that
      `tf.io.gfile` reads); for 'tfds', the tensorflow-datasets data
      directory (None: its default).
    source: 'tsv', 'mnli_json', 'tfds', or 'auto': with `data_dir`, the TSV
      file if present, else (MNLI) the sample JSON; without `data_dir`,
      tensorflow-datasets.

  Returns:
    (dataset, label_names): an unbatched `tf.data.Dataset`, in file order, of
    `{'sentence_a': string, 'sentence_b': string, 'label': int32}`, and the
    tuple of label names indexed by label id.

  Raises:
    ValueError: unknown task, split or source, or a malformed file (a TSV
      file: `user_data.DataError`, naming the file and the line).
    FileNotFoundError: the split's local file is not in `data_dir`.
  """
  task = canonical_task(task)
  split = canonical_split(task, split)
  if source not in SOURCES:
    raise ValueError(f"source must be one of {SOURCES}; received {source!r}.")
  if source == "tfds" or (source == "auto" and data_dir is None):
    return _load_tfds(task, split, data_dir), LABEL_NAMES[task]
  if data_dir is None:
    raise ValueError(
        f"source={source!r} needs data_dir, the GLUE root directory.")

  tried = []
  if source in ("auto", "tsv"):
    file_name = _TSV_FILES[task][split]
    path = _local_file(data_dir, task, file_name)
    if path:
      return _from_lists(*read_glue_tsv(task, path)), LABEL_NAMES[task]
    tried.append(file_name)
  if source in ("auto", "mnli_json"):
    if task == "mnli" and split in _MNLI_JSON_FILES:
      file_name = _MNLI_JSON_FILES[split]
      path = _local_file(data_dir, task, file_name)
      if path:
        return _from_lists(*read_mnli_json(path)), LABEL_NAMES[task]
      tried.append(file_name)
    elif source == "mnli_json":
      raise ValueError(
          f"source='mnli_json' has only MNLI {sorted(_MNLI_JSON_FILES)}; "
          f"received {task} {split}.")
  raise FileNotFoundError(
      f"No GLUE {task} {split} file in {data_dir}: looked for {tried} in "
      f"{os.path.join(data_dir, _TASKS[task].glue_dir)} and {data_dir}. "
      "Pass source='tfds' to read tensorflow-datasets instead.")


def text_classification_featurizer(vocab, seq_length=DEFAULT_SEQ_LENGTH, pair=True,
                    lower_case=True):
  """Returns a function packing GLUE examples into encoder features, in graph.

  `[CLS] A [SEP] B [SEP]`, type ids 0 on [CLS], A and the first [SEP] and 1 on
  B and its [SEP]; `[CLS] A [SEP]` when `pair` is False (`sentence_b` is then
  ignored). When the pieces do not fit, the longer sentence is cut first
  (round robin; a tie leaves A one piece longer), which gives the lengths of
  BERT's `_truncate_seq_pair`.

  Args:
    vocab: the student WordPiece vocabulary (path or token list).
    seq_length: packed length, special tokens included.
    pair: True for MRPC and MNLI (see `is_pair_task`).
    lower_case: lower-case, NFD-normalize and strip accents (uncased BERT).

  Returns:
    `featurize(example) -> features` for one example or a batch (map it before
    or after `batch`): `input_word_ids`, `input_mask`, `input_type_ids` (int32
    [..., seq_length]) and `label` (int32) when the example has one.
  """
  num_special = 3 if pair else 2
  if seq_length <= num_special:
    raise ValueError(
        f"seq_length must leave room for {num_special} special tokens and "
        f"text; received {seq_length}.")
  tokenizer, special_ids = wordpiece.fast_bert_tokenizer(vocab, lower_case)
  trimmer = tf_text.RoundRobinTrimmer(max_seq_length=seq_length - num_special)
  cls_id, sep_id = special_ids["[CLS]"], special_ids["[SEP]"]
  pad_id = special_ids["[PAD]"]
  keys = ("sentence_a", "sentence_b") if pair else ("sentence_a",)

  def featurize(example):
    is_scalar = tf.convert_to_tensor(example["sentence_a"]).shape.rank == 0
    segments = []
    for key in keys:
      text = tf.convert_to_tensor(example[key])
      segments.append(tokenizer.tokenize(
          tf.expand_dims(text, 0) if is_scalar else text))
    ids, type_ids = tf_text.combine_segments(
        trimmer.trim(segments), start_of_sequence_id=cls_id,
        end_of_segment_id=sep_id)
    input_word_ids, input_mask = tf_text.pad_model_inputs(
        ids, max_seq_length=seq_length, pad_value=pad_id)
    input_type_ids, _ = tf_text.pad_model_inputs(
        type_ids, max_seq_length=seq_length, pad_value=0)
    features = {
        "input_word_ids": tf.cast(input_word_ids, tf.int32),
        "input_mask": tf.cast(input_mask, tf.int32),
        "input_type_ids": tf.cast(input_type_ids, tf.int32),
    }
    if is_scalar:
      features = {k: tf.squeeze(v, 0) for k, v in features.items()}
    if "label" in example:
      features["label"] = tf.cast(example["label"], tf.int32)
    return features

  return featurize
