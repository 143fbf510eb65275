"""A user's own dataset: its data contract, and reading and checking it whole.

`load_dataset(data_dir)` finds the splits (`layout`), reads each one
(`text_classification_files`, `intent_slot_files`) and checks them together
(labels that train lacks, a train split with one label, pairs in one split
and single texts in another, words the student cannot read), before any
training.

Data contract
-------------

A dataset is one directory. Two kinds of task are recognised.

**Text classification** (one text, or a pair of texts, to one label):

- files `train`, `validation` (or `dev`, or `valid`) and, optionally, `test`,
  each ending in `.csv`, `.tsv` or `.jsonl`, all splits in the same format;
- CSV and TSV files start with a header row naming the columns, once (a
  later row equal to the header, as when two files are joined, is refused).
  CSV follows the usual quoting rules (a field holding commas, double quotes
  or line breaks is quoted, and its double quotes are doubled). TSV is split
  on tabs only: quotes are ordinary characters, and a text may not contain a
  tab;
- JSONL files hold one JSON object per line; their keys are the columns;
- the text is in column `text`, or, for sentence pairs, in columns `text_a`
  and `text_b`; the label is in column `label`. Other names can be chosen with
  `text_column`, `text_b_column` and `label_column`. Other columns are
  ignored;
- a label is a class name, read as a string; surrounding spaces are dropped,
  and it may not hold a line break (a quoted CSV field may). In JSONL it may
  also be an integer (`0` reads as '0'), a whole float (`1.0` reads as '1',
  as pandas writes integers beside missing values), a boolean (`true`
  reads as 'true') or a list of one label (`["positive"]`, as doccano
  exports a text's label; `[]` is no label); Prodigy's choice
  (`"accept": ["positive"]`, textcat.manual) is read when there is no
  `label`;
- the `test` split may have no label column (or an empty label on every
  example): it is then used for predictions only;
- or Rasa NLU files (below) whose train marks no entity: an intent
  classifier's texts and intents.

**Intent detection and slot filling** (a query to one intent, and each word
of the query to one IOB slot tag), in one of three layouts:

- the Goo et al. (2018) / JointBERT layout: directories `train/`, `valid/`
  (or `dev/`, or `validation/`) and, optionally, `test/`, each holding three
  files with one query per line: `seq.in` (the words, separated by spaces),
  `seq.out` (one slot tag per word) and `label` (the intent). A `test/`
  directory may hold `seq.in` alone;
- JSONL files `train.jsonl`, `validation.jsonl` (or `dev.jsonl`, or
  `valid.jsonl`) and, optionally, `test.jsonl`, one object per line:
  `{"tokens": ["play", "jazz"], "tags": ["O", "B-genre"], "intent":
  "PlayMusic"}`, or the query as one text with its slots as character
  spans, as annotation tools (doccano, Prodigy, Label Studio) export them:
  `{"text": "play jazz", "spans": [[5, 9, "genre"]], "intent":
  "PlayMusic"}`, a span `[start, end, type]` or `{"start": 5, "end": 9,
  "label": "genre"}` (offsets count the text's characters from 0, the end
  excluded). doccano's "Intent Detection and Slot Filling" JSONL export is
  read as it is: `{"text": ..., "entities": [[5, 9, "genre"]], "cats":
  ["PlayMusic"]}` (the spans as `entities`, the intent as `cats`, a list of
  one; its other keys are not read), and so are its relation-mode spans
  `{"start_offset": 5, "end_offset": 9, "label": "genre"}`; and Prodigy's
  (`prodigy db-out` of `ner.manual`: `{"text", "tokens", "spans":
  [{"start", "end", "label", ...}], "answer"}`, its token objects not
  read; an intent picked in a choice block as `"accept": ["PlayMusic"]`).
  In any JSONL file a line whose `answer` is 'reject' or 'ignore'
  (Prodigy's) is left out, and `UserDataset.left_out_warning()` counts
  them. The text's
  words are its whitespace words; a word is in a span when the span covers
  any of its characters (a span that leaves out a trailing comma tags the
  whole word), the first `B-<type>`, the others `I-<type>`, the rest `O`;
  a word in two spans is refused. Test lines may leave out `tags`
  (`spans`) and `intent`;
- a slot tagger's data (entity extraction: slots, no intents): train gives
  no query an intent (Goo splits without `label`, JSONL lines without
  `intent`; doccano's sequence-labelling export as it is, `{"text": ...,
  "label": [[5, 9, "genre"]]}`, the spans under `label`; Hugging Face
  datasets' `{"tokens": [...], "ner_tags": [...]}`, tag names, not class
  ids), or CoNLL files
  `train.conll`, `validation.conll` (or `dev.conll`, `valid.conll`),
  optional `test.conll`: one word a line with its IOB tag last on the line
  (`Paris B-LOC`, or CoNLL-2003's `Paris NNP I-NP I-LOC`, or Label
  Studio's CONLL2003 export's `Paris -X- _ B-LOC`), a blank line
  between sentences, `-DOCSTART-` lines left out; a test file may give
  the words alone. Every query then
  has the one intent `examples.NO_INTENT` ('none'), which the model
  answers to every query, and slot F1 is the score; no other split may
  give intents, and a line with an intent key but no intent in it (`[]`,
  null) is refused as unlabelled;
- Rasa NLU training data: YAML files `train.yml`, `validation.yml` (or
  `dev.yml`, or `valid.yml`; or `.yaml`) and, optionally, `test.yml`, each
  holding `nlu:` items `- intent: <name>` with `examples: |` and one
  `- <example>` a line, entities marked inline: `[jazz](genre)`,
  `[Berlin]{"entity": "city", "role": "departure"}` (`rasa_files`: a role
  joins the type as `city.departure`; synonyms' values, groups, lookup
  tables and regexes are not labels). Read as intent-slot when an example
  of train marks an entity, as text classification otherwise;
- a JSONL dataset is read as intent-slot when the first object of its
  train file has a key `tokens`, `tags` or `spans` (or doccano's `entities`
  or `cats`, or a `label` list whose first non-empty one holds spans), as
  text classification
  otherwise (so `{"text": ..., "intent": ...}` is text classification,
  with `label_column="intent"`);
- slot tags are `O`, `B-<type>` or `I-<type>`; there is one per word. The
  task reads them as IOB2 (a span starts with `B-<type>`): an `I-<type>`
  that begins a span (IOB1, as CoNLL-2003 writes them) is read as
  `B-<type>`, the same span; BIOES (IOBES) and BILOU tags (`S-`, `E-`,
  `U-`, `L-`: spaCy's, Flair's) are read as IOB2 tags of the same spans;
  `UserDataset.iob_warning()` counts both;
- an intent is one name without spaces; a word holds no spaces.

**For every file**:

- UTF-8 (a leading byte-order mark, as Excel's "CSV UTF-8" writes, is
  dropped; UTF-16 and other encodings are refused); line ends `\\n` or
  `\\r\\n`;
- blank lines in CSV, TSV and JSONL files are skipped (line numbers in
  messages still count them); the three files of a Goo split are read line by
  line together, so they have no blank lines, except at their end;
- train and validation carry labels; every split has at least one example;
  train has at least two labels (an intent-slot train set may have a single
  intent if it has slot tags other than `O`);
- labels, intents and slot tags that occur in validation or test but not in
  train are allowed: the model cannot predict them, so they count as errors
  in the scores, and `UserDataset.warning()` lists them;
- texts may be in any script, but the student reads English: its WordPiece
  vocabulary turns a word of Chinese, Arabic, Cyrillic, ... or an emoji
  wholly into [UNK]. Such words are counted per split (whitespace words of
  the queries, or of `text` / `text_a` / `text_b`; `text.unreadable`), and
  `UserDataset.unreadable_warning()` names the splits where they are more
  than 2% of the words;
- a label (intent) may have few examples in train:
  `UserDataset.few_examples_warning()` names those with fewer than 5;
- labels (intents, slot types) may differ only in case or punctuation
  ('Positive' and 'positive'): each is a class of its own, and
  `UserDataset.spelling_warning()` names them;
- a validation or test text may also be in train, and train may give one
  text two labels: `UserDataset.overlap_warning()` counts both (texts
  compared lowercased, spaces collapsed);
- an example may be longer than the student's sequence: what falls past it
  is cut (a query's words past the cut are tagged 'O', a text's last pieces
  are not read). `UserDataset.long_examples(seq_length)` counts them, in the
  student's WordPieces, and `UserDataset.long_warning(...)` says how to
  lengthen the sequence; for intent and slots the own-data job lengthens
  it itself (`UserDataset.fitting_seq_length`, at most 128).

A file that breaks the contract raises `DataError`, whose message names the
file and the line, what was found there, what was expected, and how to fix it.

Example:
  dataset = load_dataset("/data/my_intents")
  print(dataset.summary())
  for warning in (dataset.warning(), dataset.iob_warning(),
                  dataset.left_out_warning(),
                  dataset.few_examples_warning(), dataset.overlap_warning(),
                  dataset.spelling_warning(), dataset.unreadable_warning()):
    if warning:
      print(warning)
  train = dataset.splits["train"]  # IntentSlotExamples: words, tags, intents
"""

import collections
import dataclasses
import functools
import os
import re
from typing import Iterator

from absl import logging
import numpy as np

from mixvocab_tf import assets
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import layout
from mixvocab_tf.datasets import out_of_scope as out_of_scope_lib
from mixvocab_tf.datasets import text_classification_files
from mixvocab_tf.datasets import unlabelled as unlabelled_lib
from mixvocab_tf.text import unreadable as unreadable_lib

#: `UserDataset.unreadable_warning` names a split when more than this share
#: of its words are wholly [UNK] to the student.
UNREADABLE_SHARE = 0.02
#: `UserDataset.long_warning` names a split when more than this share of its
#: examples are longer than the student reads (SNIPS train: 2 of 13,084).
LONG_SHARE = 0.01
#: `UserDataset.few_examples_warning` names the labels train has fewer
#: examples of than this (a rule of thumb, not a measurement of this
#: package's models).
FEW_EXAMPLES = 5
#: The longest sequence `UserDataset.long_warning` suggests: the students'
#: and the default teacher's position embeddings.
_MAX_SEQ_LENGTH = 512


#: Separators between two letters or digits of a name, which
#: `UserDataset.spellings` compares names without.
_SEPARATORS = re.compile(r"(?<=[^\W_])[\s_.-]+(?=[^\W_])")

#: What joins several labels into one name (ATIS's multi-intent
#: 'atis_flight#atis_airfare', spreadsheet exports' 'music;news'), which
#: `UserDataset.joined_labels` looks for.
_JOINERS = ("#", "+", "|", ";", ",", "/")


def _counts(values) -> dict[str, int]:
  """{value: count}, most frequent first, then by name."""
  counter = collections.Counter(values)
  return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def _split_words(data) -> Iterator[str]:
  """The whitespace words of a split: of its queries, or of its texts."""
  if isinstance(data, examples_lib.IntentSlotExamples):
    for words in data.words:
      yield from words
    return
  for texts in (data.texts_a, data.texts_b or ()):
    for text in texts:
      yield from text.split()


@dataclasses.dataclass
class UserDataset:
  """A checked dataset: its splits, label names, unseen labels, and words the
  student cannot read.

  Attributes:
    files: where the splits were found.
    splits: split name -> `TextClassificationExamples` or `IntentSlotExamples`.
    labels: the label names (text classification) or intents (intent-slot),
      sorted, from train only.
    slot_tags: intent-slot: 'O' first, then the other slot tags of train,
      sorted; None for text classification.
    unseen: split ('validation', 'test') -> {"labels": {name: examples},
      "slot_tags": {name: words}}: the labels (or intents) and slot tags of
      that split that train lacks, with their counts.
    unreadable: split -> {"words": its whitespace words, "unreadable": those
      the student vocabulary turns wholly into [UNK], "distinct_unreadable",
      "examples": {word: count} of the most frequent of them}
      (`text.unreadable.count_unreadable`); empty if not counted.
    vocab: the student vocabulary the words were read against (path or
      tokens); None: the shipped student's.
    slot_tagger: intent-slot: train gives no query an intent, so every
      query has the one intent `examples.NO_INTENT` and the slots are the
      task (entity extraction).
  """
  files: layout.DatasetFiles
  splits: dict
  labels: list[str]
  slot_tags: list[str] | None
  unseen: dict
  unreadable: dict = dataclasses.field(default_factory=dict)
  vocab: object = None
  slot_tagger: bool = False
  _pieces: dict | None = dataclasses.field(default=None, init=False,
                                           repr=False, compare=False)

  @property
  def kind(self) -> str:
    return self.files.kind

  def summary(self) -> dict:
    """Examples per split, label counts, pairs or not, unseen labels, words
    the student cannot read (JSON)."""
    train = self.splits["train"]
    if self.kind == examples_lib.TEXT_CLASSIFICATION:
      labeled = {split: data.labels is not None
                 for split, data in self.splits.items()}
      pair = train.texts_b is not None
    else:
      labeled = {split: data.intents is not None
                 for split, data in self.splits.items()}
      pair = None
    return {
        "kind": self.kind,
        "format": self.files.format,
        "data_dir": self.files.data_dir,
        "files": dict(self.files.files),
        "examples": {split: len(data) for split, data in self.splits.items()},
        "labeled": labeled,
        "pair": pair,
        "num_labels": len(self.labels),
        "slot_tagger": self.slot_tagger,
        "num_slot_tags": (len(self.slot_tags)
                          if self.slot_tags is not None else None),
        "unseen": {
            split: {
                "labels": dict(found["labels"]),
                "slot_tags": dict(found["slot_tags"]),
            } for split, found in self.unseen.items()
        },
        "unreadable_words": {
            split: dict(found, share=round(self._unreadable_share(split), 6),
                        examples=dict(found["examples"]))
            for split, found in self.unreadable.items()
        },
    }

  def _unreadable_share(self, split: str) -> float:
    found = self.unreadable[split]
    return found["unreadable"] / found["words"] if found["words"] else 0.0

  def warning(self, most: int = 10) -> str | None:
    """One message on every unseen label and slot tag; None if there is none.

    Per split: how many examples (and words) it costs, then the `most` most
    frequent unseen labels and tags; the rest are counted, not listed (all
    of them are in `unseen` and `summary()`).
    """
    label_word = "intent" if self.kind == examples_lib.INTENT_SLOT else "label"
    parts = []
    for split, found in self.unseen.items():
      items = [
          (count,
           f"{label_word} {name!r} ({count} example{'s' * (count != 1)})")
          for name, count in found["labels"].items()
      ]
      items += [
          (count, f"slot tag {name!r} ({count} word{'s' * (count != 1)})")
          for name, count in found["slot_tags"].items()
      ]
      if not items:
        continue
      items.sort(key=lambda item: -item[0])
      listed = ", ".join(text for _, text in items[:most])
      if len(items) > most:
        listed += f" and {len(items) - most} more"
      unseen = sum(found["labels"].values())
      total = len(self.splits[split])
      article = "an" if label_word == "intent" else "a"
      cost = (f"{unseen} of {total} examples ({unseen / total:.1%}) have "
              f"{article} {label_word} train lacks" if unseen else "")
      words = sum(found["slot_tags"].values())
      if words:
        cost += ("; " if cost else "") + (
            f"{words} word{'s have' if words != 1 else ' has'} a slot tag "
            "train lacks")
      parts.append(f"{split} ({self.splits[split].path}): {cost}: {listed}")
    if not parts:
      return None
    subject = ("slot tags" if self.slot_tagger else "intents or slot tags"
               if self.kind == examples_lib.INTENT_SLOT else "labels")
    return (
        f"Some {subject} of validation or test are not in train, so the model "
        "cannot predict them; they are mapped to an unknown label and counted "
        "as errors in the scores. " + "; ".join(parts) + ". To learn them, "
        "add examples of them to train.")

  def left_out_warning(self) -> str | None:
    """One message on the JSONL lines answered 'reject' or 'ignore'
    (Prodigy's export keeps every answer), which are not read; None if there
    is none. Per split: how many, and the first."""
    parts = [
        f"{split}: {errors.plural(len(data.left_out), 'line')} (the first: "
        f"{data.path}, line {data.left_out[0]})"
        for split, data in self.splits.items() if data.left_out
    ]
    if not parts:
      return None
    return (
        "Some lines' \"answer\" is 'reject' or 'ignore' (Prodigy's export "
        "keeps every answer): " + "; ".join(parts) + ". They are left out: "
        "the job reads the accepted annotations. To train on one, correct "
        "and accept it in Prodigy and export again.")

  def iob_warning(self) -> str | None:
    """One message on the slot tags read as IOB2; None if there is none.

    An `I-<type>` that begins a span (IOB1) is read as `B-<type>`: the same
    span, written as the task's decoder emits spans
    (`intent_slot_files._Repairs.to_iob2` says why); BIOES and BILOU tags
    are read as IOB2's. Per split: how many, and the first.
    """
    parts = [
        f"{split}: {errors.plural(data.iob_repairs, 'tag')}, the first at "
        f"{data.first_iob_repair}"
        for split, data in self.splits.items()
        if isinstance(data, examples_lib.IntentSlotExamples) and
        data.iob_repairs
    ]
    if not parts:
      return None
    if any(getattr(data, "bioes", False) for data in self.splits.values()):
      return (
          "Some slot tags are BIOES or BILOU tags (S-, E-, U-, L-): " +
          "; ".join(parts) + ". The job reads them as IOB2 tags of the same "
          "spans (S-<type> and U-<type> as B-<type>, E-<type> and L-<type> "
          "as I-<type>, or B-<type> where it begins a span), which is what "
          "the model answers and the texts to label next are written in. "
          "Nothing else changes.")
    return (
        "Some slot spans begin with I-<type> rather than B-<type> (IOB1, as "
        "CoNLL-2003 writes them): " + "; ".join(parts) + ". The job reads "
        "each such I-<type> as B-<type>, the same span (the scores count "
        "spans as conlleval does, which reads them so too), because the "
        "model's decoder starts every span with B-<type>. Nothing else "
        "changes; to silence this, write B-<type> on the first word of each "
        "span.")

  def few_examples_warning(self, least: int = FEW_EXAMPLES,
                           most: int = 10) -> str | None:
    """One message on the labels (intents) train has fewer than `least`
    examples of, the `most` rarest named; None if there is none.

    A classifier seldom learns to answer a label from a handful of examples
    (and the student learns it from the teacher's answers on them), so the
    job says so before training.
    """
    train = self.splits["train"]
    labels = (train.intents if self.kind == examples_lib.INTENT_SLOT
              else train.labels)
    counts = collections.Counter(labels)
    few = sorted((count, label) for label, count in counts.items()
                 if count < least)
    if not few:
      return None
    word = "intents" if self.kind == examples_lib.INTENT_SLOT else "labels"
    listed = ", ".join(f"{label!r} ({errors.plural(count, 'example')})"
                       for count, label in few[:most])
    if len(few) > most:
      listed += f" and {len(few) - most} more"
    return (
        f"{len(few)} of {len(counts)} {word} have fewer than {least} examples "
        f"in train ({train.path}), too few for the model to learn them "
        f"reliably: {listed}. Add examples of them to train, or merge them "
        "into related ones.")

  def spellings(self) -> dict:
    """Labels (intents, slot types) written several ways.

    Names that are the same once lowercased, with the spaces, '_', '-' and
    '.' between their letters and digits taken out ('Positive' and
    'positive', 'book_restaurant' and 'BookRestaurant', 'B-City' and
    'B-city'; not '-1' and '1'): to the model each way is a class of its
    own, though a user almost always meant one.

    Returns:
      {what: [{name: examples (slot types: words) over every split}, ...]}
      for 'labels' (intents) and 'slot types', each group of two or more
      spellings, most frequent spelling first; only kinds that have some.
    """
    intent_slot = self.kind == examples_lib.INTENT_SLOT
    counts = {"labels": collections.Counter(),
              "slot types": collections.Counter()}
    for data in self.splits.values():
      counts["labels"].update((data.intents if intent_slot else data.labels)
                              or ())
      if intent_slot and data.tags is not None:
        counts["slot types"].update(tag[2:] for tags in data.tags
                                    for tag in tags
                                    if tag != examples_lib.OUTSIDE_TAG)
    found = {}
    for what, counter in counts.items():
      groups = collections.defaultdict(dict)
      for name, count in counter.items():
        groups[_SEPARATORS.sub("", name.lower())][name] = count
      several = [dict(sorted(group.items(), key=lambda item: (-item[1],
                                                              item[0])))
                 for key, group in sorted(groups.items())
                 if key and len(group) > 1]
      if several:
        found[what] = several
    return found

  def spelling_warning(self, most: int = 5) -> str | None:
    """One message on labels (intents, slot types) written several ways
    (`spellings`); None if there are none."""
    found = self.spellings()
    if not found:
      return None
    unit = {"labels": "example", "slot types": "word"}
    parts = []
    for what, groups in found.items():
      word = ("intents" if what == "labels" and
              self.kind == examples_lib.INTENT_SLOT else what)
      listed = "; ".join(" and ".join(
          f"{name!r} ({errors.plural(count, unit[what])})"
          for name, count in group.items()) for group in groups[:most])
      if len(groups) > most:
        listed += f"; and {len(groups) - most} more"
      parts.append(f"{word}: {listed}")
    return (
        "Some labels differ only in case or punctuation: " +
        "; ".join(parts) + ". The model learns each spelling as a class of "
        "its own (counted over every split), so if they name one class, "
        "write them one way in every file.")

  def joined_labels(self) -> dict:
    """Labels (intents) that look like several labels joined into one name.

    A name is one when a separator of `_JOINERS` cuts it into two or more
    non-empty parts, each of them a label of its own or a part of another
    such name ('music;news' beside 'music', or 'a;b' beside 'b;c'; not a
    lone 'yes/no'). The model gives one label per text: each combination is
    a class of its own, learned from its own examples only.

    Returns:
      {separator: {name: examples over every split}}, most frequent first;
      only separators that join some.
    """
    intent_slot = self.kind == examples_lib.INTENT_SLOT
    counts = collections.Counter()
    for data in self.splits.values():
      counts.update((data.intents if intent_slot else data.labels) or ())
    found = {}
    for joiner in _JOINERS:
      parts = {name: [part.strip() for part in name.split(joiner)]
               for name in counts if joiner in name}
      parts = {name: cut for name, cut in parts.items() if all(cut)}
      shared = collections.Counter(part for cut in parts.values()
                                   for part in set(cut))
      joined = [name for name, cut in parts.items()
                if all(part in counts or shared[part] > 1 for part in cut)]
      if joined:
        found[joiner] = _counts({name: counts[name] for name in joined})
    return found

  def joined_label_warning(self, most: int = 5) -> str | None:
    """One message on labels (intents) that look like several joined
    (`joined_labels`); None if there are none."""
    found = self.joined_labels()
    if not found:
      return None
    word = ("intents" if self.kind == examples_lib.INTENT_SLOT
            else "labels")
    parts = []
    for joiner, names in found.items():
      listed = ", ".join(f"{name!r} ({errors.plural(count, 'example')})"
                         for name, count in list(names.items())[:most])
      if len(names) > most:
        listed += f" and {len(names) - most} more"
      parts.append(f"joined by {joiner!r}: {listed}")
    return (
        f"Some {word} look like several joined into one: " +
        "; ".join(parts) + ". The model gives each text one of train's "
        f"{word}, so each combination is a class of its own, learned from "
        "its own examples only, and a combination train lacks is never "
        "answered. Where a combination has few examples, give those texts "
        "their main label instead.")

  def _keyed(self, split: str) -> list[tuple[str, str | None]]:
    """(text, label) of each example of `split`: the text lowercased with
    its spaces collapsed (a pair's two texts joined by a tab), the label
    (intent) or None."""
    data = self.splits[split]
    if self.kind == examples_lib.INTENT_SLOT:
      texts = [" ".join(words) for words in data.words]
      labels = data.intents
    else:
      texts = (data.texts_a if data.texts_b is None else
               [f"{a}\t{b}" for a, b in zip(data.texts_a, data.texts_b)])
      labels = data.labels
    normal = ["\t".join(unlabelled_lib.normalized(part)
                         for part in text.split("\t")) for text in texts]
    return list(zip(normal, labels or [None] * len(normal)))

  def known_texts(self) -> dict[str, set[str]]:
    """{split: its texts, lowercased, spaces collapsed}, the splits other
    than train first (`unlabelled.without_known` counts a text under the
    first split that holds it). Pairs are keyed by their two texts joined
    by a tab."""
    order = [s for s in self.splits if s != "train"] + ["train"]
    return {split: {text for text, _ in self._keyed(split)}
            for split in order}

  def overlap(self) -> dict:
    """Texts shared between splits, and train's texts of several labels.

    Returns:
      {"in_train": {split: examples of validation / test whose text is also
      a train text}, "conflicts": {text: train's labels of it, sorted}, for
      texts that train gives more than one label (intent)}; texts compared
      lowercased, their spaces collapsed.
    """
    train = collections.defaultdict(set)
    for text, label in self._keyed("train"):
      train[text].add(label)
    return {
        "in_train": {split: sum(text in train
                                for text, _ in self._keyed(split))
                     for split in self.splits if split != "train"},
        "conflicts": {text: sorted(labels) for text, labels in train.items()
                      if len(labels) > 1},
    }

  def overlap_warning(self, most: int = 5) -> str | None:
    """One message on validation or test texts that train also holds, and
    on train texts of several labels; None if there is neither.

    A validation example whose text is in train is scored on what the model
    saw (SNIPS valid: 15 of 700 queries), so the split measures less of how
    the model does on new text; a text that train labels twice (SST-2
    train: 5 phrases, 'laughably' both positive and negative) cannot be
    answered right both times. Both are said once, before training.
    """
    found = self.overlap()
    parts = []
    for split, count in found["in_train"].items():
      if count:
        total = len(self.splits[split])
        parts.append(
            f"{split}: {count} of {total} examples ({count / total:.1%}) "
            "have a text that train also holds, so their scores measure "
            "what the model saw rather than how it does on new text (remove "
            "them from one of the two splits for a stricter score)")
    conflicts = found["conflicts"]
    if conflicts:
      word = "intent" if self.kind == examples_lib.INTENT_SLOT else "label"
      shown = lambda text: errors.show(text.replace("\t", " / "), 40)
      listed = "; ".join(f"{shown(text)}: {', '.join(labels)}"
                         for text, labels in sorted(conflicts.items())[:most])
      if len(conflicts) > most:
        listed += f"; and {len(conflicts) - most} more"
      parts.append(
          f"train: {errors.plural(len(conflicts), 'text')} carry more than "
          f"one {word} ({listed}); the model can answer only one of them, "
          "so check those labels")
    if not parts:
      return None
    return "Texts seen twice: " + "; ".join(parts) + "."

  def unreadable_warning(self, threshold: float = UNREADABLE_SHARE,
                         most: int = 10) -> str | None:
    """One message on the splits whose words the student cannot read.

    A split is named when more than `threshold` of its whitespace words are
    wholly [UNK] to the student (`unreadable`), with its counts and its
    `most` most frequent such words; None if no split is.
    """
    names, parts = [], []
    for split, found in self.unreadable.items():
      share = self._unreadable_share(split)
      if share <= threshold:
        continue
      listed = ", ".join(f"{errors.show(word, 40)} ({count})"
                         for word, count in
                         list(found["examples"].items())[:most])
      others = found["distinct_unreadable"] - min(most, len(found["examples"]))
      if others > 0:
        listed += f" and {errors.plural(others, 'other')}"
      names.append(split)
      parts.append(
          f"{split} ({self.splits[split].path}): {found['unreadable']} of "
          f"{found['words']} words ({share:.1%}) are [UNK], most often "
          f"{listed}")
    if not parts:
      return None
    return (
        f"More than {threshold:.0%} of the words of {' and '.join(names)} "
        "are unreadable to the student: it reads English (its vocabulary "
        "holds WordPieces of English text), so these words (other scripts, "
        "emoji) reach the model as [UNK], and it cannot tell them apart or "
        "learn from them. " + "; ".join(parts) + ". Where such words decide "
        "the label, expect low scores: the package has no student for other "
        "languages. Translate these texts into English, or carry on if these "
        "words are noise.")

  def _word_pieces(self) -> dict:
    """{word: the student's WordPieces of it}, every distinct word of every
    split tokenized once, on first use."""
    if self._pieces is None:
      words = sorted({word for data in self.splits.values()
                      for word in _split_words(data)})
      counts = unreadable_lib.piece_counts(
          words, self.vocab if self.vocab is not None else
          assets.default_student_vocab())
      self._pieces = dict(zip(words, counts.tolist()))
    return self._pieces

  def long_examples(self, seq_length: int) -> dict:
    """Per split, the examples longer than a student of `seq_length` reads.

    An example's length is its student WordPieces with [CLS] and [SEP] (and
    a pair's second [SEP]), as the fine-tuning featurizer packs it: a query's
    words one by one, a word of no piece taking one [UNK]; a text's words
    together. Whatever falls past `seq_length` is cut: a query's words whose
    first piece falls there are not read in training and are tagged 'O' by
    the exported model, a text's last pieces are not read.

    Returns:
      split -> {"examples", "long": examples longer than `seq_length`,
      "longest": the longest example's length, "p99": the length that 99%
      of the examples do not exceed, "cut_words": (intent and slots) the
      words whose first piece is cut}.
    """
    pieces = self._word_pieces()
    found = {}
    for split, data in self.splits.items():
      if isinstance(data, examples_lib.IntentSlotExamples):
        budget = seq_length - 2
        lengths, cut_words = [], 0
        for words in data.words:
          starts = np.cumsum([0] + [max(1, pieces[w]) for w in words])
          lengths.append(int(starts[-1]) + 2)
          cut_words += int(np.sum(starts[:-1] >= budget))
      else:
        specials = 2 if data.texts_b is None else 3
        lengths = [
            sum(pieces[w] for text in texts for w in text.split()) + specials
            for texts in zip(data.texts_a, *(
                [data.texts_b] if data.texts_b is not None else []))]
        cut_words = None
      found[split] = {
          "examples": len(lengths),
          "long": sum(length > seq_length for length in lengths),
          "longest": max(lengths, default=0),
          "p99": int(np.percentile(lengths, 99, method="higher")),
          "cut_words": cut_words,
      }
    return found

  def _long_splits(self, seq_length: int, threshold: float) -> dict:
    """`long_examples` of the splits of which a student of `seq_length`
    cuts more than `threshold` of the examples."""
    return {split: counts for split, counts in
            self.long_examples(seq_length).items()
            if counts["long"] > threshold * counts["examples"]}

  def fitting_seq_length(self, seq_length: int,
                         most: int = _MAX_SEQ_LENGTH,
                         threshold: float = LONG_SHARE) -> int | None:
    """A sequence length that holds 99% of the examples of each split of
    which `seq_length` cuts more than `threshold` (`long_examples`): a
    multiple of 16, at most `most`; None if no split is cut so."""
    found = self._long_splits(seq_length, threshold)
    if not found:
      return None
    p99 = max(counts["p99"] for counts in found.values())
    return min(most, -(-p99 // 16) * 16)

  def long_warning(self, seq_length: int, task_class: str,
                   threshold: float = LONG_SHARE) -> str | None:
    """One message on the splits of which a student of `seq_length` cuts
    more than `threshold` of the examples (`long_examples`), with the
    bindings that give both runs a sequence that holds 99% of those splits'
    examples (`task_class`: 'IntentSlotTask' or 'TextClassificationTask');
    None if no split is named."""
    found = self._long_splits(seq_length, threshold)
    if not found:
      return None
    intent_slot = self.kind == examples_lib.INTENT_SLOT
    parts = []
    for split, counts in found.items():
      part = (f"{split} ({self.splits[split].path}): {counts['long']:,} of "
              f"{counts['examples']:,} "
              f"{'queries' if intent_slot else 'examples'} "
              f"({counts['long'] / counts['examples']:.1%}), the longest "
              f"{counts['longest']}")
      if intent_slot:
        part += (f", {counts['cut_words']:,} "
                 f"{'word' if counts['cut_words'] == 1 else 'words'} cut")
      parts.append(part)
    # A multiple of 16 that holds 99% of each named split's examples.
    suggested = self.fitting_seq_length(seq_length, threshold=threshold)
    holds = ("holds 99% of the examples of each split named"
             if max(counts["p99"] for counts in found.values()) <= suggested
             else "is the most the student reads")
    if intent_slot:
      effect = ("their words past the cut are not read in training, and the "
                "exported model tags them 'O'")
      cost = "; each long query costs more in training and on the phone"
    else:
      effect = "their last pieces are not read, in training or served"
      cost = "; each long text costs more in training and served"
    binding = f"'{task_class}.seq_length = {suggested}'"
    return (
        f"Some examples are longer than the student reads: it takes "
        f"{seq_length} WordPieces, [CLS] and [SEP] included, and {effect}. "
        + "; ".join(parts) + ". To read them whole, give both runs a longer "
        f"sequence ({suggested} {holds}): "
        f"--gin_bindings=\"own_data_steps.teacher_bindings = "
        f"[{binding}]\" --gin_bindings=\"own_data_steps.student_bindings = "
        f"[{binding}]\" ({_MAX_SEQ_LENGTH} at most, the student's positions"
        f"{cost}).")


def load_dataset(data_dir: str,
                 text_column: str = "text",
                 text_b_column: str | None = None,
                 label_column: str = "label",
                 vocab=None) -> UserDataset:
  """Finds, reads and checks every split of the dataset in `data_dir`.

  Args:
    data_dir: the dataset directory (see the module docstring).
    text_column: text classification: the column of the text (or the first
      text of a pair).
    text_b_column: text classification: the column of the second text of a
      pair (None: `text_a` and `text_b` are a pair when there is no `text`).
    label_column: text classification: the column of the label.
    vocab: the student's WordPiece vocabulary (a vocab.txt path or tokens),
      against which the words of each split are read (`unreadable`, and
      `UserDataset.long_examples`); None: the shipped student's
      (`assets.default_student_vocab()`).

  Returns:
    A `UserDataset`. Train and validation carry labels; test may not.

  Raises:
    DataError: the dataset breaks the data contract: a file is malformed,
      splits disagree on single texts versus pairs, or train has a single
      class (an intent-slot train set may have one intent if it has slot
      tags other than 'O').
  """
  files = layout.find_dataset(data_dir)
  splits = {}
  slot_tagger = False
  for split in layout.SPLITS:
    if split not in files.files:
      continue
    path = files.files[split]
    require_labels = split != "test"
    if files.kind == examples_lib.TEXT_CLASSIFICATION:
      splits[split] = text_classification_files.read_text_classification(
          path, text_column=text_column, text_b_column=text_b_column,
          label_column=label_column, require_labels=require_labels)
    else:
      # Train decides whether queries have intents: with none it is a slot
      # tagger's data, and then no split may give one.
      splits[split] = intent_slot_files.read_intent_slot(
          path, require_labels=require_labels,
          require_intents=require_labels and split != "train" and
          not slot_tagger)
      if split == "train":
        slot_tagger = splits[split].intents is None
      elif slot_tagger and splits[split].intents is not None:
        raise errors.data_error(
            path, None,
            f"the queries have intents, but train ({splits['train'].path}) "
            "gives none (a slot tagger's data)",
            "intents in every split, or in none",
            "Give train's queries their intents, or leave them out here.")
  if slot_tagger:
    splits = {split: intent_slot_files.as_slot_tagger(data)
              for split, data in splits.items()}
  train = splits["train"]
  unseen = {}
  if files.kind == examples_lib.TEXT_CLASSIFICATION:
    train_pair = train.texts_b is not None
    for split, data in splits.items():
      if (data.texts_b is not None) != train_pair:
        describe = {True: "pairs of texts", False: "single texts"}
        raise errors.data_error(
            data.path, None,
            f"the file holds {describe[not train_pair]}, but train "
            f"({train.path}) holds {describe[train_pair]}",
            "the same text columns in every split",
            "Give every split the same text columns, or name them with "
            "text_column and text_b_column.")
    labels = sorted(set(train.labels))
    known = set(labels)
    if len(labels) < 2:
      raise errors.data_error(
          train.path, None,
          f"all {len(train)} examples have the label {labels[0]!r}",
          "at least two different labels in train",
          "A classifier learns to tell labels apart: add examples of the "
          "other labels to train.")
    slot_tags = None
    for split in ("validation", "test"):
      if split in splits:
        found = splits[split].labels or []
        unseen[split] = {
            "labels": _counts(l for l in found if l not in known),
            "slot_tags": {},
        }
  else:
    labels = sorted(set(train.intents))
    tags = {tag for query_tags in train.tags for tag in query_tags}
    tags.discard(examples_lib.OUTSIDE_TAG)
    if len(labels) < 2 and not tags:
      raise errors.data_error(
          train.path, None,
          ("no query has an intent" if slot_tagger else
           f"all {len(train)} queries have the intent {labels[0]!r}") +
          " and every slot tag is 'O'",
          "at least two intents, or slot tags other than 'O', in train",
          "There is nothing to learn: add queries with other intents, or tag "
          "the slots of the queries.")
    slot_tags = [examples_lib.OUTSIDE_TAG] + sorted(tags)
    known, known_tags = set(labels), set(slot_tags)
    for split in ("validation", "test"):
      if split in splits:
        data = splits[split]
        unseen[split] = {
            "labels": _counts(i for i in data.intents or []
                              if i not in known),
            "slot_tags": _counts(t for query_tags in data.tags or []
                                 for t in query_tags if t not in known_tags),
        }
  # Each distinct word of the dataset is tokenized once, as the student's
  # fine-tuning featurizer tokenizes it.
  unreadable = unreadable_lib.count_unreadable(
      {split: _split_words(data) for split, data in splits.items()},
      vocab if vocab is not None else assets.default_student_vocab())
  return UserDataset(files=files, splits=splits, labels=labels,
                     slot_tags=slot_tags, unseen=unseen,
                     unreadable=unreadable, vocab=vocab,
                     slot_tagger=slot_tagger)


# -----------------------------------------------------------------------------
# A user's dataset as a task reads it.
# -----------------------------------------------------------------------------

#: A split's other names, as tasks and `--split` give them.
_SPLIT_ALIASES = {"dev": "validation", "valid": "validation"}


@functools.lru_cache(maxsize=8)
def _checked(data_dir: str, text_column: str, text_b_column: str | None,
             label_column: str) -> UserDataset:
  """`load_dataset`, once per process for each (directory, columns); its
  warnings are logged then."""
  dataset = load_dataset(data_dir, text_column=text_column,
                         text_b_column=text_b_column,
                         label_column=label_column)
  for warning in (dataset.warning(), dataset.iob_warning(),
                  dataset.left_out_warning()):
    if warning:
      logging.warning("%s", warning)
  return dataset


class _Files:
  """A user's dataset directory of one kind, read and checked on first use.

  Args:
    data_dir: the dataset's directory (the data contract: module docstring).
    out_of_scope: a file of texts (one a line) that join train after its
      examples, labelled `out_of_scope.OUT_OF_SCOPE` (the own-data job's
      `OUT_OF_SCOPE`); None: none.
    columns: text classification: `text_column`, `text_b_column`,
      `label_column` (`load_dataset`).
  """

  kind = None
  name = "files"

  def __init__(self, data_dir: str, out_of_scope: str | None = None,
               **columns):
    self.data_dir = data_dir
    self.out_of_scope = out_of_scope
    self.columns = {"text_column": "text", "text_b_column": None,
                    "label_column": "label", **columns}
    self._train = None

  def dataset(self) -> UserDataset:
    """The checked dataset (read once per process).

    Raises:
      DataError: a file breaks the data contract, or the dataset is of the
        other kind.
    """
    dataset = _checked(os.path.abspath(self.data_dir), **self.columns)
    if dataset.kind != self.kind:
      raise self._other_kind(dataset)
    return dataset

  def _other_kind(self, dataset: UserDataset) -> Exception:
    raise NotImplementedError

  def split_name(self, split: str) -> str:
    """'train', 'validation' ('dev', 'valid') or 'test'."""
    name = _SPLIT_ALIASES.get(split, split)
    if name not in layout.SPLITS:
      raise ValueError(
          f"Unknown split {split!r} for a user's dataset; expected one of "
          f"{list(layout.SPLITS)} (or 'dev'/'valid' for 'validation').")
    return name

  def _split(self, split: str):
    """(the dataset, the examples of `split` or None if it has none); train
    with the out-of-scope texts after its examples."""
    dataset = self.dataset()
    name = self.split_name(split)
    if name != "train" or not self.out_of_scope:
      return dataset, dataset.splits.get(name)
    if self._train is None:
      texts = unlabelled_lib.read_unlabelled(self.out_of_scope)
      train = dataset.splits["train"]
      self._train = (
          out_of_scope_lib.intent_slot_examples(train, texts)
          if self.kind == examples_lib.INTENT_SLOT else
          out_of_scope_lib.text_classification_examples(train, texts))
    return dataset, self._train


class TextClassificationFiles(_Files):
  """A user's text classification files as a dataset a task reads.

  The label names are train's, sorted (label id = position); a validation
  or test label that train lacks has none (the task counts it wrong).
  """

  kind = examples_lib.TEXT_CLASSIFICATION
  #: A user's labels are scored by accuracy and macro-F1, not a GLUE metric.
  glue_task = None
  in_memory = True

  def _other_kind(self, dataset):
    return ValueError(
        f"{self.data_dir} holds an intent detection and slot filling dataset "
        f"({dataset.files.format} format), not text classification: use the "
        "intent-and-slot task (Trainer.task = 'intent_slot') for it, or give "
        "the text classification task a directory of text classification "
        "files (a text, or a pair, and a label per example).")

  @property
  def label_names(self) -> tuple[str, ...]:
    labels = self.dataset().labels
    if self.out_of_scope:
      labels = sorted(set(labels) | {out_of_scope_lib.OUT_OF_SCOPE})
    return tuple(labels)

  @property
  def is_pair(self) -> bool:
    """Whether train holds pairs of texts (`texts_b`)."""
    return self.dataset().splits["train"].texts_b is not None

  @property
  def fingerprint_name(self) -> str:
    """What names the data in a teacher cache's fingerprint."""
    return f"user:{os.path.abspath(self.data_dir)}"

  @property
  def title(self) -> str:
    return f"user dataset {self.data_dir}"

  @property
  def short_name(self) -> str:
    return os.path.basename(os.path.normpath(self.data_dir))

  def examples(self, split: str) -> examples_lib.TextClassificationExamples:
    """The labelled examples of `split`.

    Raises:
      DataError: the dataset breaks the data contract.
      ValueError: the split is absent, or has no labels (a test split for
        predictions only).
    """
    dataset, data = self._split(split)
    if data is None:
      raise ValueError(
          f"The dataset {dataset.files.data_dir} has no {split} split; its "
          f"splits are {sorted(dataset.splits)}.")
    if data.labels is None:
      raise ValueError(
          f"The {split} split of {dataset.files.data_dir} ({data.path}) has "
          "no labels: it serves predictions only, it cannot be evaluated. "
          "Evaluate on 'validation', or add a label column to it.")
    return data

  def num_train_examples(self) -> int:
    return len(self._split("train")[1])

  def describe(self, eval_split: str) -> str:
    try:
      labels = (f"{len(self.label_names)} labels, "
                f"{'sentence pairs' if self.is_pair else 'single texts'}")
    except ValueError as e:  # Unreadable data; the task's check says why.
      labels = f"unreadable: {str(e).splitlines()[0]}"
    return (f"user dataset {os.path.abspath(self.data_dir)} ({labels}; "
            f"evaluated on {eval_split})")


class IntentSlotFiles(_Files):
  """A user's intent-and-slot files as a dataset a task reads."""

  kind = examples_lib.INTENT_SLOT

  def __init__(self, data_dir: str, out_of_scope: str | None = None):
    super().__init__(data_dir, out_of_scope)

  def _other_kind(self, dataset):
    return errors.DataError(
        f"{self.data_dir} holds a {dataset.kind} dataset "
        f"({dataset.files.format} files), not intent-and-slot data; train "
        "it with the text classification task (Trainer.task = "
        "'text_classification', text_classification_dataset.name = "
        "'files').")

  def examples(self, split: str) -> examples_lib.IntentSlotExamples:
    """The labelled examples of `split` ('train', 'valid' or 'test').

    Raises:
      DataError: the dataset breaks the data contract.
      FileNotFoundError: the dataset has no such split (e.g. no test split).
      ValueError: the split has no labels (a test split for predictions).
    """
    _, data = self._split(split)
    if data is None:
      raise FileNotFoundError(f"{self.data_dir} has no {split} split.")
    if data.tags is None:
      raise ValueError(f"{data.path} has no labels; it can be predicted but "
                       "not evaluated.")
    return data

  def describe(self) -> str:
    return f"the intent-and-slot dataset {self.data_dir}"
