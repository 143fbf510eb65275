"""Compares a .tflite with the SavedModel it came from, example by example.

Serving the students of Zhao et al. (EACL 2021) on phones is only useful if
the phone gives the SavedModel's answers: this module runs both on the same
raw inputs and summarizes how far apart they are (largest logit difference,
agreement of predicted labels). Which inputs to feed and how to score the
predictions against gold labels is the task's business (its
`serving_examples` and `serving_scores`, e.g. SNIPS intent accuracy and slot
F1, §4.2, Table 3); what a task does not supply comes from here: text files
(`read_examples`) or the built-in corpus (`corpus_examples`).

Outputs are split per example before comparing, because both models pad to
the longest example of their batch: per-word outputs are cut to
`num_words`, per-token outputs to the example's tokens.
"""

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets

#: Per-word outputs of the SNIPS module (cut to `num_words`).
_WORD_KEYS = ("slot_tags", "slot_ids", "slot_logits", "word_starts",
              "word_ends", "words")
#: Per-token outputs of the encoder module (cut to the real tokens).
_TOKEN_KEYS = ("sequence_output", "input_mask")
#: String outputs compared by agreement.
LABEL_KEYS = ("intent", "slot_tags", "label")
#: Float outputs compared by their largest absolute difference.
LOGIT_KEYS = ("intent_logits", "slot_logits", "logits", "pooled_output",
              "sequence_output")


def split_examples(outputs):
  """A batch's outputs (dict of arrays) -> one dict per example, unpadded."""
  outputs = {k: np.asarray(v) for k, v in outputs.items()}
  batch = len(next(iter(outputs.values())))
  examples = []
  for i in range(batch):
    example = {}
    for key, value in outputs.items():
      row = value[i]
      if key in _WORD_KEYS and "num_words" in outputs:
        row = row[:int(outputs["num_words"][i])]
      elif key in _TOKEN_KEYS and "input_mask" in outputs:
        row = row[:int(outputs["input_mask"][i].sum())]
      example[key] = row
    examples.append(example)
  return examples


def _as_inputs(inputs):
  """(names, list of tuples of strings) from {name: list of strings}."""
  names = sorted(inputs)
  columns = [list(inputs[name]) for name in names]
  if len({len(c) for c in columns}) != 1:
    raise ValueError("Every input needs one value per example; received "
                     f"{[len(c) for c in columns]}.")
  return names, columns


def predict_saved_model(function, inputs, batch_size=100):
  """Runs a SavedModel signature on {input name: list of strings}.

  Returns:
    A list with one dict of NumPy outputs per example (`split_examples`).
  """
  names, columns = _as_inputs(inputs)
  examples = []
  for start in range(0, len(columns[0]), batch_size):
    batch = {name: tf.constant(column[start:start + batch_size], tf.string)
             for name, column in zip(names, columns)}
    outputs = function(**batch)
    examples.extend(split_examples({k: v.numpy() for k, v in
                                    outputs.items()}))
  return examples


def predict_tflite(runner, inputs, batch_size=1):
  """Runs a `tflite_conversion.TFLiteRunner` like `predict_saved_model`.

  The default batch of 1 is how a phone calls the model.
  """
  names, columns = _as_inputs(inputs)
  if names != runner.input_names:
    raise ValueError(f"The .tflite takes {runner.input_names}; received "
                     f"{names}.")
  examples = []
  for start in range(0, len(columns[0]), batch_size):
    outputs = runner(*[column[start:start + batch_size]
                       for column in columns])
    examples.extend(split_examples(outputs))
  return examples


def decode(value):
  """A string output as str, a string array as a list of str; else as is."""
  if isinstance(value, (bytes, np.bytes_)):
    return value.decode("utf-8")
  if isinstance(value, np.ndarray) and value.dtype == object:
    return [decode(v) for v in value.tolist()]
  return value


def compare(reference, candidate):
  """Largest logit differences and label agreement of two prediction lists.

  Returns:
    A dict with, for every float output present in both, `max_abs_diff/KEY`,
    and for every label output, `agreement/KEY` (the share of examples whose
    label, or whose whole tag sequence, is the same), plus `num_examples`.
  """
  if len(reference) != len(candidate):
    raise ValueError(f"Predictions for {len(reference)} and {len(candidate)} "
                     "examples cannot be compared.")
  summary = {"num_examples": len(reference)}
  keys = set(reference[0]) & set(candidate[0]) if reference else set()
  for key in sorted(keys):
    if key in LOGIT_KEYS:
      diffs = [np.max(np.abs(r[key] - c[key]), initial=0.0)
               if r[key].shape == c[key].shape else np.inf
               for r, c in zip(reference, candidate)]
      summary[f"max_abs_diff/{key}"] = float(np.max(diffs, initial=0.0))
    elif key in LABEL_KEYS:
      same = [np.array_equal(r[key], c[key])
              for r, c in zip(reference, candidate)]
      summary[f"agreement/{key}"] = float(np.mean(same))
  return summary


def read_examples(path, limit, pair=False):
  """The first `limit` non-blank lines of a text file as examples.

  Args:
    path: one example per line; the sentences of a pair are separated by a
      tab (a line without one is paired with itself).
    limit: most examples read.
    pair: whether examples are pairs (tuples) or strings.
  """
  examples = []
  with tf.io.gfile.GFile(path, "r") as f:
    for line in f:
      line = line.rstrip("\n")
      if not line.strip():
        continue
      if pair:
        first, _, second = line.partition("\t")
        examples.append((first, second or first))
      else:
        examples.append(line)
      if len(examples) >= limit:
        break
  return examples


def corpus_examples(limit, pair=False):
  """Examples from the built-in corpus, for models whose task has none.

  `limit` lines are read; pairs are made of consecutive lines (so `limit //
  2` of them).
  """
  examples = []
  for corpus_file in assets.builtin_corpus_files():
    examples += read_examples(corpus_file, limit - len(examples))
    if len(examples) >= limit:
      break
  if pair:
    return list(zip(examples[0::2], examples[1::2]))
  return examples


def as_inputs(examples, input_names):
  """{input name: list of strings} from examples (strings, or tuples of
  strings in the order of `input_names`)."""
  if len(input_names) == 1:
    return {input_names[0]: list(examples)}
  return {name: [e[i] for e in examples]
          for i, name in enumerate(input_names)}
