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

`intent_slot_batch_featurizer(vocab)` computes the same features for a batch
of examples at once; `featurize_examples` applies it to a whole split (the
distillations' transfer sets and their teacher's outputs).

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
import tensorflow_text as tf_text

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.text import wordpiece

OUTSIDE_TAG = examples_lib.OUTSIDE_TAG
#: `slot_ids` on positions without a slot loss (later pieces, specials, pad).
IGNORE_ID = -1
DEFAULT_SEQ_LENGTH = 64
#: The intent and the tags of an unlabelled query (a distillation's transfer
#: set): never a label, so `IntentSlotLabels.encode` maps them to
#: `IGNORE_ID` (no gold-label loss) without counting them as unseen.
UNLABELLED = ""
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
    (`datasets.user_dataset.UserDataset.warning`). `UNLABELLED` (an
    unlabelled query's intent and tags) becomes `IGNORE_ID` and is not
    counted.
    """
    slot_ids, intent_ids = [], []
    unseen_tags, unseen_intents = {}, {}
    for tags, intent in zip(examples.tags, examples.intents):
      ids = []
      for tag in tags:
        tag_id = self._slot_ids.get(tag)
        if tag_id is None:
          if tag != UNLABELLED:
            unseen_tags[tag] = unseen_tags.get(tag, 0) + 1
          tag_id = IGNORE_ID
        ids.append(tag_id)
      slot_ids.append(ids)
      intent_id = self._intent_ids.get(intent)
      if intent_id is None:
        if intent != UNLABELLED:
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
  return tf.data.Dataset.from_tensor_slices(_ragged_examples(examples, labels))


def _ragged_examples(examples, labels):
  """`make_intent_slot_dataset`'s elements as one ragged batch."""
  slot_ids, intent_ids, _ = labels.encode(examples)
  lengths = [len(words) for words in examples.words]
  # From flat lists and row lengths: tf.ragged.constant is slow on 13K rows.
  flat_words = [word for words in examples.words for word in words]
  flat_slots = [slot for slots in slot_ids for slot in slots]
  return {
      "words": tf.RaggedTensor.from_row_lengths(
          tf.constant(flat_words, tf.string), lengths),
      "slot_labels": tf.RaggedTensor.from_row_lengths(
          tf.constant(flat_slots, tf.int32), lengths),
      "intent_id": tf.constant(intent_ids, tf.int32),
  }


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


def intent_slot_batch_featurizer(vocab, seq_length=DEFAULT_SEQ_LENGTH,
                                 max_words=None, lower_case=True,
                                 word_tokenizer=None):
  """`intent_slot_featurizer`'s features for a whole batch of examples at once.

  The same arguments and the same features, value for value, for batches of
  `make_intent_slot_dataset(...).ragged_batch(n)` (or `featurize_examples`):
  a few dozen operations per batch instead of per example, for featurizing a
  whole split (the distillations' transfer sets: 39,252 SNIPS queries took
  about 9 s one by one).

  Returns:
    `featurize_batch(batch) -> features`, each feature with a leading batch
    dimension.
  """
  max_words, tokenize, (cls_id, sep_id, pad_id, unk_id) = _featurizer_setup(
      vocab, seq_length, max_words, lower_case, word_tokenizer)
  budget = seq_length - 2

  def featurize_batch(batch):
    words = batch["words"]  # Ragged [B, (words)], as are the slot labels.
    row_splits = tf.cast(words.row_splits, tf.int32)
    batch_size = tf.shape(row_splits)[0] - 1
    num_words = row_splits[1:] - row_splits[:-1]
    row = tf.cast(words.value_rowids(), tf.int32)
    index = tf.range(tf.shape(row)[0]) - tf.gather(row_splits, row)
    slot_labels = tf.cast(batch["slot_labels"].flat_values, tf.int32)
    # Each word's pieces, then each example's: [B, (words), (pieces)].
    pieces = _at_least_one_piece(tokenize(words.flat_values), unk_id)
    piece_starts = tf.cast(pieces.row_starts(), tf.int32)
    piece_splits = tf.cast(pieces.row_splits, tf.int32)
    word_starts = piece_starts - tf.gather(
        tf.gather(piece_splits, row_splits), row)
    kept = (word_starts < budget) & (index < max_words)
    positions = tf.where(kept, word_starts + 1, IGNORE_ID)  # +1 for [CLS].

    example_pieces = tf.RaggedTensor.from_row_splits(
        pieces, words.row_splits).merge_dims(1, 2)
    piece_ids = tf.cast(example_pieces[:, :budget], tf.int32)
    ids, _ = tf_text.combine_segments(
        [piece_ids], start_of_sequence_id=cls_id, end_of_segment_id=sep_id)
    input_word_ids, input_mask = tf_text.pad_model_inputs(
        ids, seq_length, pad_value=pad_id)
    shape = [batch_size, seq_length]

    kept_at = tf.stack([tf.boolean_mask(row, kept),
                        tf.boolean_mask(positions, kept)], axis=1)
    kept_labels = tf.boolean_mask(slot_labels, kept)
    # Shifted by one so that scatter_nd's zero fill becomes IGNORE_ID (-1).
    slot_ids = tf.scatter_nd(kept_at, kept_labels + 1, shape) - 1
    # A word whose tag the vocabulary lacks (IGNORE_ID) carries no loss.
    slot_weights = tf.scatter_nd(
        kept_at, tf.cast(kept_labels >= 0, tf.float32), shape)
    listed = index < max_words
    word_start_positions = tf.scatter_nd(
        tf.stack([tf.boolean_mask(row, listed),
                  tf.boolean_mask(index, listed)], axis=1),
        tf.boolean_mask(positions, listed) + 1, [batch_size, max_words]) - 1
    return {
        "input_word_ids": input_word_ids,
        "input_mask": input_mask,
        "input_type_ids": tf.zeros(shape, tf.int32),
        "slot_ids": slot_ids,
        "slot_weights": slot_weights,
        "intent_id": tf.cast(batch["intent_id"], tf.int32),
        "word_start_positions": word_start_positions,
        "num_words": num_words,
    }

  return featurize_batch


def featurize_examples(examples, labels, featurize_batch, batch_size=4096):
  """{feature: NumPy [N, ...]} of every example, in order: what
  `make_intent_slot_dataset(examples, labels)` mapped with the per-example
  featurizer gives, `batch_size` examples at a time.

  Args:
    examples: `IntentSlotExamples`.
    labels: `IntentSlotLabels`.
    featurize_batch: `intent_slot_batch_featurizer(...)`.
    batch_size: examples featurized at once.
  """
  columns = {}
  inputs = _ragged_examples(examples, labels)
  total = int(inputs["intent_id"].shape[0])
  # At least one (possibly empty) batch: no examples give 0 rows.
  for start in range(0, max(total, 1), batch_size):
    batch = {k: v[start:start + batch_size] for k, v in inputs.items()}
    for key, value in featurize_batch(batch).items():
      columns.setdefault(key, []).append(value.numpy())
  return {k: np.concatenate(v) for k, v in columns.items()}


def _featurizer_setup(vocab, seq_length, max_words, lower_case,
                      word_tokenizer):
  """(max_words, tokenize, ids of [CLS], [SEP], [PAD], [UNK]), checked."""
  if seq_length < 3:
    raise ValueError(
        "seq_length must leave room for [CLS], a piece and [SEP]; received "
        f"{seq_length}, expected at least 3.")
  max_words = seq_length - 2 if max_words is None else max_words
  if max_words < 1:
    raise ValueError(f"max_words must be positive; received {max_words}.")
  tokenizer, special_ids = wordpiece.fast_bert_tokenizer(vocab, lower_case)
  return (max_words, word_tokenizer or tokenizer.tokenize,
          tuple(special_ids[t] for t in ("[CLS]", "[SEP]", "[PAD]", "[UNK]")))


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
  max_words, tokenize, (cls_id, sep_id, pad_id, unk_id) = _featurizer_setup(
      vocab, seq_length, max_words, lower_case, word_tokenizer)
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
