"""The fine-tuned teachers' forward passes that fill the teacher-output cache.

Task distillation across vocabularies (`distill_intent_slot`, `distill_text_classification`) runs
its frozen, fine-tuned teacher once over the transfer set, in inference mode,
and caches what it needs (`teacher_cache`). The forward passes live here,
apart from the cache, because they are what differs per task (which heads
are read, at which positions) while the cache files, their fingerprints and
their lookup are shared.

Both passes featurize every example with the *teacher's* vocabulary, sort the
examples by length and run them in batches cut to their longest example: the
teacher is run once per example with no wasted padding, and each result is
written back at the example's own index, so the outputs are in data order.

* `compute_teacher_outputs` (SNIPS): intent logits per query, and slot
  logits (optionally the last hidden state) at each word's first piece in the
  teacher's segmentation, as a `teacher_cache.TeacherOutputs`.
* `compute_teacher_logits` (GLUE and users' text classification data): class
  logits per example (optionally the pooled output the classifier reads).
"""

import time

from absl import logging
import numpy as np
import tensorflow as tf

from mixvocab_tf.core import op_threads
from mixvocab_tf.tasks.distillation import teacher_cache
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data

def compute_teacher_outputs(
    model, examples, labels, teacher_vocab, seq_length: int = 128,
    batch_size: int = 128, fingerprint=None,
    with_hidden: bool = False) -> teacher_cache.TeacherOutputs:
  """Runs the teacher (inference mode) over `examples`; logits per word.

  Queries are featurized with the teacher's vocabulary, sorted by length and
  run in batches cut to their longest query (no wasted padding); the slot
  logits are read at each word's first teacher piece.

  Args:
    model: a `JointIntentSlotModel` over `teacher_vocab` (weights loaded).
    examples: `IntentSlotExamples` (the training split).
    labels: `IntentSlotLabels` of the model's heads.
    teacher_vocab: the teacher's vocabulary (path or tokens).
    seq_length: the teacher's tokens per query (words cut by it get
      `word_valid` False).
    batch_size: queries per teacher batch.
    fingerprint: stored with the outputs.
    with_hidden: also keep the last hidden state at each word's first piece.
  """
  keys = ("input_word_ids", "input_mask", "input_type_ids",
          "word_start_positions", "num_words")
  columns = intent_slot_data.featurize_examples(
      examples, labels,
      intent_slot_data.intent_slot_batch_featurizer(teacher_vocab,
                                                    seq_length))
  n = columns["num_words"].shape[0]
  lengths = columns["input_mask"].sum(axis=1)
  order = np.argsort(lengths, kind="stable")

  spec = tf.TensorSpec([None, None], tf.int32)

  @tf.function(input_signature=[spec, spec, spec], autograph=False)
  def forward(ids, mask, types):
    # The model's call without its (inference-mode: identity) dropout, to
    # keep the encoder's sequence output too.
    outputs = model.encoder_network(dict(
        input_word_ids=ids, input_mask=mask, input_type_ids=types),
                                    training=False)
    sequence = outputs["sequence_output"]
    return (model.intent_classifier(outputs["pooled_output"]),
            model.slot_classifier(sequence), sequence)

  def run(start):
    index = order[start:start + batch_size]
    length = int(lengths[index].max())
    return index, forward(
        *(tf.constant(columns[k][index, :length]) for k in keys[:3]))

  intent_logits = np.zeros([n, labels.num_intents], np.float32)
  slot_rows = [None] * n
  for index, (intents, slots, hidden) in op_threads.map_side_by_side(
      run, range(0, n, batch_size)):
    intent_logits[index] = intents.numpy()
    slots = slots.numpy()
    hidden = hidden.numpy() if with_hidden else None
    for row, i in enumerate(index):
      positions = columns["word_start_positions"][i][:columns["num_words"][i]]
      # Words beyond max_words have no entry in word_start_positions.
      positions = np.concatenate([positions, np.full(
          columns["num_words"][i] - positions.shape[0], -1, positions.dtype)])
      at = np.maximum(positions, 0)
      slot_rows[i] = (slots[row, at], positions >= 0,
                      hidden[row, at].astype(np.float16) if with_hidden
                      else None)
  row_lengths = columns["num_words"].astype(np.int64)
  return teacher_cache.TeacherOutputs(
      intent_logits,
      np.concatenate([r[0] for r in slot_rows]).astype(np.float32),
      np.concatenate([[0], np.cumsum(row_lengths)]),
      np.concatenate([r[1] for r in slot_rows]),
      fingerprint=fingerprint,
      word_hidden=(np.concatenate([r[2] for r in slot_rows]) if with_hidden
                   else None))


def compute_teacher_logits(model, sentences_a, sentences_b, pair,
                           teacher_vocab, seq_length=128, batch_size=128,
                           with_pooled=False):
  """The teacher's class logits (inference mode) for every example, in order.

  Examples are featurized with the teacher's vocabulary, sorted by length and
  run in batches cut to their longest example (no wasted padding).

  Args:
    model: the teacher `SentenceClassifier`.
    sentences_a, sentences_b: the examples' sentences.
    pair: whether examples are sentence pairs (the dataset's `is_pair`).
    teacher_vocab: the teacher's vocabulary.
    seq_length, batch_size: tokens per example, examples per batch.
    with_pooled: also return the pooled outputs.

  Returns:
    float32 [N, classes]; with `with_pooled`, a pair of it and the pooled
    outputs the classifier reads, float32 [N, teacher hidden].
  """
  featurize = text_classification_data.text_classification_featurizer(teacher_vocab, seq_length, pair=pair)
  dataset = tf.data.Dataset.from_tensor_slices({
      "sentence_a": tf.constant(list(sentences_a), tf.string),
      "sentence_b": tf.constant(list(sentences_b), tf.string)}).batch(
          1024).map(featurize)
  columns = {k: [] for k in text_classification_data.MODEL_INPUT_KEYS}
  for batch in dataset:
    for k in columns:
      columns[k].append(batch[k].numpy())
  columns = {k: np.concatenate(v) for k, v in columns.items()}
  lengths = columns["input_mask"].sum(axis=1)
  order = np.argsort(lengths, kind="stable")
  spec = tf.TensorSpec([None, None], tf.int32)

  @tf.function(input_signature=[spec, spec, spec], autograph=False)
  def forward(ids, mask, types):
    outputs = model(dict(input_word_ids=ids, input_mask=mask,
                         input_type_ids=types), training=False)
    return outputs["logits"], outputs["pooled_output"]

  logits = np.zeros([len(order), model.num_classes], np.float32)
  pooled = None
  started, reported, done = time.time(), time.time(), 0

  def run(start):
    index = order[start:start + batch_size]
    length = int(lengths[index].max())
    return index, forward(
        *(tf.constant(columns[k][index, :length])
          for k in text_classification_data.MODEL_INPUT_KEYS))

  for index, (batch_logits, batch_pooled) in op_threads.map_side_by_side(
      run, range(0, len(order), batch_size)):
    logits[index] = batch_logits.numpy()
    if with_pooled:
      if pooled is None:
        pooled = np.zeros([len(order), batch_pooled.shape[-1]], np.float32)
      pooled[index] = batch_pooled.numpy()
    done += len(index)
    if time.time() - reported > 30 or done == len(order):
      reported = time.time()
      logging.info("Teacher logits: %d/%d examples (%.0f%%), %.0f s.", done,
                   len(order), 100 * done / len(order), reported - started)
  return (logits, pooled) if with_pooled else logits
