"""The example types of `mixvocab_tf.datasets`: one per task kind.

Every reader returns one of these, whatever the source (a user's CSV, TSV or
JSONL files, the Goo et al. layout, GLUE, SNIPS), so a task reads one type:

- `TextClassificationExamples`: a text, or a pair of texts, and a label name;
- `IntentSlotExamples`: a query's words, one IOB slot tag per word, and an
  intent.

Labels are names (strings), in file order; a task maps them to ids.
"""

import dataclasses

TEXT_CLASSIFICATION = "text_classification"
INTENT_SLOT = "intent_slot"
#: The slot tag of words outside every slot.
OUTSIDE_TAG = "O"
#: The one intent of a slot tagger's queries: a dataset whose train gives no
#: query an intent (e.g. doccano's sequence-labelling export) trains an
#: intent-and-slot model with this single intent, whose slots are the task.
NO_INTENT = "none"


@dataclasses.dataclass
class TextClassificationExamples:
  """One split of a text classification dataset.

  Attributes:
    path: the file read.
    texts_a: the text (or the first text of a pair) of each example.
    texts_b: the second text of each pair; None for single texts.
    labels: the label name of each example; None for a test split without
      labels.
    line_numbers: the 1-based line where each example starts in `path`.
    left_out: the lines of a JSONL file whose "answer" is 'reject' or
      'ignore' (Prodigy's export), not read (`records.accepted_rows`).
  """
  path: str
  texts_a: list[str]
  texts_b: list[str] | None
  labels: list[str] | None
  line_numbers: list[int]
  left_out: list[int] = dataclasses.field(default_factory=list)

  def __len__(self) -> int:
    return len(self.texts_a)


@dataclasses.dataclass
class IntentSlotExamples:
  """One split of an intent detection and slot filling dataset.

  Attributes:
    path: the directory (Goo layout) or the JSONL file read.
    words: the words of each query.
    tags: one IOB slot tag per word of each query; None for a test split
      without tags.
    intents: the intent of each query; None for a test split without
      intents.
    line_numbers: the 1-based line of each query (None for queries made
      rather than read, as augmented copies).
    iob_repairs: slot tags that began a span with `I-<type>` (IOB1) and
      were read as `B-<type>`, or were BIOES or BILOU tags read as IOB2
      (`intent_slot_files`).
    first_iob_repair: where the first of them was: '<file>, line <n>: ...';
      None if there was none.
    bioes: whether some of them were BIOES or BILOU tags (S-, E-, U-, L-).
    left_out: the lines of a JSONL file whose "answer" is 'reject' or
      'ignore' (Prodigy's export), not read (`records.accepted_rows`).
  """
  path: str
  words: list[list[str]]
  tags: list[list[str]] | None
  intents: list[str] | None
  line_numbers: list[int] | None = None
  iob_repairs: int = 0
  first_iob_repair: str | None = None
  bioes: bool = False
  left_out: list[int] = dataclasses.field(default_factory=list)

  def __len__(self) -> int:
    return len(self.words)
