"""Out-of-scope examples: texts an app should not answer with its intents.

A softmax over an app's intents gives every input one of them, often with a
high score: the main job's SNIPS student gives an intent at 0.9 or more to
44% of movie reviews. A label of its own for what the app should not answer
keeps most of that out. The own-data job adds such examples to train when
asked (`own_data_steps.out_of_scope`, `OUT_OF_SCOPE` in `own_data.gin`):

- `BUILTIN` ('builtin'): sentences of the package's built-in corpus
  (novels, inaugural addresses, State of the Union messages: none a request
  to an app), lowercased, punctuation dropped as queries are written, 3-20
  words (`corpus_sentences`); as many as train's most frequent label has,
  at least 1,000 (`count_for`), drawn with a fixed seed from the corpus's
  pretraining blocks;
- a file of the app's own out-of-scope texts (requests it does not serve,
  taken from its logs), one a line or a text column (`unlabelled`'s
  formats): all of them;
- or a list of both (`['builtin', 'refusals.txt']`): each keeps out its own
  kind, prose or the logged requests (`bench/unseen_intents.py`).

Each joins train with the label `OUT_OF_SCOPE` ('out_of_scope'), every word
tagged 'O' for intent and slots (`intent_slot_examples`,
`text_classification_examples`). Validation and test stay the user's.

The corpus's held-out blocks (every 10th block of 100 lines, as the main
job holds them out of pretraining: `text.heldout`) give `held_out_texts`,
sentences no run trains on, on which the own-data report measures how the
exported model answers input of another kind (`off_topic`).

Example:
  texts = builtin_texts(count_for(dataset.splits["train"].intents))
  train = intent_slot_examples(train, texts)
"""

import collections
import functools
import random
import re

from mixvocab_tf import assets
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.text import heldout
from mixvocab_tf.text import pretraining_input

#: The label of the added examples.
OUT_OF_SCOPE = "out_of_scope"
#: `own_data_steps.out_of_scope`'s value for the built-in corpus's sentences.
BUILTIN = "builtin"
#: At least / at most this many built-in sentences join train (`count_for`).
#: On 600 queries of 7 intents (seed 0), 100 sentences answered
#: `out_of_scope` to 25% of SST-2 sentences and 44% of MNLI premises, 600 to
#: 66% and 81%, 1,000 to 86% and 92%, validation intent accuracy 97.3, 94.7
#: and 96.0 (96.7 without), one seed of 150 queries each.
LEAST, MOST = 1000, 5000
#: The seed of the draws.
SEED = 0
#: Built-in sentences of at least / at most this many words.
MIN_WORDS, MAX_WORDS = 3, 20
#: Held-out sentences the report answers (`held_out_texts`).
HELD_OUT = 300
#: A model "answers" an off-topic text with an intent at this score or more.
CONFIDENT = 0.9

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@functools.lru_cache(maxsize=1)
def corpus_sentences() -> dict[bool, tuple[str, ...]]:
  """The built-in corpus's sentences: {held out: texts}, in corpus order.

  Held out: the sentences of every 10th block of 100 lines
  (`heldout.split_documents`, as the main job holds text out of
  pretraining); the others come from the blocks the pretrained students
  read. A text is the sentence's words, lowercased, without punctuation,
  joined by spaces; sentences of fewer than `MIN_WORDS` or more than
  `MAX_WORDS` words are left out.
  """
  documents = [d for path in assets.builtin_corpus_files()
               for d in pretraining_input.read_documents(path)]
  train, held_out = heldout.split_documents(documents)
  def texts(blocks):
    found = []
    for block in blocks:
      for line in block:
        for sentence in _SENTENCE_END.split(line.strip()):
          words = _WORD.findall(sentence.lower())
          if MIN_WORDS <= len(words) <= MAX_WORDS:
            found.append(" ".join(words))
    return tuple(found)
  return {False: texts(train), True: texts(held_out)}


def count_for(labels: list[str]) -> int:
  """How many built-in sentences join a train split of these labels: as many
  as its most frequent label has (the out-of-scope label one of train's
  larger ones), from `LEAST` (fewer kept out little prose of other sources
  on a small split) to `MOST`."""
  most = max(collections.Counter(labels).values(), default=0)
  return min(MOST, max(LEAST, most))


def builtin_texts(count: int, seed: int = SEED) -> list[str]:
  """`count` distinct sentences of the corpus's pretraining blocks, drawn
  with `seed`, in corpus order.

  Raises:
    ValueError: the corpus has fewer.
  """
  pool = list(dict.fromkeys(corpus_sentences()[False]))
  if count > len(pool):
    raise ValueError(
        f"The built-in corpus has {len(pool):,} sentences of "
        f"{MIN_WORDS}-{MAX_WORDS} words; {count:,} were asked for.")
  return _draw(pool, count, seed)


def held_out_texts(count: int = HELD_OUT, seed: int = SEED) -> list[str]:
  """`count` sentences of the corpus's held-out blocks (none of them in
  `builtin_texts`' pool), drawn with `seed`, in corpus order."""
  pool = list(dict.fromkeys(corpus_sentences()[True]))
  return _draw(pool, min(count, len(pool)), seed)


def _draw(pool: list[str], count: int, seed: int) -> list[str]:
  """`count` texts of `pool` drawn with `seed`, in the pool's order."""
  chosen = set(random.Random(seed).sample(range(len(pool)), count))
  return [text for i, text in enumerate(pool) if i in chosen]


def intent_slot_examples(train: examples_lib.IntentSlotExamples,
                         texts: list[str]) -> examples_lib.IntentSlotExamples:
  """`train` with `texts` after its examples: intent `OUT_OF_SCOPE`, every
  word 'O'; their `line_numbers` are their lines in the out-of-scope file."""
  words = [text.split() for text in texts]
  return examples_lib.IntentSlotExamples(
      path=train.path, words=list(train.words) + words,
      tags=list(train.tags) + [["O"] * len(w) for w in words],
      intents=list(train.intents) + [OUT_OF_SCOPE] * len(words),
      line_numbers=(None if train.line_numbers is None else
                    list(train.line_numbers) + list(
                        range(1, len(words) + 1))),
      iob_repairs=train.iob_repairs,
      first_iob_repair=train.first_iob_repair, bioes=train.bioes)


def text_classification_examples(
    train: examples_lib.TextClassificationExamples, texts: list[str]
) -> examples_lib.TextClassificationExamples:
  """`train` with `texts` after its examples, labelled `OUT_OF_SCOPE`
  (`line_numbers`: their lines in the out-of-scope file).

  Raises:
    ValueError: `train` holds pairs (an out-of-scope text has no second).
  """
  if train.texts_b is not None:
    raise ValueError("Out-of-scope texts serve tasks of one text; this "
                     "train split holds pairs of texts.")
  return examples_lib.TextClassificationExamples(
      path=train.path, texts_a=list(train.texts_a) + list(texts),
      texts_b=None, labels=list(train.labels) + [OUT_OF_SCOPE] * len(texts),
      line_numbers=list(train.line_numbers) + list(range(1, len(texts) + 1)))


def off_topic(records: list[dict], labels_key: str = "intent") -> dict:
  """How a model answered off-topic texts (`held_out_texts`).

  Args:
    records: the predictor's records of the texts.
    labels_key: the record's label key ('intent', or 'label').

  Returns:
    {'texts': n, 'out_of_scope': answered `OUT_OF_SCOPE`, 'confident':
    answered another label at score >= `CONFIDENT`}.
  """
  answers = [(r[labels_key], r["score"]) for r in records]
  return {"texts": len(answers),
          "out_of_scope": sum(a == OUT_OF_SCOPE for a, _ in answers),
          "confident": sum(a != OUT_OF_SCOPE and s >= CONFIDENT
                           for a, s in answers)}
