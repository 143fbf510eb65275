"""One labelled file split into train, validation and test.

The own-data job reads a dataset directory with a `validation` split (it
picks the teacher's and the student's best checkpoints on it). A user who
has one labelled file, one directory in the Goo et al. layout, or a dataset
directory with train (and test) but no validation, gets the splits from it
with `split_dataset` (`mixvocab-split-data`), as Model
Maker's `DataLoader.split` or scikit-learn's `train_test_split(...,
stratify=labels)` would give them:

- the file is read and checked as the job reads a split (`user_dataset`'s
  data contract: a broken record stops the split, naming its line);
- stratified by label (the intent, for intent and slots): of each label's n
  examples, round(n * fraction) go to validation (and to test), drawn with
  a seeded generator, but at least one stays in train; a label of fewer
  than 1 / (2 * fraction) examples stays wholly in train (the summary lists
  those labels);
- each split keeps the records' order in the file and the file's format:
  JSONL and Goo lines are copied as they are, CSV and TSV rows are written
  again under the same header (CSV quoted where a field needs it), a Rasa
  NLU file's (or folder's) examples are written as they are, under their
  intents, and its lookup tables to `lookups.yml` beside them, for
  `SLOT_VALUES` (synonyms and regexes are left out);
- a Label Studio JSON or JSON-MIN export (`label_studio`) is written as
  JSONL splits of the job's records (text, spans and intent, or text and
  label), its tasks without an annotation left out and counted, and the
  project's names to `label_studio.json` beside them (the own-data job
  writes its texts to label next as tasks that project imports).

The same file, fractions and seed give the same splits.
"""

import collections
import json
import dataclasses
import math
import os
import random
from typing import Callable

import tensorflow as tf

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import layout
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import records
from mixvocab_tf.datasets import text_classification_files

#: The file beside a Rasa source's splits holding its lookup tables.
LOOKUPS_YML = "lookups.yml"


@dataclasses.dataclass
class _Source:
  """A labelled file read for splitting.

  Attributes:
    kind: `examples.TEXT_CLASSIFICATION` or `examples.INTENT_SLOT`.
    format: 'csv', 'tsv', 'jsonl', 'goo' or 'rasa'.
    labels: each example's label (its intent for intent and slots).
    write: writes the examples at the given indices, in that order, as the
      split named by the first argument, into the directory of the second.
    lookups: a Rasa source's lookup tables ({name: [(value, line)]}).
    left_out: a Label Studio export's tasks without an annotation.
    lines_left_out: a JSONL file's lines answered 'reject' or 'ignore'
      (Prodigy's export; `records.accepted_rows`), in no split.
    names: a Label Studio project's names (`label_studio.read_export`),
      written beside the splits.
    slot_tagger: its queries have no intents (`labels`: each
      `examples.NO_INTENT`): a slot tagger's data.
  """
  kind: str
  format: str
  labels: list[str]
  write: Callable[[str, str, list[int]], str]
  lookups: dict | None = None
  left_out: int = 0
  lines_left_out: int = 0
  names: dict | None = None
  slot_tagger: bool = False


def _lines_of(line_numbers: list[int], lines: list[str],
              indices: list[int]) -> str:
  return "".join(lines[line_numbers[i] - 1] + "\n" for i in indices)


def _write_file(path: str, text: str) -> str:
  with tf.io.gfile.GFile(path, "w") as f:
    f.write(text)
  return path


def _jsonl_source(path: str, kind: str, labels: list[str],
                  data: examples_lib.TextClassificationExamples |
                  examples_lib.IntentSlotExamples,
                  slot_tagger: bool = False) -> _Source:
  """A JSONL file read as `data` (`examples`' type): its lines written as
  they are."""
  lines = decoding.read_lines(path, "one JSON object per line")
  def write(split, output_dir, indices):
    return _write_file(os.path.join(output_dir, f"{split}.jsonl"),
                       _lines_of(data.line_numbers, lines, indices))
  return _Source(kind, "jsonl", labels, write, slot_tagger=slot_tagger,
                 lines_left_out=len(data.left_out))


def _intents(data: examples_lib.IntentSlotExamples) -> list[str]:
  """Each query's intent, `examples.NO_INTENT` for a slot tagger's."""
  return list(intent_slot_files.as_slot_tagger(data).intents)


def _goo_source(path: str) -> _Source:
  data = intent_slot_files.read_intent_slot(path, require_labels=True,
                                            require_intents=False)
  lines = {name: decoding.read_lines(os.path.join(path, name), name)
           for name in intent_slot_files.GOO_FILES
           if errors.isfile(os.path.join(path, name))}
  def write(split, output_dir, indices):
    split_dir = os.path.join(output_dir, split)
    tf.io.gfile.makedirs(split_dir)
    for name, file_lines in lines.items():
      _write_file(os.path.join(split_dir, name),
                  _lines_of(data.line_numbers, file_lines, indices))
    return split_dir
  return _Source(examples_lib.INTENT_SLOT, "goo", _intents(data), write,
                 slot_tagger=data.intents is None)


def _conll_source(path: str) -> _Source:
  """A CoNLL file's sentences (a slot tagger's), written back as CoNLL."""
  data = intent_slot_files.read_intent_slot(path, require_labels=True,
                                            require_intents=False)
  def write(split, output_dir, indices):
    return _write_file(
        os.path.join(output_dir, f"{split}.{intent_slot_files.CONLL}"),
        intent_slot_files.to_conll([data.words[i] for i in indices],
                                   [data.tags[i] for i in indices]))
  return _Source(examples_lib.INTENT_SLOT, intent_slot_files.CONLL,
                 _intents(data), write, slot_tagger=True)


def _rasa_source(paths: list[str]) -> _Source:
  """Rasa NLU files read as one source: their intents' examples in path
  order, and their lookup tables (written beside the splits)."""
  with_examples = [path for path in paths if any(
      kind == "intent" for kind, *_ in rasa_files.nlu_items(path))]
  if not with_examples:
    rasa_files.read_rasa(paths[0])  # Raises: no intent with an example.
  found = [e for path in with_examples for e in rasa_files.read_rasa(path)]
  kind = (examples_lib.INTENT_SLOT if any(e.spans for e in found) else
          examples_lib.TEXT_CLASSIFICATION)
  if kind == examples_lib.INTENT_SLOT:  # Checks each example's entities.
    for path in with_examples:
      intent_slot_files.read_intent_slot(path)
  lookups = {}
  for path in paths:
    for name, entries in rasa_files.read_lookups(path).items():
      lookups.setdefault(name, []).extend(entries)
  def write(split, output_dir, indices):
    return _write_file(os.path.join(output_dir, split + ".yml"),
                       rasa_files.to_yaml([found[i] for i in indices]))
  return _Source(kind, rasa_files.FORMAT, [e.intent for e in found], write,
                 lookups)


def _label_studio_source(path: str, text_key: str, label_key: str,
                         text_b_column: str | None) -> _Source:
  """A Label Studio JSON export: its annotated tasks, written as JSONL
  splits of the job's own records (`label_studio`)."""
  if text_b_column:
    raise ValueError(
        f"--text_b_column={text_b_column!r}: a Label Studio export is read "
        "as one text per task, not as pairs.")
  found = label_studio.read_export(path, text_key, label_key)
  def write(split, output_dir, indices):
    return _write_file(
        os.path.join(output_dir, f"{split}.jsonl"),
        "".join(json.dumps(found["records"][i], ensure_ascii=False) + "\n"
                for i in indices))
  return _Source(found["kind"], label_studio.FORMAT, found["labels"], write,
                 left_out=found["left_out"], names=found["names"],
                 slot_tagger=(found["kind"] == examples_lib.INTENT_SLOT and
                              found["names"]["choices"] is None))


def _table_source(path: str, fmt: str, columns: dict) -> _Source:
  data = text_classification_files.read_text_classification(
      path, require_labels=True, **columns)
  _, header, rows = records.read_table(path, fmt)
  fields = dict(rows)  # line -> {column: field}
  def write(split, output_dir, indices):
    rows = [fields[data.line_numbers[i]] for i in indices]
    return _write_file(os.path.join(output_dir, f"{split}.{fmt}"),
                       records.write_table(
                           header, [[row[name] for name in header]
                                    for row in rows], fmt))
  return _Source(examples_lib.TEXT_CLASSIFICATION, fmt, list(data.labels),
                 write)


def read_source(path: str, text_column: str = "text",
                text_b_column: str | None = None,
                label_column: str = "label") -> _Source:
  """Reads and checks the labelled file (or Goo directory) `path`.

  Raises:
    DataError: the file breaks the data contract, or is not labelled.
  """
  if tf.io.gfile.isdir(path):
    if not layout.holds_goo_files(path) and rasa_files.nlu_files(path):
      return _rasa_source(rasa_files.nlu_files(path))
    return _goo_source(path)
  if not tf.io.gfile.exists(path):
    raise FileNotFoundError(
        f"--data={path!r} does not exist. Expected one labelled .csv, .tsv "
        "or .jsonl file, a Rasa NLU .yml file, a Label Studio JSON export, "
        "or a directory holding seq.in, seq.out and label.")
  if rasa_files.is_rasa(path):
    return _rasa_source([path])
  if label_studio.is_export(path):
    return _label_studio_source(path, text_column, label_column,
                                text_b_column)
  fmt = records.format_of(path,
                          records.FORMATS + (intent_slot_files.CONLL,),
                          intent_slot_files.conll_hint)
  if fmt == intent_slot_files.CONLL:
    return _conll_source(path)
  if (fmt == "jsonl" and
      layout.peek_jsonl_kind(path) == examples_lib.INTENT_SLOT):
    data = intent_slot_files.read_intent_slot(path, require_labels=True,
                                              require_intents=False)
    return _jsonl_source(path, examples_lib.INTENT_SLOT, _intents(data),
                         data, data.intents is None)
  columns = dict(text_column=text_column, text_b_column=text_b_column,
                 label_column=label_column)
  if fmt == "jsonl":
    data = text_classification_files.read_text_classification(
        path, require_labels=True, **columns)
    return _jsonl_source(path, examples_lib.TEXT_CLASSIFICATION,
                         list(data.labels), data)
  return _table_source(path, fmt, columns)


def stratified_indices(labels: list[str], fractions: dict[str, float],
                       seed: int) -> dict[str, list[int]]:
  """Each split's example indices, in file order (the module docstring).

  Args:
    labels: each example's label.
    fractions: split ('validation', 'test') -> the share of each label's
      examples it gets; train gets the rest.
    seed: seeds the draw.
  """
  by_label = collections.defaultdict(list)
  for i, label in enumerate(labels):
    by_label[label].append(i)
  rng = random.Random(seed)
  chosen = {split: [] for split in layout.SPLITS}
  for label in sorted(by_label):
    indices = by_label[label]
    rng.shuffle(indices)
    start = 0
    for split, fraction in fractions.items():
      # Half up, not Python's half to even: 5 examples at 0.1 give one.
      count = min(int(len(indices) * fraction + 0.5),
                  len(indices) - 1 - start)
      chosen[split] += indices[start:start + max(0, count)]
      start += max(0, count)
    chosen["train"] += indices[start:]
  return {split: sorted(indices) for split, indices in chosen.items()}


def _check_fraction(name: str, value: float, allow_zero: bool) -> None:
  if not 0.0 <= value < 1.0 or (value == 0.0 and not allow_zero):
    interval = "[0, 1)" if allow_zero else "(0, 1)"
    raise ValueError(f"{name} must be in {interval}; received {value}.")


def _train_of(path: str, test_fraction: float) -> tuple[str, str | None]:
  """(the file or Goo directory to split, the test split to copy or None).

  `path` itself, unless it is a dataset directory (not a Goo split): then
  its train split, and its test split, which is copied as it is.

  Raises:
    ValueError: the directory already has a validation split, has two
      candidates for a split, or has a test split while `test_fraction`
      asks for another.
    FileNotFoundError: the directory has no train split.
  """
  if not tf.io.gfile.isdir(path) or layout.holds_goo_files(path):
    return path, None
  found = layout.split_candidates(path)
  if not any(found.values()) and rasa_files.nlu_files(path):
    return path, None  # A Rasa project's data folder: its NLU files.
  for split, names in found.items():
    if len(names) > 1:
      raise ValueError(
          f"{path} has {len(names)} candidates for the {split} split: "
          f"{', '.join(name for name, _ in names)}. Expected one; give the "
          "file to split as --data.")
  if found["validation"]:
    raise ValueError(
        f"{path} already has a validation split, "
        f"{found['validation'][0][0]}: the own-data job reads the directory "
        "as it is. Expected a directory without one, or one labelled file.")
  if not found["train"]:
    raise FileNotFoundError(
        f"{path} holds no train split ({errors.list_directory(path)}). "
        "Expected one labelled file, a directory holding seq.in, seq.out "
        "and label, or a dataset directory with a train split.")
  test = os.path.join(path, found["test"][0][0]) if found["test"] else None
  if test and test_fraction:
    raise ValueError(
        f"{path} has a test split, {found['test'][0][0]}, which is copied "
        f"as it is; --test_fraction={test_fraction} would write another. "
        "Give --test_fraction=0, or split a directory without test.")
  return os.path.join(path, found["train"][0][0]), test


def _copy(source: str, target: str) -> None:
  """Copies a split file, or a Goo split directory's files."""
  if not tf.io.gfile.isdir(source):
    tf.io.gfile.copy(source, target)
    return
  tf.io.gfile.makedirs(target)
  for name in tf.io.gfile.listdir(source):
    if not tf.io.gfile.isdir(os.path.join(source, name)):
      tf.io.gfile.copy(os.path.join(source, name), os.path.join(target, name))


def split_dataset(path: str, output_dir: str,
                  validation_fraction: float = 0.1,
                  test_fraction: float = 0.0,
                  seed: int = 0,
                  text_column: str = "text",
                  text_b_column: str | None = None,
                  label_column: str = "label") -> dict:
  """Writes `output_dir`'s train, validation (and test) splits of `path`.

  Args:
    path: one labelled .csv, .tsv or .jsonl file, a Rasa NLU .yml / .yaml
      file or a folder of them (a Rasa project's `data`: its files with a
      key `nlu`, sub-folders too), a Label Studio JSON export (.json; the
      text under `text_column`, the label or intent the choice of the
      Choices control named `label_column`, else the only one), a
      directory in the Goo et al. layout (seq.in, seq.out, label), or a
      dataset directory with a train split and no validation split (its
      train is split, its test, if any, copied as it is).
    output_dir: the dataset directory to write (the own-data job's
      DATA_DIR); created if missing. It must hold no split yet.
    validation_fraction: each label's share that goes to validation.
    test_fraction: each label's share that goes to test; 0: no test split.
    seed: seeds the draw.
    text_column, text_b_column, label_column: as the own-data job reads a
      text classification file (`own_data_steps`).

  Returns:
    A summary (JSON): the file split, its kind and format, the written
    splits and their sizes, the copied test split, the seed and fractions,
    the labels that stayed wholly in train, and for a Rasa source with
    lookup tables their names and `lookups`, the file they are written to
    (`LOOKUPS_YML`, beside the splits, for `SLOT_VALUES`).

  Raises:
    DataError: `path` breaks the data contract.
    ValueError: a fraction outside its range, or a split that would be empty.
    FileExistsError: `output_dir` already holds a split.
  """
  _check_fraction("validation_fraction", validation_fraction, False)
  _check_fraction("test_fraction", test_fraction, True)
  if validation_fraction + test_fraction >= 1.0:
    raise ValueError(
        f"validation_fraction + test_fraction must be below 1 so that "
        f"train keeps examples; received {validation_fraction} + "
        f"{test_fraction}.")
  if tf.io.gfile.isdir(output_dir):
    taken = [name for name in tf.io.gfile.listdir(output_dir)
             if name.rstrip("/").split(".")[0].lower() in
             {n for names in layout.SPLIT_NAMES.values() for n in names}]
    if taken:
      raise FileExistsError(
          f"{output_dir} already holds {', '.join(sorted(taken))}. Expected a "
          "new or empty directory: give another --output_dir, or remove "
          "those splits.")
  path, test_copy = _train_of(path, test_fraction)
  source = read_source(path, text_column, text_b_column, label_column)
  fractions = {"validation": validation_fraction}
  if test_fraction:
    fractions["test"] = test_fraction
  indices = stratified_indices(source.labels, fractions, seed)
  counts = collections.Counter(source.labels)
  for split in fractions:
    if not indices[split]:
      raise ValueError(
          f"{path}: no label has enough examples for the {split} split at "
          f"{fractions[split]} of each label ({len(source.labels)} examples, "
          f"the most of one label {max(counts.values())}). Expected at least "
          f"{max(2, math.ceil(0.5 / fractions[split]))} examples of one label "
          "at this fraction: give a larger fraction or more examples.")
  tf.io.gfile.makedirs(output_dir)
  written = {split: source.write(split, output_dir, indices[split])
             for split in layout.SPLITS
             if split == "train" or split in fractions}
  copied = {}
  if test_copy:
    copied["test"] = os.path.join(output_dir, os.path.basename(test_copy))
    _copy(test_copy, copied["test"])
  lookups = {}
  if source.lookups:  # Beside the splits, for SLOT_VALUES.
    lookups = {"lookup_tables": sorted(source.lookups),
               "lookups": _write_file(
                   os.path.join(output_dir, LOOKUPS_YML),
                   rasa_files.to_lookups_yaml(source.lookups))}
  if source.names:  # For the texts to label next, as tasks it imports.
    lookups["label_studio"] = _write_file(
        os.path.join(output_dir, label_studio.NAMES_JSON),
        json.dumps(source.names, indent=1) + "\n")
  in_validation = collections.Counter(
      source.labels[i] for i in indices["validation"])
  return {
      "input": path,
      "kind": source.kind,
      "format": source.format,
      "output_dir": output_dir,
      "seed": seed,
      "fractions": fractions,
      "files": written,
      "copied": copied,
      "examples": {split: len(indices[split]) for split in written},
      "labels": len(counts),
      "slot_tagger": source.slot_tagger,
      "labels_only_in_train": sorted(
          label for label in counts if not in_validation[label]),
      **lookups,
      **({"tasks_left_out": source.left_out} if source.left_out else {}),
      **({"lines_left_out": source.lines_left_out} if source.lines_left_out
         else {}),
  }
