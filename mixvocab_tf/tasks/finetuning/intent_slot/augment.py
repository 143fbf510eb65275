"""SNIPS training-set augmentation by slot-value substitution (for distillation).

A student distilled on the training queries alone fits them (and the
teacher's outputs on them) completely and stops improving on valid: the
teacher's soft labels carry little beyond the gold ones on queries the student
already knows. TinyBERT (Jiao et al., 2020, Section 3.1) distils on an
augmented transfer set instead; for slot filling, a natural one swaps slot
values: each copy of a query replaces some of its slot spans (B-x I-x ...)
with another value of the same slot type seen in training ("play [artist:
Madonna]" -> "play [artist: John Coltrane]"; spans as slot F1 reads them,
`metrics.slot_spans`). Tags follow by construction,
the intent is kept, and the teacher labels the new queries (its outputs are
cached like the originals').

`augment(examples, copies, p, seed)` is deterministic given its arguments.
"""

import collections
import random
from typing import Mapping, Optional, Sequence

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.tasks.finetuning import metrics

def augment(examples: examples_lib.IntentSlotExamples, copies: int = 1,
            p: float = 0.5, seed: int = 0,
            slot_values: Optional[Mapping[str, Sequence[Sequence[str]]]] = None,
            balance: float = 0.0) -> examples_lib.IntentSlotExamples:
  """The examples followed by `copies` slot-substituted copies of each.

  Args:
    examples: `IntentSlotExamples` (the training split).
    copies: augmented copies per query (0: the examples unchanged).
    p: probability that each slot span of a copy is replaced.
    seed: seed of the choices.
    slot_values: more values of train's slot types ({type: [words, ...]}, e.g. a
      user's lists: `datasets.slot_values`): a replaced span draws from
      them and train's values of its type alike (each distinct value once);
      of a type whose values in train are all one word, only one-word ones.
    balance: 0: `copies` of every query. Above 0, a query of an intent of
      n queries gets round(copies * (mean n / n) ** balance) copies (at
      least 1, at most `copies_cap(copies)`), so rare intents take a larger
      share of the copies (0.5: their square root; 1: as many copies of
      each intent); of intents of equal size, `copies` each.

  Returns:
    `IntentSlotExamples`: the originals first (in order), then copy 1 of
    every query, copy 2 of every query that has two, ...
  """
  if copies <= 0:
    return examples
  values = {}
  for words, tags in zip(examples.words, examples.tags):
    for start, end, kind in metrics.slot_spans(tags):
      values.setdefault(kind, []).append(tuple(words[start:end]))
  # A value of several words tags its later words I-<type>: of a type that
  # train tags with B- only, such a value would bring a tag the model has no
  # label for, so only its one-word values join.
  inside = {tag[2:] for tags in examples.tags for tag in tags
            if tag.startswith("I-")}
  for kind, more in (slot_values or {}).items():
    if kind in values:
      values[kind] += [tuple(words) for words in more
                       if kind in inside or len(words) == 1]
  for kind in values:
    values[kind] = sorted(set(values[kind]))
  rng = random.Random(seed)
  words_out, tags_out = list(examples.words), list(examples.tags)
  intents_out = list(examples.intents)
  per_intent = copies_per_intent(examples.intents, copies, balance)
  for copy in range(max(per_intent.values(), default=0)):
    for words, tags, intent in zip(examples.words, examples.tags,
                                   examples.intents):
      if copy >= per_intent[intent]:
        continue
      new_words, new_tags, last = [], [], 0
      for start, end, kind in metrics.slot_spans(tags):
        new_words += words[last:start]
        new_tags += tags[last:start]
        if rng.random() < p:
          value = list(rng.choice(values[kind]))
        else:
          value = words[start:end]
        new_words += value
        new_tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(value) - 1)
        last = end
      new_words += words[last:]
      new_tags += tags[last:]
      words_out.append(new_words)
      tags_out.append(new_tags)
      intents_out.append(intent)
  return examples_lib.IntentSlotExamples(
      path=examples.path, words=words_out, tags=tags_out, intents=intents_out)


def copies_cap(copies: int) -> int:
  """The most copies `augment` makes of one query when balancing."""
  return 4 * copies


def copies_per_intent(intents: Sequence[str], copies: int,
                      balance: float = 0.0) -> dict:
  """{intent: copies of each of its queries} (`augment`'s `balance`)."""
  counts = collections.Counter(intents)
  if not balance or not counts:
    return {intent: copies for intent in counts}
  mean = len(intents) / len(counts)
  return {intent: min(copies_cap(copies),
                      max(1, round(copies * (mean / n) ** balance)))
          for intent, n in counts.items()}
