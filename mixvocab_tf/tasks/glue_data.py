"""GLUE SST-2, MRPC and MNLI: one reader over three sources, and a pair featurizer.

The paper (Zhao et al., EACL 2021, §4.2, Table 2) fine-tunes students on SST-2,
MRPC and MNLI. `load_glue` reads a task split from any of:

- `tsv`: GLUE-format directories as GLUE's download script writes them
  (`SST-2/{train,dev}.tsv`, `MRPC/{train,dev}.tsv`,
  `MNLI/{train,dev_matched,dev_mismatched}.tsv`); columns are found by header name;
- `mnli_json`: the MNLI sample files `MNLI/{train_sample,dev_sample}.json`
  (`{"i": {"text_a", "text_b", "label"}}`), for machines without the full set;
- `tfds`: tensorflow-datasets `glue/sst2`, `glue/mrpc`, `glue/mnli`.

and gives the same examples whatever the source:
`{'sentence_a': string [], 'sentence_b': string [] ('' for SST-2), 'label': int32 []}`
with the tensorflow-datasets label order (SST-2 0 negative / 1 positive; MRPC
0 not_equivalent / 1 equivalent; MNLI 0 entailment / 1 neutral / 2 contradiction).

`glue_featurizer` packs `[CLS] A [SEP] B [SEP]` in graph with tensorflow_text: the
round-robin trimmer cuts the longer sentence first, as BERT's `_truncate_seq_pair`.
"""

import csv
import json
import os

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.tasks import snips_data

DEFAULT_SEQ_LENGTH = 128
SOURCES = ("auto", "tsv", "mnli_json", "tfds")
#: Features the encoder takes; `label` is the other key of a featurized example.
MODEL_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")

LABEL_NAMES = {
    "sst2": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "mnli": ("entailment", "neutral", "contradiction"),
}

# Per task: GLUE directory, TSV columns (sentence a, sentence b or None, label),
# how the label column is written, tensorflow-datasets name and feature names.
_TASKS = {
    "sst2": dict(
        glue_dir="SST-2", columns=("sentence", None, "label"), label_kind="index",
        tfds_name="glue/sst2", tfds_features=("sentence", None)),
    "mrpc": dict(
        glue_dir="MRPC", columns=("#1 String", "#2 String", "Quality"),
        label_kind="index", tfds_name="glue/mrpc",
        tfds_features=("sentence1", "sentence2")),
    "mnli": dict(
        glue_dir="MNLI", columns=("sentence1", "sentence2", "gold_label"),
        label_kind="name", tfds_name="glue/mnli",
        tfds_features=("premise", "hypothesis")),
}

# Canonical split (the tensorflow-datasets name) -> file name, per source.
_SPLIT_FILES = {
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
  """Whether `task` classifies sentence pairs (MRPC, MNLI) or single sentences."""
  return _TASKS[canonical_task(task)]["columns"][1] is not None


def canonical_split(task, split):
  """The tensorflow-datasets split name for `split` of `task`.

  'dev' means 'validation'; for MNLI, 'validation' and 'dev' mean the matched set.
  """
  task = canonical_task(task)
  name = _SPLIT_ALIASES.get(split, split)
  if task == "mnli" and name == "validation":
    name = "validation_matched"
  if name not in _SPLIT_FILES[task]:
    raise ValueError(
        f"Unknown split {split!r} for GLUE {task}; expected one of "
        f"{sorted(_SPLIT_FILES[task])} (or 'dev'/'validation'). Test splits have no "
        "public labels and are not read.")
  return name


def _label_id(task, value, where):
  names = LABEL_NAMES[task]
  if _TASKS[task]["label_kind"] == "name":
    if value not in names:
      raise ValueError(f"{where}: label {value!r} is not one of {list(names)}.")
    return names.index(value)
  if value not in [str(i) for i in range(len(names))]:
    raise ValueError(
        f"{where}: label {value!r} is not one of "
        f"{[str(i) for i in range(len(names))]}.")
  return int(value)


def read_glue_tsv(task, path):
  """Reads a GLUE TSV file into (sentences_a, sentences_b, labels).

  Columns are looked up by their header name, so the MNLI layout (`index promptID
  ... sentence1 sentence2 label1 ... gold_label`) is read the same way for train
  and dev. Quotes are data, not quoting (MRPC and MNLI sentences start with `"`),
  as in GLUE's own reader. `sentences_b` is all '' for single-sentence tasks.

  Raises:
    ValueError: a column is missing, a row has the wrong number of fields, or a
      label is unknown; the message names the file and the 1-based line.
  """
  task = canonical_task(task)
  col_a, col_b, col_label = _TASKS[task]["columns"]
  sentences_a, sentences_b, labels = [], [], []
  with tf.io.gfile.GFile(path, "rb") as f:
    # Split on '\n' only: str.splitlines() would also break sentences at the
    # Unicode separators (U+2028, U+0085) that some MNLI sentences contain.
    lines = [line.rstrip("\r") for line in
             f.read().decode("utf-8-sig").split("\n")]
  reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
  header = next(reader, None)
  if header is None:
    raise ValueError(f"{path} is empty; expected a GLUE {task} TSV with a header.")
  wanted = [c for c in (col_a, col_b, col_label) if c is not None]
  missing = [c for c in wanted if c not in header]
  if missing:
    raise ValueError(
        f"{path} has no column {missing}; expected a GLUE {task} header with "
        f"{wanted}, received {header}.")
  index = {c: header.index(c) for c in wanted}
  for line_number, row in enumerate(reader, start=2):
    if not row:
      continue
    if len(row) != len(header):
      raise ValueError(
          f"{path} line {line_number} has {len(row)} fields; the header has "
          f"{len(header)}.")
    sentences_a.append(row[index[col_a]])
    sentences_b.append(row[index[col_b]] if col_b else "")
    labels.append(_label_id(task, row[index[col_label]],
                            f"{path} line {line_number}"))
  return sentences_a, sentences_b, labels


def read_mnli_json(path):
  """Reads an MNLI sample file `{"i": {"text_a", "text_b", "label"}}`, in key order."""
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
          f"{where} must be an object with text_a, text_b and label; received "
          f"{example!r}.") from None
    labels.append(_label_id("mnli", label, where))
  return sentences_a, sentences_b, labels


def _from_lists(sentences_a, sentences_b, labels):
  return tf.data.Dataset.from_tensor_slices({
      "sentence_a": tf.constant(sentences_a, tf.string),
      "sentence_b": tf.constant(sentences_b, tf.string),
      "label": tf.constant(np.asarray(labels, np.int32)),
  })


def _local_file(data_dir, task, file_name):
  """`data_dir/<GLUE dir>/file` or, if data_dir is the task directory, `data_dir/file`."""
  for path in (os.path.join(data_dir, _TASKS[task]["glue_dir"], file_name),
               os.path.join(data_dir, file_name)):
    if tf.io.gfile.exists(path):
      return path
  return None


def _load_tfds(task, split, data_dir):
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  spec = _TASKS[task]
  dataset, info = tfds.load(
      spec["tfds_name"], split=split, data_dir=data_dir, with_info=True,
      shuffle_files=False)
  names = tuple(info.features["label"].names)
  if names != LABEL_NAMES[task]:
    raise ValueError(
        f"tensorflow-datasets {spec['tfds_name']} labels are {names}; this package "
        f"expects {LABEL_NAMES[task]}.")
  key_a, key_b = spec["tfds_features"]

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
    split: 'train', 'validation'/'dev'; for MNLI also 'validation_matched'/
      'dev_matched' (what 'validation' means) and 'validation_mismatched'.
    data_dir: for 'tsv' and 'mnli_json', the GLUE root holding `SST-2/`, `MRPC/`,
      `MNLI/` (or one task's directory); for 'tfds', the tensorflow-datasets data
      directory (None: its default).
    source: 'tsv', 'mnli_json', 'tfds', or 'auto': with `data_dir`, the TSV file if
      present, else (MNLI) the sample JSON; without `data_dir`, tensorflow-datasets.

  Returns:
    (dataset, label_names): an unbatched `tf.data.Dataset` in file order of
    `{'sentence_a': string, 'sentence_b': string, 'label': int32}` and the tuple of
    label names indexed by label id.

  Raises:
    ValueError: unknown task, split or source, or a malformed file.
    FileNotFoundError: the local file for the split is not in `data_dir`.
  """
  task = canonical_task(task)
  split = canonical_split(task, split)
  if source not in SOURCES:
    raise ValueError(f"source must be one of {SOURCES}; received {source!r}.")
  if source == "tfds" or (source == "auto" and data_dir is None):
    return _load_tfds(task, split, data_dir), LABEL_NAMES[task]
  if data_dir is None:
    raise ValueError(f"source={source!r} needs data_dir, the GLUE root directory.")

  tried = []
  if source in ("auto", "tsv"):
    file_name = _SPLIT_FILES[task][split]
    path = _local_file(data_dir, task, file_name)
    if path:
      return _from_lists(*read_glue_tsv(task, path)), LABEL_NAMES[task]
    tried.append(file_name)
  if source in ("auto", "mnli_json"):
    if task != "mnli" or split not in _MNLI_JSON_FILES:
      if source == "mnli_json":
        raise ValueError(
            f"source='mnli_json' has only MNLI {sorted(_MNLI_JSON_FILES)}; "
            f"received {task} {split}.")
    else:
      file_name = _MNLI_JSON_FILES[split]
      path = _local_file(data_dir, task, file_name)
      if path:
        return _from_lists(*read_mnli_json(path)), LABEL_NAMES[task]
      tried.append(file_name)
  raise FileNotFoundError(
      f"No GLUE {task} {split} file in {data_dir}: looked for {tried} in "
      f"{os.path.join(data_dir, _TASKS[task]['glue_dir'])} and {data_dir}. Pass "
      "source='tfds' to read tensorflow-datasets instead.")


def glue_featurizer(vocab, seq_length=DEFAULT_SEQ_LENGTH, pair=True,
                    lower_case=True):
  """Returns a function packing GLUE examples into encoder features, in graph.

  `[CLS] A [SEP] B [SEP]` with type ids 0 on [CLS], A and the first [SEP] and 1 on
  B and its [SEP]; `[CLS] A [SEP]` when `pair` is False (`sentence_b` is ignored).
  When the pieces do not fit, the longer sentence is cut first (round robin, ties
  leaving A one piece longer: the same lengths as BERT's `_truncate_seq_pair`).

  Args:
    vocab: the student WordPiece vocabulary (path or token list).
    seq_length: packed length, special tokens included.
    pair: True for MRPC and MNLI (see `is_pair_task`).
    lower_case: lower-case, NFD-normalize and strip accents (uncased BERT).

  Returns:
    `featurize(example) -> features` for a single example or a batch (map it
    before or after `batch`): `input_word_ids`, `input_mask`, `input_type_ids`
    (int32 [..., seq_length]) and `label` (int32) when the example has one.
  """
  num_special = 3 if pair else 2
  if seq_length <= num_special:
    raise ValueError(
        f"seq_length must leave room for {num_special} special tokens and text; "
        f"received {seq_length}.")
  tokenizer, special_ids = snips_data.wordpiece_tokenizer(vocab, lower_case)
  trimmer = tf_text.RoundRobinTrimmer(max_seq_length=seq_length - num_special)
  cls_id, sep_id = special_ids["[CLS]"], special_ids["[SEP]"]
  pad_id = special_ids["[PAD]"]

  def featurize(example):
    sentence_a = tf.convert_to_tensor(example["sentence_a"])
    is_scalar = sentence_a.shape.rank == 0
    texts = ["sentence_a", "sentence_b"] if pair else ["sentence_a"]
    segments = []
    for key in texts:
      text = tf.convert_to_tensor(example[key])
      if is_scalar:
        text = tf.expand_dims(text, 0)
      segments.append(tokenizer.tokenize(text))
    segments = trimmer.trim(segments)
    ids, type_ids = tf_text.combine_segments(
        segments, start_of_sequence_id=cls_id, end_of_segment_id=sep_id)
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
