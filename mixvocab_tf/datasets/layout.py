"""Finding a dataset's splits in its directory, and its kind and format.

A dataset is one directory holding the splits `train`, `validation` (or
`dev`, or `valid`) and optionally `test`: files ending in `.csv`, `.tsv` or
`.jsonl`, directories in the Goo et al. layout (`seq.in`, `seq.out`,
`label`), or Rasa NLU YAML files (`.yml`, `.yaml`). `find_dataset` says
where each split is, which kind of task the dataset is for and in which
format, or why it cannot (a missing split, two candidates for one, mixed
formats, a near-miss name such as `val.csv`).
"""

import dataclasses
import os

import tensorflow as tf

from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import records

SPLITS = ("train", "validation", "test")
#: File (or directory) names accepted for each split, before the extension.
SPLIT_NAMES = {
    "train": ("train",),
    "validation": ("validation", "dev", "valid"),
    "test": ("test",),
}
# Names users give to splits that are not accepted, and the split meant.
_NEAR_MISSES = {
    "training": "train",
    "val": "validation",
    "eval": "validation",
    "evaluation": "validation",
    "testing": "test",
    # `rasa data split nlu` writes these.
    "training_data": "train",
    "test_data": "test",
}


@dataclasses.dataclass
class DatasetFiles:
  """Where the splits of a dataset are.

  Attributes:
    kind: `examples.TEXT_CLASSIFICATION` or `examples.INTENT_SLOT`.
    data_dir: the dataset directory.
    files: split ('train', 'validation', 'test') -> file, or directory for
      the Goo layout; 'test' is absent when there is none.
    format: 'csv', 'tsv', 'jsonl', 'goo' or 'rasa'.
  """
  kind: str
  data_dir: str
  files: dict
  format: str


def holds_goo_files(directory: str) -> bool:
  return any(errors.isfile(os.path.join(directory, name))
             for name in intent_slot_files.GOO_FILES)


def _accepted_names(split: str) -> str:
  names = SPLIT_NAMES[split]
  names = (" or ".join(map(repr, names)) if len(names) < 3 else
           ", ".join(map(repr, names[:-1])) + f" or {names[-1]!r}")
  return (f"a file or directory named {names}: a .csv, .tsv or .jsonl file, "
          "a Rasa .yml file, a .conll file, or a directory holding seq.in, "
          "seq.out and label")


def _label_studio_exports(data_dir: str) -> list[str]:
  """The .json files of `data_dir` that begin with a JSON list (a Label
  Studio export's form; `label_studio`)."""
  found = []
  for name in sorted(errors.listdir(data_dir)):
    full = os.path.join(data_dir, name)
    if name.lower().endswith(".json") and errors.isfile(full):
      with tf.io.gfile.GFile(full, "rb") as f:
        if f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
          found.append(name)
  return found


def _near_miss_hint(data_dir: str, split: str) -> str:
  """Advice on entries that look like `split` but are not accepted names."""
  hints = []
  exports = _label_studio_exports(data_dir)
  for name in sorted(errors.listdir(data_dir)):
    full = os.path.join(data_dir, name)
    lower = name.lower()
    stem, ext = lower.split(".", 1) if "." in lower else (lower, "")
    if stem not in SPLIT_NAMES[split] and _NEAR_MISSES.get(stem) != split:
      continue
    if tf.io.gfile.isdir(full):
      if holds_goo_files(full):
        hints.append(f"Rename {name}/ to {SPLIT_NAMES[split][-1]}/.")
      else:
        hints.append(f"The directory {name}/ holds none of seq.in, seq.out "
                     "and label.")
    elif ext == "json" and name in exports:
      continue  # Said after the hints (`find_dataset`).
    elif ext == "json":
      hints.append(f"The file {name} is not an accepted name: if it holds "
                   f"one JSON object per line, rename it to {stem}.jsonl.")
    elif ext in records.FORMATS + rasa_files.EXTENSIONS:
      hints.append(f"Rename {name} to {SPLIT_NAMES[split][0]}.{ext}.")
    elif conll := intent_slot_files.conll_hint(full, f"The file {name}"):
      hints.append(conll)
    else:
      hints.append(f"The file {name} does not end in .csv, .tsv, .jsonl, "
                   ".yml or .conll.")
  return " ".join(hints)


def peek_jsonl_kind(path: str) -> str:
  """INTENT_SLOT if the first object of `path` has a key 'tokens', 'tags' or
  'spans', or doccano's 'entities' or 'cats', or Hugging Face's
  'ner_tags', or a 'label' whose first
  list that is not empty holds spans (doccano's sequence-labelling export)
  (`intent_slot_files`); Prodigy's 'tokens' (objects) say nothing without
  its 'spans'.

  ('intent' alone is not enough: {"text": ..., "intent": ...} is a text
  classification file read with label_column='intent'; nor is a 'label'
  list: doccano's text classification export writes ["positive"].)
  """
  rows = records.read_jsonl(path, "one JSON object per line")
  _, first = rows[0]
  if any(key in first for key in ("tags", "spans", "entities", "cats",
                                   intent_slot_files.HF_TAGS_KEY)):
    return examples.INTENT_SLOT
  if "tokens" in first and not intent_slot_files.is_prodigy_tokens(
      first["tokens"]):
    return examples.INTENT_SLOT
  if "text" in first and isinstance(first.get("label"), list):
    for _, row in rows:
      label = row.get("label")
      if isinstance(label, list) and label:
        if intent_slot_files.is_span_list(label):
          return examples.INTENT_SLOT
        break
  return examples.TEXT_CLASSIFICATION


def split_candidates(data_dir: str) -> dict[str, list[tuple[str, str]]]:
  """Each split's candidate entries of `data_dir`: split -> [(name, format)]
  of the files (.csv, .tsv, .jsonl, Rasa's .yml / .yaml: 'rasa') and Goo
  directories named as the split
  (`SPLIT_NAMES`), in name order; other entries are left out."""
  candidates = {split: [] for split in SPLITS}
  for name in sorted(errors.listdir(data_dir)):
    full = os.path.join(data_dir, name)
    lower = name.lower()
    if tf.io.gfile.isdir(full):
      stem, fmt = lower, "goo"
      if not holds_goo_files(full):
        continue
    else:
      stem, ext = os.path.splitext(lower)
      fmt = ext.lstrip(".")
      if fmt in rasa_files.EXTENSIONS:
        fmt = rasa_files.FORMAT
      elif fmt not in records.FORMATS + (intent_slot_files.CONLL,):
        continue
    for split, names in SPLIT_NAMES.items():
      if stem in names:
        candidates[split].append((name, fmt))
  return candidates


def find_dataset(data_dir: str) -> DatasetFiles:
  """Finds the splits of the dataset in `data_dir`, and its kind and format.

  Split names: `train`; `validation`, `dev` or `valid`; `test` (optional).
  A split is a `.csv`, `.tsv` or `.jsonl` file (text classification, or
  intent-slot JSONL when the first object of train has a key `tokens`,
  `tags` or `spans`), a directory holding `seq.in`, `seq.out` or `label`
  (intent-slot, Goo et al. layout), a Rasa NLU `.yml` / `.yaml` file
  (intent-slot when an example of train marks an entity, an intent
  classifier's text classification otherwise), or a `.conll` file (a slot
  tagger's words and tags, `intent_slot_files`).

  Raises:
    DataError: `data_dir` is missing, has no train or validation split, has
      two candidates for one split, or mixes formats.
  """
  if not tf.io.gfile.isdir(data_dir):
    found = ("the path is a file, not a directory"
             if tf.io.gfile.exists(data_dir)
             else "the directory does not exist")
    raise errors.data_error(
        data_dir, None, found,
        "a dataset directory holding the splits train, validation (or dev, "
        "or valid) and optionally test", "Check the path.")
  candidates = split_candidates(data_dir)
  for split in SPLITS:
    if len(candidates[split]) > 1:
      names = [name + ("/" if fmt == "goo" else "")
               for name, fmt in candidates[split]]
      raise errors.data_error(
          data_dir, None,
          f"there are {len(names)} candidates for the {split} split: "
          f"{', '.join(names)}",
          f"one {split} split", "Remove or rename all but one of them.")
  for split in ("train", "validation"):
    if not candidates[split]:
      hint = _near_miss_hint(data_dir, split)
      fix = (hint + " " if hint else "") + (
          "Name the split's file or directory with one of these names.")
      rasa = (rasa_files.nlu_files(data_dir)
              if split == "train" and not candidates["test"] else [])
      if rasa:  # A Rasa project's data folder.
        names = [os.path.relpath(path, data_dir) for path in rasa]
        fix += (f" It holds Rasa NLU files ({', '.join(names[:3])}"
                f"{', ...' if len(names) > 3 else ''}): `mixvocab-split-data "
                f"--data={data_dir} --output_dir={data_dir.rstrip('/')}_split`"
                " writes train and validation splits from them for DATA_DIR.")
      exports = _label_studio_exports(data_dir) if split == "train" else []
      if exports:
        fix += (f" {exports[0]} holds a JSON list, as Label Studio's JSON "
                f"export does: `mixvocab-split-data --data="
                f"{os.path.join(data_dir, exports[0])} --output_dir="
                f"{data_dir.rstrip('/')}_split` writes train and validation "
                "splits from it for DATA_DIR.")
      if split == "validation" and candidates["train"]:
        # One labelled file is a common start: say how to split it.
        fix += (" Or, if train is all the labelled data you have, "
                f"`mixvocab-split-data --data={data_dir} --output_dir="
                f"{data_dir.rstrip('/')}_split` writes train and validation "
                "splits from it (stratified by label" + (
                    ", and a copy of test" if candidates["test"] else "") +
                ") for DATA_DIR.")
      raise errors.data_error(
          data_dir, None,
          f"there is no {split} split; the directory holds "
          f"{errors.list_directory(data_dir)}",
          f"for the {split} split {_accepted_names(split)}", fix)
  chosen = {split: found[0] for split, found in candidates.items() if found}
  formats = {fmt for _, fmt in chosen.values()}
  if len(formats) > 1:
    raise errors.data_error(
        data_dir, None,
        "the splits are in different formats: " +
        ", ".join(name + ("/" if fmt == "goo" else "")
                  for name, fmt in chosen.values()),
        "all splits in one format (CSV, TSV, JSONL, Rasa YAML, CoNLL or the "
        "seq.in / seq.out / label directories)", "Convert the odd ones out.")
  fmt = formats.pop()
  files = {split: os.path.join(data_dir, name)
           for split, (name, _) in chosen.items()}
  if fmt in ("goo", intent_slot_files.CONLL):
    kind = examples.INTENT_SLOT
  elif fmt == "jsonl":
    kind = peek_jsonl_kind(files["train"])
  elif fmt == rasa_files.FORMAT:
    kind = (examples.INTENT_SLOT if rasa_files.has_entities(files["train"])
            else examples.TEXT_CLASSIFICATION)
  else:
    kind = examples.TEXT_CLASSIFICATION
  return DatasetFiles(kind=kind, data_dir=data_dir, files=files, format=fmt)
