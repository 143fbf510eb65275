"""Serving module of a SNIPS student: raw queries in, intent and slot tags out.

Zhao et al. (EACL 2021), §4.2, fine-tune the students on SNIPS jointly for the
intent of a query and the IOB tag of each word (on the word's first
WordPiece). This module wraps such a model (`JointIntentSlotModel`) with the
student tokenizer and the decoding, in two `tf.function` signatures over a
string [batch] input named `text` (other shapes are refused as
`serving_contract` says):

| output         | dtype   | shape              | value                       |
|----------------|---------|--------------------|-----------------------------|
| intent         | string  | [batch]            | intent name                 |
| intent_id      | int32   | [batch]            | its id in `labels.intents`  |
| intent_probs   | float32 | [batch, intents]   | softmax of the logits       |
| intent_logits  | float32 | [batch, intents]   |                             |
| slot_tags      | string  | [batch, words]     | IOB tag per word, '' after  |
| slot_ids       | int32   | [batch, words]     | tag id per word, -1 after   |
| slot_logits    | float32 | [batch, words, slots] | at the first piece, 0 after |
| word_starts    | int32   | [batch, words]     | byte offset of word, -1     |
| word_ends      | int32   | [batch, words]     | byte offset after word, -1  |
| num_words      | int32   | [batch]            | words tagged                |
| words          | string  | [batch, words]     | the word, '' after (TF only)|

`words` is the most words of a query in the batch (at least 1). A query's
words are its whitespace-separated words, at most `seq_length - 2`; a word
whose first piece falls past `seq_length - 2` pieces is tagged 'O' with zero
logits, as `intent_slot_data.decode_slot_tags` does. Tags are decoded as in
evaluation (`IntentSlotTask.slot_decoding`): by default the best valid
IOB sequence of the kept words (`iob_decoding.viterbi_decode`, a small
TFLite WHILE loop), or each word's arg-max.

`serving_default` has every output; `serving_tflite` lacks `words`, because a
padded matrix of the input's words needs string concatenation, which TFLite
cannot do. Label strings are gathered from constant tables, which TFLite can,
so a .tflite answers intent names and tags itself; the label vocabularies are
also written to `assets.extra/labels.json` of the SavedModel.

`serving_builtin` is the model without tokenizer and decoding, for runtimes
that tokenize themselves (MediaPipe Tasks, LiteRT.js, a stock LiteRT app):
BERT's three int32 [1, n] inputs in (any n, at most `seq_length` read),
`intent_probs` [1, intents] and `slot_probs` [1, n, slots] (per piece; a
word's tag is read at its first piece) out (`builtin_model`).

`IntentSlotTask.export_module` builds this module; `intent_slot_scores` scores
its outputs (or a .tflite's) as the paper does (Table 3), for the converter's
parity summary and the quickstart's export step.
"""

import tensorflow as tf

from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import parity
from mixvocab_tf.export import serving_contract
from mixvocab_tf.export import serving_tokenizer as serving_lib
from mixvocab_tf.tasks.finetuning import iob_decoding
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data

#: Any rank, checked in the graph (`serving_contract`): [batch] is served.
TEXT_SPEC = serving_contract.text_spec("text")


class IntentSlotExportModule(tf.Module):
  """A SNIPS intent and slot model with its tokenizer, for serving.

  Example:
  ```python
  module = IntentSlotExportModule(model, labels, assets.default_student_vocab())
  module.serve(tf.constant(["book a table for two at 8 pm"]))["intent"]
  export.export_saved_model(module, "/tmp/snips_savedmodel")
  ```

  Args:
    model: a tf_keras model taking `input_word_ids`, `input_mask`,
      `input_type_ids` and returning `intent_logits` [B, intents] and
      `slot_logits` [B, L, slots] (`JointIntentSlotModel`).
    labels: the run's `intent_slot_data.IntentSlotLabels`.
    vocab: the student vocab.txt the model was fine-tuned with (path; it is
      kept as an asset) or a token list.
    seq_length: the most tokens of a query, [CLS] and [SEP] included (the
      fine-tuning sequence length).
    lower_case: uncased tokenization, as in fine-tuning.
    task_name: the registered task whose serving hooks (parity examples and
      scores) the converter uses for this export; a task derived from
      `IntentSlotTask` passes its own name.
    slot_decoding: 'viterbi' (valid IOB sequences) or 'argmax'.
    name: module name.
  """

  task = "snips"

  def __init__(self, model, labels, vocab,
               seq_length=intent_slot_data.DEFAULT_SEQ_LENGTH, lower_case=True,
               task_name="intent_slot", slot_decoding="viterbi",
               name="snips_export_module"):
    super().__init__(name=name)
    if seq_length < 3:
      raise ValueError("seq_length must leave room for [CLS], a piece and "
                       f"[SEP]; received {seq_length}.")
    if slot_decoding not in ("viterbi", "argmax"):
      raise ValueError("slot_decoding must be 'viterbi' or 'argmax'; "
                       f"received {slot_decoding!r}.")
    self.slot_decoding = slot_decoding
    self.model = model
    self.labels = labels
    self.seq_length = int(seq_length)
    self.task_name = task_name
    self.tokenizer = serving_lib.ServingTokenizer(vocab, lower_case)

  def labels_json(self):
    """Contents of `assets.extra/labels.json`."""
    return self.labels.to_json()

  def export_info(self):
    """Fields of `export_info.json`: the label vocabularies."""
    return {"intents": list(self.labels.intents),
            "slots": list(self.labels.slots)}

  def _predict(self, text, with_words):
    (text,) = serving_contract.check_text_batch([text], ["text"])
    features, words = self.tokenizer.pack_words(text, self.seq_length)
    outputs = self.model(features, training=False)
    intent_logits = tf.cast(outputs["intent_logits"], tf.float32)
    slot_logits = tf.cast(outputs["slot_logits"], tf.float32)

    intent_names = tf.constant(list(self.labels.intents))
    # The extra '' is what padding positions read.
    slot_names = tf.constant(list(self.labels.slots) + [""])
    intent_id = tf.argmax(intent_logits, axis=-1, output_type=tf.int32)
    num_columns = tf.maximum(tf.reduce_max(
        tf.concat([words["num_words"], [0]], 0)), 1)
    positions = words["positions"]
    kept = positions >= 0
    word_logits = tf.gather_nd(
        slot_logits, tf.stack([words["row"], tf.maximum(positions, 0)], 1))
    word_logits = word_logits * tf.expand_dims(tf.cast(kept, tf.float32), 1)
    pad = serving_lib.PAD_INDEX
    scatter = serving_lib.scatter_per_word
    # A cut word's zero logits arg-max to 0, the 'O' tag.
    word_slot_ids = tf.argmax(word_logits, axis=-1, output_type=tf.int32)
    slot_ids = scatter(word_slot_ids, words, num_columns, pad)
    if self.slot_decoding == "viterbi":
      # The kept words come first in each query; cut ones stay 'O'.
      num_kept = tf.reduce_sum(
          scatter(tf.cast(kept, tf.int32), words, num_columns, 0), axis=1)
      start, transitions = iob_decoding.allowed_transitions(
          self.labels.slots)
      best = iob_decoding.viterbi_decode(
          scatter(word_logits, words, num_columns, 0.0), num_kept, start,
          transitions)
      column = tf.expand_dims(tf.range(num_columns), 0)
      slot_ids = tf.where(column < tf.expand_dims(num_kept, 1), best,
                          slot_ids)
    num_slots = self.labels.num_slots
    result = {
        "intent": tf.gather(intent_names, intent_id),
        "intent_id": intent_id,
        "intent_probs": tf.nn.softmax(intent_logits, axis=-1),
        "intent_logits": intent_logits,
        "slot_tags": tf.gather(slot_names,
                               tf.where(slot_ids >= 0, slot_ids, num_slots)),
        "slot_ids": slot_ids,
        "slot_logits": scatter(word_logits, words, num_columns, 0.0),
        "word_starts": scatter(words["starts"], words, num_columns, pad),
        "word_ends": scatter(words["ends"], words, num_columns, pad),
        "num_words": words["num_words"],
    }
    if with_words:
      result["words"] = serving_lib.padded_words(words, num_columns)
    return result

  @tf.function(input_signature=[TEXT_SPEC])
  def serve(self, text):
    """Every output of the module docstring, for TensorFlow serving."""
    return self._predict(text, with_words=True)

  @tf.function(input_signature=[TEXT_SPEC])
  def serve_tflite(self, text):
    """The outputs TFLite can compute (all but `words`)."""
    return self._predict(text, with_words=False)

  def _predict_builtin(self, input_word_ids, input_mask, input_type_ids):
    input_word_ids, input_mask, input_type_ids = builtin_model.cut_to_length(
        [input_word_ids, input_mask, input_type_ids], self.seq_length)
    outputs = self.model({"input_word_ids": input_word_ids,
                          "input_mask": input_mask,
                          "input_type_ids": input_type_ids}, training=False)
    return {
        "intent_probs": tf.nn.softmax(
            tf.cast(outputs["intent_logits"], tf.float32), axis=-1),
        "slot_probs": tf.nn.softmax(
            tf.cast(outputs["slot_logits"], tf.float32), axis=-1),
    }

  def signatures(self):
    builtin = tf.function(
        self._predict_builtin,
        input_signature=builtin_model.input_signature(self.seq_length,
                                                      dynamic=True))
    return {
        "serving_default": serving_contract.new_trace(self.serve),
        "serving_tflite": serving_contract.new_trace(self.serve_tflite),
        builtin_model.BUILTIN_SIGNATURE: builtin.get_concrete_function(),
    }


def intent_slot_scores(predictions, gold_intents, gold_tags):
  """Intent accuracy and slot F1 (`metrics.snips_metrics`) of served outputs.

  Args:
    predictions: one dict per query with `intent` and `slot_tags` (bytes), as
      `parity.predict_saved_model` and `parity.predict_tflite` give them.
    gold_intents, gold_tags: the queries' gold labels (str).
  """
  intents = [parity.decode(p["intent"]) for p in predictions]
  tags = [parity.decode(p["slot_tags"]) for p in predictions]
  # A query cut to seq_length - 2 words is scored on the words it kept plus
  # 'O' for the rest, as decode_slot_tags does.
  tags = [t + ["O"] * (len(g) - len(t)) for t, g in zip(tags, gold_tags)]
  return metrics_lib.snips_metrics(gold_intents, intents, gold_tags, tags)
