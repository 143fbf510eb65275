"""New SNIPS training queries by slot-value substitution, for task distillation.

TinyBERT's task distillation (Jiao et al., Findings of EMNLP 2020, Section
3.3) enlarges the task's training set with queries made by word substitution
and lets the teacher label them: the student then learns the teacher's
function on more inputs than the labelled ones. For slot filling the natural
substitution keeps a query's frame and swaps whole slot values: every chunk
(`B-X I-X ...`) is replaced, with probability `p_replace`, by another value
of slot type X seen in training ("play [jazz]_genre on spotify" -> "play
[dark ambient]_genre on spotify"). The IOB tags and the intent of the new
query are known exactly (the words are new, their roles are not); the
distillation task also asks the teacher for its soft labels.

The function is deterministic for a seed, and never returns a query of the
original training set or a duplicate.
"""

import collections
import random
from typing import Dict, List, Tuple

from mixvocab_tf.tasks.finetuning import snips_data


def chunks(tags: List[str]) -> List[Tuple[int, int, str]]:
  """(start, end, slot type) of each IOB chunk (end exclusive).

  An `I-X` that does not continue a chunk of type X starts one, as CoNLL
  scoring reads it.
  """
  out = []
  for i, tag in enumerate(tags):
    if tag == snips_data.OUTSIDE_TAG:
      continue
    kind = tag[2:]
    if tag.startswith("I-") and out and out[-1][1] == i and (
        out[-1][2] == kind):
      out[-1] = (out[-1][0], i + 1, kind)
    else:
      out.append((i, i + 1, kind))
  return out


def slot_values(
    examples: snips_data.SnipsExamples) -> Dict[str, List[Tuple[str, ...]]]:
  """{slot type: the distinct values (word tuples) seen}, in first-seen order."""
  values = collections.OrderedDict()
  for words, tags in zip(examples.words, examples.tags):
    for start, end, kind in chunks(tags):
      values.setdefault(kind, collections.OrderedDict())[
          tuple(words[start:end])] = None
  return {kind: list(v) for kind, v in values.items()}


def augment(examples: snips_data.SnipsExamples, copies: int = 1,
            p_replace: float = 0.5, seed: int = 0) -> snips_data.SnipsExamples:
  """Up to `copies` new queries per training query, by slot substitution.

  Args:
    examples: the training split (`snips_data.read_snips`).
    copies: attempts per query; a query without slots, or an attempt that
      repeats a known query, gives nothing.
    p_replace: probability that each chunk is swapped.
    seed: the random seed.

  Returns:
    `SnipsExamples` holding only the new queries (path: "<path>+augmented").
  """
  if copies < 0 or not 0.0 < p_replace <= 1.0:
    raise ValueError("copies must be >= 0 and p_replace in (0, 1]; received "
                     f"{copies} and {p_replace}.")
  rng = random.Random(seed)
  values = slot_values(examples)
  seen = {tuple(w) for w in examples.words}
  words_out, tags_out, intents_out = [], [], []
  for words, tags, intent in zip(examples.words, examples.tags,
                                 examples.intents):
    spans = chunks(tags)
    if not spans:
      continue
    for _ in range(copies):
      new_words, new_tags, last = [], [], 0
      for start, end, kind in spans:
        new_words += words[last:start]
        new_tags += tags[last:start]
        value = tuple(words[start:end])
        if rng.random() < p_replace:
          value = rng.choice(values[kind])
        new_words += list(value)
        new_tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(value) - 1)
        last = end
      new_words += words[last:]
      new_tags += tags[last:]
      key = tuple(new_words)
      if key in seen:
        continue
      seen.add(key)
      words_out.append(new_words)
      tags_out.append(new_tags)
      intents_out.append(intent)
  return snips_data.SnipsExamples(words_out, tags_out, intents_out,
                                  f"{examples.path}+augmented")
