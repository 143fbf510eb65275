"""A fine-tuned SNIPS teacher's outputs over the training set, computed once.

Task distillation across vocabularies (`distill_intent_slot`) needs, for every
training query, the teacher's intent logits and its slot logits at each word's
first piece *in the teacher's own segmentation*. A fine-tuned teacher in
inference mode (no dropout) gives the same outputs in every epoch, so they are
computed once, written beside the teacher run (or wherever `cache_dir` says),
and looked up by example index inside tf.data in every epoch; the student's
training step then costs what plain fine-tuning costs.

Files in the cache directory:

  teacher_outputs.npz   intent_logits  float32 [N, num_intents]
                        slot_logits    float32 [total words, num_slots]
                                       (per word, queries one after another)
                        row_splits     int64 [N + 1] (query i's words are
                                       slot_logits[row_splits[i]:row_splits[i+1]])
                        word_valid     bool [total words] (False: the word's
                                       first teacher piece was cut)
                        word_hidden    float16 [total words, hidden], optional:
                                       the teacher's last hidden state at each
                                       word's first piece (for hidden-state
                                       distillation; float16 halves its size)
  fingerprint.json      what the outputs were computed from (below)

The fingerprint holds the sha256 of the teacher checkpoint's files, of both
vocabularies (the teacher's, which segmented the queries, and the student's,
which the cache is built for), of the training data (words, tags, intents)
and of the label vocabularies, plus the teacher's sequence length and a format
version. `load_cache` refuses a cache whose fingerprint differs from the one
expected, naming the fields that differ (`StaleCacheError`); `load_or_build`
builds a missing cache and refuses a stale one rather than overwriting it.

Sentence-level tasks (`distill_text_classification`) cache one row of class logits per
example (`SentenceTeacherOutputs`: `teacher_outputs.npz` holding `logits`
float32 [N, classes]) with the same fingerprint fields (`base_fingerprint`;
their `data` digest covers sentences and labels) and the same loading,
refusal and lookup by example index (`load_cache` / `load_or_build` take the
outputs' class).

This module holds what is cached, not how it is computed: the teachers'
forward passes that make the outputs (`compute_teacher_outputs` for SNIPS,
`compute_teacher_logits` for GLUE) are in `teacher_forward`, and reach
`load_or_build` as its `build_fn`.
"""

import hashlib
import io
import json
import os
import time
from typing import Any, Dict, Mapping, Optional

from absl import logging
import numpy as np
import tensorflow as tf

from mixvocab_tf.core import run_files
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.text import vocab as vocab_lib

CACHE_VERSION = 1
ARRAYS_FILE = "teacher_outputs.npz"
FINGERPRINT_FILE = "fingerprint.json"
#: Fields of fingerprint.json that inform (how long it took) but identify
#: nothing.
INFO_KEYS = ("build_seconds",)


class StaleCacheError(ValueError):
  """A teacher-output cache was made from another teacher, vocab or data."""


# -----------------------------------------------------------------------------
# Fingerprints.

def checkpoint_fingerprint(prefix: str) -> str:
  """sha256 over a checkpoint's .index and data shards (names and bytes)."""
  files = sorted(tf.io.gfile.glob(prefix + ".data-*")) + [prefix + ".index"]
  return run_files.sha256_files(files)


def data_fingerprint(examples: examples_lib.IntentSlotExamples,
                     labels: intent_slot_data.IntentSlotLabels) -> str:
  """sha256 of the queries (words, tags, intents, in order) and label ids."""
  digest = hashlib.sha256()
  for words, tags, intent in zip(examples.words, examples.tags,
                                 examples.intents):
    digest.update(("\t".join([" ".join(words), " ".join(tags), intent]) +
                   "\n").encode("utf-8"))
  digest.update(labels.to_json().encode("utf-8"))
  return digest.hexdigest()


def base_fingerprint(teacher_checkpoint: str, teacher_tokens,
                     student_tokens, data: str, num_examples: int,
                     teacher_seq_length: int) -> Dict[str, Any]:
  """The fields every cache's fingerprint has; `data` is a data digest."""
  return {
      "version": CACHE_VERSION,
      "teacher_checkpoint": checkpoint_fingerprint(teacher_checkpoint),
      "teacher_vocab": vocab_lib.vocab_fingerprint(teacher_tokens),
      "student_vocab": vocab_lib.vocab_fingerprint(student_tokens),
      "data": data,
      "num_examples": int(num_examples),
      "teacher_seq_length": int(teacher_seq_length),
  }


def make_fingerprint(teacher_checkpoint: str, teacher_tokens,
                     student_tokens, examples, labels,
                     teacher_seq_length: int,
                     with_hidden: bool = False) -> Dict[str, Any]:
  """The fingerprint of a cache of `teacher_checkpoint` over `examples`."""
  fingerprint = base_fingerprint(
      teacher_checkpoint, teacher_tokens, student_tokens,
      data_fingerprint(examples, labels), len(examples.intents),
      teacher_seq_length)
  if with_hidden:  # Caches without hidden states keep their old fingerprint.
    fingerprint["with_hidden"] = True
  return fingerprint


# -----------------------------------------------------------------------------
# The cache.

class TeacherOutputs:
  """Teacher logits per query (intent) and per word (slots, ragged)."""

  def __init__(self, intent_logits, slot_logits, row_splits, word_valid,
               fingerprint: Optional[Mapping[str, Any]] = None,
               word_hidden=None):
    self.intent_logits = np.asarray(intent_logits, np.float32)
    self.slot_logits = np.asarray(slot_logits, np.float32)
    self.row_splits = np.asarray(row_splits, np.int64)
    self.word_valid = np.asarray(word_valid, bool)
    self.fingerprint = dict(fingerprint or {})
    self.word_hidden = (None if word_hidden is None else
                        np.asarray(word_hidden, np.float16))
    n = self.intent_logits.shape[0]
    if (self.row_splits.shape != (n + 1,) or self.row_splits[0] != 0 or
        self.row_splits[-1] != self.slot_logits.shape[0] or
        self.word_valid.shape != self.slot_logits.shape[:1]):
      raise ValueError(
          "Inconsistent teacher outputs: intent_logits "
          f"{self.intent_logits.shape}, slot_logits {self.slot_logits.shape},"
          f" row_splits {self.row_splits.shape} (ends "
          f"{self.row_splits[-1] if n else None}), word_valid "
          f"{self.word_valid.shape}.")
    if (self.word_hidden is not None and
        self.word_hidden.shape[0] != self.slot_logits.shape[0]):
      raise ValueError(f"word_hidden {self.word_hidden.shape} does not match "
                       f"slot_logits {self.slot_logits.shape}.")

  @property
  def num_examples(self):
    return self.intent_logits.shape[0]

  def arrays(self):
    arrays = dict(intent_logits=self.intent_logits,
                  slot_logits=self.slot_logits, row_splits=self.row_splits,
                  word_valid=self.word_valid)
    if self.word_hidden is not None:
      arrays["word_hidden"] = self.word_hidden
    return arrays

  def nbytes(self):
    return sum(a.nbytes for a in self.arrays().values())

  def save(self, directory: str) -> None:
    """Writes the arrays and the fingerprint (each by an atomic rename)."""
    _save(directory, self.arrays(), self.fingerprint)

  @classmethod
  def from_arrays(cls, arrays, fingerprint):
    """The outputs of a loaded `teacher_outputs.npz` (an `np.load` result)."""
    return cls(arrays["intent_logits"], arrays["slot_logits"],
               arrays["row_splits"], arrays["word_valid"],
               fingerprint=fingerprint,
               word_hidden=(arrays["word_hidden"]
                            if "word_hidden" in arrays.files else None))


class SentenceTeacherOutputs:
  """Teacher outputs, one row per example (sentence-level tasks).

  Attributes:
    logits: float32 [N, classes], the class logits.
    pooled: None, or float32 [N, teacher hidden], what the teacher's
      classifier reads (its pooled output), for `distill_text_classification`'s
      representation term.
  """

  def __init__(self, logits, fingerprint: Optional[Mapping[str, Any]] = None,
               pooled=None):
    self.logits = np.asarray(logits, np.float32)
    if self.logits.ndim != 2:
      raise ValueError(f"logits must be [examples, classes]; received shape "
                       f"{self.logits.shape}.")
    self.pooled = None if pooled is None else np.asarray(pooled, np.float32)
    if self.pooled is not None and (
        self.pooled.ndim != 2 or self.pooled.shape[0] != self.logits.shape[0]):
      raise ValueError(f"pooled must be [examples, hidden] with the logits' "
                       f"{self.logits.shape[0]} examples; received shape "
                       f"{self.pooled.shape}.")
    self.fingerprint = dict(fingerprint or {})

  @property
  def num_examples(self):
    return self.logits.shape[0]

  def arrays(self):
    arrays = {"logits": self.logits}
    if self.pooled is not None:
      arrays["pooled"] = self.pooled
    return arrays

  def nbytes(self):
    return sum(a.nbytes for a in self.arrays().values())

  def save(self, directory: str) -> None:
    _save(directory, self.arrays(), self.fingerprint)

  @classmethod
  def from_arrays(cls, arrays, fingerprint):
    pooled = arrays["pooled"] if "pooled" in arrays.files else None
    return cls(arrays["logits"], fingerprint=fingerprint, pooled=pooled)


def _save(directory, arrays, fingerprint):
  """Writes `arrays` and `fingerprint` (each by an atomic rename)."""
  tf.io.gfile.makedirs(directory)
  path = os.path.join(directory, ARRAYS_FILE)
  tmp = os.path.join(directory, f"tmp{os.getpid()}.{ARRAYS_FILE}")
  content = io.BytesIO()
  np.savez(content, **arrays)
  with tf.io.gfile.GFile(tmp, "wb") as f:
    f.write(content.getvalue())
  tf.io.gfile.rename(tmp, path, overwrite=True)
  # The fingerprint goes last: a cache without one is incomplete.
  path = os.path.join(directory, FINGERPRINT_FILE)
  with tf.io.gfile.GFile(path + ".tmp", "w") as f:
    f.write(json.dumps(fingerprint, indent=1, sort_keys=True) + "\n")
  tf.io.gfile.rename(path + ".tmp", path, overwrite=True)


def exists(directory: str) -> bool:
  return all(tf.io.gfile.exists(os.path.join(directory, name))
             for name in (ARRAYS_FILE, FINGERPRINT_FILE))


def read_fingerprint(directory: str) -> Dict[str, Any]:
  with tf.io.gfile.GFile(os.path.join(directory, FINGERPRINT_FILE)) as f:
    return json.load(f)


def check_fingerprint(directory: str, expected: Mapping[str, Any]) -> None:
  """Raises `StaleCacheError` unless the cache in `directory` is `expected`'s."""
  recorded = read_fingerprint(directory)
  differ = sorted(k for k in set(recorded) | set(expected)
                  if k not in INFO_KEYS and recorded.get(k) != expected.get(k))
  if differ:
    shown = "; ".join(
        f"{k}: cache {str(recorded.get(k))[:16]}, expected "
        f"{str(expected.get(k))[:16]}" for k in differ)
    raise StaleCacheError(
        f"Refusing the teacher-output cache in {directory}: it was computed "
        f"from a different {', '.join(differ)} ({shown}). Its logits would "
        "not be this teacher's outputs on this data. Delete the directory to "
        "recompute it, or point cache_dir elsewhere.")


def load_cache(directory: str, expected: Mapping[str, Any],
               outputs_class=TeacherOutputs):
  """Reads a cache, refusing one whose fingerprint differs from `expected`.

  Args:
    directory: the cache directory.
    expected: the fingerprint the cache must have.
    outputs_class: `TeacherOutputs` (SNIPS) or `SentenceTeacherOutputs`.
  """
  check_fingerprint(directory, expected)
  with tf.io.gfile.GFile(os.path.join(directory, ARRAYS_FILE), "rb") as f:
    content = io.BytesIO(f.read())
  with np.load(content) as arrays:
    outputs = outputs_class.from_arrays(arrays, read_fingerprint(directory))
  if outputs.num_examples != expected.get("num_examples",
                                          outputs.num_examples):
    raise StaleCacheError(
        f"The teacher-output cache in {directory} holds "
        f"{outputs.num_examples} examples; expected "
        f"{expected['num_examples']}.")
  return outputs


def load_or_build(directory: str, expected: Mapping[str, Any], build_fn,
                  outputs_class=TeacherOutputs):
  """The cache in `directory`; built with `build_fn()` if there is none.

  A cache with another fingerprint is refused (`StaleCacheError`), never
  overwritten.

  Returns:
    (outputs (`outputs_class`), seconds spent building or None if read).
  """
  if exists(directory):
    outputs = load_cache(directory, expected, outputs_class)
    logging.info("Read the teacher outputs of %d examples from %s (%.1f MB).",
                 outputs.num_examples, directory, outputs.nbytes() / 1e6)
    return outputs, None
  start = time.time()
  outputs = build_fn()
  outputs.fingerprint = dict(expected)
  outputs.fingerprint["build_seconds"] = round(time.time() - start, 1)
  seconds = time.time() - start
  outputs.save(directory)
  # build_seconds is information, not identity.
  outputs.fingerprint.pop("build_seconds")
  logging.info("Computed the teacher outputs of %d examples in %.1f s "
               "(%.1f MB), saved in %s.", outputs.num_examples, seconds,
               outputs.nbytes() / 1e6, directory)
  return outputs, seconds


# -----------------------------------------------------------------------------
# Lookup inside tf.data.

def lookup_fn(outputs: TeacherOutputs, max_words: int):
  """A tf.data map function: example index -> the teacher's logits.

  Returns:
    `lookup(index) -> {'teacher_intent_logits': [I],
    'teacher_slot_logits': [max_words, S], 'teacher_slot_valid':
    float32 [max_words]}` (and 'teacher_word_hidden' float32 [max_words, H]
    if the cache has hidden states); words beyond the query (or beyond
    max_words) get zeros and valid 0.
  """
  intent = tf.constant(outputs.intent_logits)
  slots = tf.constant(outputs.slot_logits)
  splits = tf.constant(outputs.row_splits)
  valid = tf.constant(outputs.word_valid.astype(np.float32))
  hidden = (None if outputs.word_hidden is None else
            tf.constant(outputs.word_hidden))

  def lookup(index):
    index = tf.cast(index, tf.int64)
    start, end = splits[index], splits[index + 1]
    end = tf.minimum(end, start + max_words)
    words = end - start
    pad = tf.cast(max_words, tf.int64) - words
    looked_up = {
        "teacher_intent_logits": tf.gather(intent, index),
        "teacher_slot_logits": tf.ensure_shape(tf.pad(
            slots[start:end], [[0, pad], [0, 0]]),
                                               [max_words,
                                                outputs.slot_logits.shape[1]]),
        "teacher_slot_valid": tf.ensure_shape(
            tf.pad(valid[start:end], [[0, pad]]), [max_words]),
    }
    if hidden is not None:
      looked_up["teacher_word_hidden"] = tf.ensure_shape(tf.pad(
          tf.cast(hidden[start:end], tf.float32), [[0, pad], [0, 0]]),
                                                         [max_words,
                                                          hidden.shape[1]])
    return looked_up

  return lookup


def batch_lookup_fn(outputs: TeacherOutputs, max_words: int):
  """`lookup_fn` for a batch of indices: the same values, stacked.

  One ragged gather per batch instead of a lookup per example (the
  per-example map and the stacking of its padded [max_words, S] logits were
  about a seventh of the 6x96 student's step time on CPU).

  Returns:
    `lookup(indices [B]) -> {'teacher_intent_logits': [B, I],
    'teacher_slot_logits': [B, max_words, S], 'teacher_slot_valid': float32
    [B, max_words]}` (and 'teacher_word_hidden' [B, max_words, H]), each row
    `lookup_fn`'s for that index.
  """
  intent = tf.constant(outputs.intent_logits)
  splits = tf.constant(outputs.row_splits)
  per_word = {
      "teacher_slot_logits": outputs.slot_logits,
      "teacher_slot_valid": outputs.word_valid.astype(np.float32),
  }
  if outputs.word_hidden is not None:
    per_word["teacher_word_hidden"] = outputs.word_hidden
  # [examples, (words), ...] rows, float32 as the per-example lookup gives.
  per_word = {key: tf.cast(tf.RaggedTensor.from_row_splits(
      tf.constant(values), splits, validate=False), tf.float32)
              for key, values in per_word.items()}

  def lookup(indices):
    indices = tf.cast(indices, tf.int64)
    looked_up = {"teacher_intent_logits": tf.gather(intent, indices)}
    for key, rows in per_word.items():
      looked_up[key] = tf.gather(rows, indices).to_tensor(
          shape=[None, max_words] + rows.flat_values.shape[1:].as_list())
    return looked_up

  return lookup
