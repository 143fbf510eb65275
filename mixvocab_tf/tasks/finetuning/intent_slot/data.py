"""Intent detection and slot filling (SNIPS): labels, features, decoding.

The paper (Zhao et al., EACL 2021, §4.2) fine-tunes students on SNIPS jointly
for the intent of a query and the IOB slot tag of each word, tagging the first
WordPiece of each word. This module turns `IntentSlotExamples` into model
features, in three steps:

1. The data layer reads and checks the examples
   (`mixvocab_tf.datasets.intent_slot_files.read_intent_slot`: a Goo et al.
   (2018) directory, `seq.in`, `seq.out`, `label`, or a JSONL file; one tag
   per whitespace word; or a dataset by name, `datasets.catalog`).
2. `IntentSlotLabels` maps intents and slot tags to ids; it is built from train,
   saved as JSON beside checkpoints, and loaded again by evaluation and export.
3. `make_intent_slot_dataset(examples, labels)` gives word-level examples and
   `intent_slot_featurizer(vocab)` maps them, in graph, to WordPiece features:

   | key                  | dtype   | shape        | value                   |
   |----------------------|---------|--------------|-------------------------|
   | input_word_ids       | int32   | [seq_length] | [CLS] pieces [SEP] [PAD]|
   | input_mask           | int32   | [seq_length] | 1 on real tokens        |
   | input_type_ids       | int32   | [seq_length] | 0                       |
   | slot_ids             | int32   | [seq_length] | tag on first pieces, -1 |
   | slot_weights         | float32 | [seq_length] | 1 on first pieces, 0    |
   | intent_id            | int32   | []           | intent id               |
   | word_start_positions | int32   | [max_words]  | word's first piece, -1  |
   | num_words            | int32   | []           | words, cut ones too     |

Words are tokenized one by one, so BERT's basic tokenizer splits "don't" into
pieces that all belong to that word: the word's tag goes on "don", and "'" and
"t" carry no loss. A word the tokenizer turns into nothing (a lone combining
accent, a NUL, a zero-width space) becomes one [UNK], so that every word keeps
a tagged position. Queries longer than `seq_length - 2` pieces are cut; a word
whose first piece is cut has no position (-1), and `decode_slot_tags` tags it
'O'.
"""

import json
import os

from absl import logging
import numpy as np
import tensorflow as tf

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.text import wordpiece

OUTSIDE_TAG = examples_lib.OUTSIDE_TAG
#: `slot_ids` on positions without a slot loss (later pieces, specials, pad).
IGNORE_ID = -1
DEFAULT_SEQ_LENGTH = 64
#: Features the encoder takes; the other keys of a featurized example are
#: labels and decoding aids.
MODEL_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")

class IntentSlotLabels:
  """Intent and slot-tag vocabularies, built from train and saved for reuse.

  Intents are sorted. Slot tags are 'O' (id 0) followed by the other tags
  sorted, so that id 0 is the tag given to anything unknown. Both orders depend
  only on the set of labels in train, so rebuilding gives the same ids.

  Example:
    labels = IntentSlotLabels.from_examples(
        catalog.intent_slot('snips').examples('train'))
    labels.save(os.path.join(model_dir, 'snips_labels.json'))
    labels = IntentSlotLabels.load(os.path.join(model_dir, 'snips_labels.json'))
  """

  def __init__(self, intents, slots):
    intents = list(intents)
    slots = list(slots)
    if not intents:
      raise ValueError("IntentSlotLabels needs at least one intent; received none.")
    if not slots or slots[0] != OUTSIDE_TAG:
      raise ValueError(
          f"Slot tags must start with {OUTSIDE_TAG!r} (id 0); received "
          f"{slots[:3]}...")
    for name, values in (("intents", intents), ("slots", slots)):
      if len(set(values)) != len(values):
        raise ValueError(f"{name} holds duplicates: {values}.")
    self._intents = tuple(intents)
    self._slots = tuple(slots)
    self._intent_ids = {name: i for i, name in enumerate(intents)}
    self._slot_ids = {name: i for i, name in enumerate(slots)}

  @classmethod
  def from_examples(cls, examples):
    """Builds the vocabularies from a (training) `IntentSlotExamples`."""
    slots = {tag for tags in examples.tags for tag in tags}
    slots.discard(OUTSIDE_TAG)
    return cls(sorted(set(examples.intents)), [OUTSIDE_TAG] + sorted(slots))

  @property
  def intents(self):
    return self._intents

  @property
  def slots(self):
    return self._slots

  @property
  def num_intents(self):
    return len(self._intents)

  @property
  def num_slots(self):
    return len(self._slots)

  def __eq__(self, other):
    return (isinstance(other, IntentSlotLabels) and
            self.intents == other.intents and self.slots == other.slots)

  def __repr__(self):
    return (f"IntentSlotLabels({self.num_intents} intents, "
            f"{self.num_slots} slot tags)")

  def to_json(self):
    content = {"intents": list(self.intents), "slots": list(self.slots)}
    return json.dumps(content, indent=1)

  def save(self, path):
    """Writes `{"intents": [...], "slots": [...]}` to `path` (tf.io.gfile)."""
    parent = os.path.dirname(path)
    if parent:
      tf.io.gfile.makedirs(parent)
    with tf.io.gfile.GFile(path, "w") as f:
      f.write(self.to_json() + "\n")

  @classmethod
  def load(cls, path):
    with tf.io.gfile.GFile(path, "r") as f:
      content = json.load(f)
    if not isinstance(content, dict) or set(content) != {"intents", "slots"}:
      keys = sorted(content) if isinstance(content, dict) else ""
      raise ValueError(
          f"{path} is not a SNIPS label file; expected a JSON object with "
          f"keys 'intents' and 'slots', received {type(content).__name__} "
          f"{keys}.")
    return cls(content["intents"], content["slots"])

  def intent_id(self, intent):
    try:
      return self._intent_ids[intent]
    except KeyError:
      raise ValueError(f"Unknown intent {intent!r}; the label vocabulary has "
                       f"{list(self.intents)}.") from None

  def encode(self, examples):
    """Maps `IntentSlotExamples` to (slot ids per query, intent ids, #unseen tags).

    A label the vocabularies lack (an intent or a slot tag of validation or
    test data that train does not have) becomes `IGNORE_ID`: it carries no
    loss, and since no prediction can equal it, evaluation (which compares
    the gold strings) counts it as an error. The unseen labels are logged
    once with their counts; the user-data reader lists them before training
    (`datasets.user_dataset.UserDataset.warning`).
    """
    slot_ids, intent_ids = [], []
    unseen_tags, unseen_intents = {}, {}
    for tags, intent in zip(examples.tags, examples.intents):
      ids = []
      for tag in tags:
        tag_id = self._slot_ids.get(tag)
        if tag_id is None:
          unseen_tags[tag] = unseen_tags.get(tag, 0) + 1
          tag_id = IGNORE_ID
        ids.append(tag_id)
      slot_ids.append(ids)
      intent_id = self._intent_ids.get(intent)
      if intent_id is None:
        unseen_intents[intent] = unseen_intents.get(intent, 0) + 1
        intent_id = IGNORE_ID
      intent_ids.append(intent_id)
    num_unseen = sum(unseen_tags.values())
    if num_unseen or unseen_intents:
      logging.warning(
          "%s holds labels that training did not have; they count as errors: "
          "%d intents %s, %d slot tags %s", examples.path,
          sum(unseen_intents.values()), dict(sorted(unseen_intents.items())),
          num_unseen, dict(sorted(unseen_tags.items())))
    return slot_ids, intent_ids, num_unseen


def make_intent_slot_dataset(examples, labels):
  """Word-level dataset of `examples`, with label ids from `labels`.

  Args:
    examples: `IntentSlotExamples` (`datasets.examples`).
    labels: `IntentSlotLabels` (built from train).

  Returns:
    An unbatched `tf.data.Dataset`, in file order, of
    `{'words': string [n], 'slot_labels': int32 [n], 'intent_id': int32 []}`;
    map `intent_slot_featurizer(...)` on it.
  """
  slot_ids, intent_ids, _ = labels.encode(examples)
  lengths = [len(words) for words in examples.words]
  # From flat lists and row lengths: tf.ragged.constant is slow on 13K rows.
  flat_words = [word for words in examples.words for word in words]
  flat_slots = [slot for slots in slot_ids for slot in slots]
  return tf.data.Dataset.from_tensor_slices({
      "words": tf.RaggedTensor.from_row_lengths(
          tf.constant(flat_words, tf.string), lengths),
      "slot_labels": tf.RaggedTensor.from_row_lengths(
          tf.constant(flat_slots, tf.int32), lengths),
      "intent_id": tf.constant(intent_ids, tf.int32),
  })


def _at_least_one_piece(pieces, unk_id):
  """Gives each word without pieces one [UNK]: [n, (p)] -> [n, (max(p, 1))]."""
  lengths = pieces.row_lengths()
  num_words = tf.shape(lengths, out_type=tf.int64)[0]
  unk_column = tf.RaggedTensor.from_tensor(
      tf.fill(tf.stack([num_words, 1]), tf.cast(unk_id, pieces.dtype)))
  padded = tf.concat([pieces, unk_column], axis=1)
  keep_lengths = tf.expand_dims(tf.maximum(lengths, 1), 1)
  return tf.ragged.boolean_mask(
      padded, tf.ragged.range(lengths + 1) < keep_lengths)


def intent_slot_featurizer(vocab, seq_length=DEFAULT_SEQ_LENGTH, max_words=None,
                     lower_case=True, word_tokenizer=None):
  """Returns a function mapping a word-level SNIPS example to model features.

  Args:
    vocab: the student WordPiece vocabulary (path or token list).
    seq_length: length of the packed sequence, [CLS] and [SEP] included.
    max_words: length of `word_start_positions`; default `seq_length - 2`, the
      most words that can keep a first piece.
    lower_case: as in `wordpiece.fast_bert_tokenizer`.
    word_tokenizer: optional callable from a 1-D string tensor of words to an
      int RaggedTensor [words, (pieces)] of ids in `vocab`; default
      FastBertTokenizer. For the pretraining tokenizer, all-student:
      `lambda w: tokenizer.tokenize_words(w)[0].merge_dims(1, 2)` with
      `tokenizer = MixedVocabTokenizer(..., p_student=1.0)`.

  Returns:
    `featurize(example) -> features` for one unbatched example from
    `make_intent_slot_dataset` (map it before `batch`); the features are listed in
    the module docstring. Other keys of the example are dropped.
  """
  if seq_length < 3:
    raise ValueError(
        "seq_length must leave room for [CLS], a piece and [SEP]; received "
        f"{seq_length}, expected at least 3.")
  max_words = seq_length - 2 if max_words is None else max_words
  if max_words < 1:
    raise ValueError(f"max_words must be positive; received {max_words}.")
  tokenizer, special_ids = wordpiece.fast_bert_tokenizer(vocab, lower_case)
  tokenize = word_tokenizer or tokenizer.tokenize
  cls_id, sep_id = special_ids["[CLS]"], special_ids["[SEP]"]
  pad_id, unk_id = special_ids["[PAD]"], special_ids["[UNK]"]
  budget = seq_length - 2

  def featurize(example):
    words = example["words"]
    slot_labels = tf.cast(example["slot_labels"], tf.int32)
    pieces = _at_least_one_piece(tokenize(words), unk_id)
    num_words = tf.shape(words)[0]

    piece_ids = tf.cast(pieces.flat_values[:budget], tf.int32)
    word_starts = tf.cast(pieces.row_starts(), tf.int32)
    # A word keeps a position only if its first piece survived the cut.
    kept = (word_starts < budget) & (tf.range(num_words) < max_words)
    positions = tf.where(kept, word_starts + 1, IGNORE_ID)  # +1 for [CLS].

    ids = tf.concat([[cls_id], piece_ids, [sep_id]], axis=0)
    num_tokens = tf.shape(ids)[0]
    padding = [[0, seq_length - num_tokens]]
    input_word_ids = tf.pad(ids, padding, constant_values=pad_id)
    input_mask = tf.pad(tf.ones([num_tokens], tf.int32), padding)

    kept_positions = tf.expand_dims(tf.boolean_mask(positions, kept), 1)
    # Shifted by one so that scatter_nd's zero fill becomes IGNORE_ID (-1).
    slot_ids = tf.scatter_nd(
        kept_positions, tf.boolean_mask(slot_labels, kept) + 1,
        [seq_length]) - 1
    # A word whose tag the vocabulary lacks (IGNORE_ID) carries no loss.
    slot_weights = tf.scatter_nd(
        kept_positions,
        tf.cast(tf.boolean_mask(slot_labels, kept) >= 0, tf.float32),
        [seq_length])

    starts = positions[:max_words]
    word_start_positions = tf.pad(
        starts, [[0, max_words - tf.shape(starts)[0]]],
        constant_values=IGNORE_ID)

    return {
        "input_word_ids": tf.ensure_shape(input_word_ids, [seq_length]),
        "input_mask": tf.ensure_shape(input_mask, [seq_length]),
        "input_type_ids": tf.zeros([seq_length], tf.int32),
        "slot_ids": tf.ensure_shape(slot_ids, [seq_length]),
        "slot_weights": tf.ensure_shape(slot_weights, [seq_length]),
        "intent_id": tf.cast(example["intent_id"], tf.int32),
        "word_start_positions": tf.ensure_shape(
            word_start_positions, [max_words]),
        "num_words": num_words,
    }

  return featurize


def load_intent_slot(data_dir, labels, vocab, seq_length=DEFAULT_SEQ_LENGTH,
               max_words=None, lower_case=True):
  """Reads `data_dir` (a split: `intent_slot_files.read_intent_slot`);
  returns (featurized dataset, `IntentSlotExamples`).

  The dataset is unbatched and in file order, so example i lines up with
  `examples.tags[i]`, the gold word tags to score decoded predictions against.
  """
  examples = intent_slot_files.read_intent_slot(data_dir)
  featurize = intent_slot_featurizer(vocab, seq_length, max_words, lower_case)
  dataset = make_intent_slot_dataset(examples, labels).map(
      featurize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
  return dataset, examples


def decode_slot_tags(slot_predictions, word_start_positions, num_words, slots):
  """Maps per-position slot predictions back to one IOB tag per word.

  Args:
    slot_predictions: [batch, seq_length] predicted slot ids, or
      [batch, seq_length, num_slots] logits (arg-maxed here).
    word_start_positions: [batch, max_words] from the featurizer.
    num_words: [batch] from the featurizer.
    slots: the slot tag names (`IntentSlotLabels.slots`), indexed by id.

  Returns:
    A list (batch) of lists of tag strings; query i has `num_words[i]` tags.
    Words without a position (cut off by `seq_length` or `max_words`) get 'O'.
  """
  predictions = np.asarray(slot_predictions)
  if predictions.ndim == 3:
    predictions = predictions.argmax(axis=-1)
  positions = np.asarray(word_start_positions)
  num_words = np.asarray(num_words).reshape([-1])
  if predictions.ndim != 2 or positions.ndim != 2:
    raise ValueError(
        "slot_predictions must be [batch, seq_length] (or with a trailing "
        "num_slots axis) and word_start_positions [batch, max_words]; "
        f"received shapes {np.shape(slot_predictions)} and {positions.shape}.")
  if not predictions.shape[0] == positions.shape[0] == num_words.shape[0]:
    raise ValueError(
        "slot_predictions, word_start_positions and num_words disagree on the "
        f"batch size: {predictions.shape[0]}, {positions.shape[0]}, "
        f"{num_words.shape[0]}.")
  decoded = []
  for row, row_positions, count in zip(predictions, positions, num_words):
    tags = []
    for i in range(int(count)):
      position = row_positions[i] if i < len(row_positions) else IGNORE_ID
      tags.append(OUTSIDE_TAG if position < 0 else slots[int(row[position])])
    decoded.append(tags)
  return decoded
