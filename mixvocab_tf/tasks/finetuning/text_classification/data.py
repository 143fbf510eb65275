"""Text classification features: `[CLS] A [SEP] B [SEP]`, packed in graph.

The examples come from the data layer (`mixvocab_tf.datasets`: GLUE by name,
or a user's files, as `TextClassificationExamples`); the task turns them
into `{'sentence_a': string [], 'sentence_b': string [] ('' for single
texts), 'label': int32 []}` and `text_classification_featurizer` packs
`[CLS] A [SEP] B [SEP]` in graph with tensorflow_text; its round-robin
trimmer cuts the longer sentence first, as BERT's `_truncate_seq_pair` does.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.text import wordpiece

DEFAULT_SEQ_LENGTH = 128
#: Features the encoder takes; `label` is the other key of a featurized
#: example.
MODEL_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")


def text_classification_featurizer(vocab, seq_length=DEFAULT_SEQ_LENGTH, pair=True,
                    lower_case=True):
  """Returns a function packing GLUE examples into encoder features, in graph.

  `[CLS] A [SEP] B [SEP]`, type ids 0 on [CLS], A and the first [SEP] and 1 on
  B and its [SEP]; `[CLS] A [SEP]` when `pair` is False (`sentence_b` is then
  ignored). When the pieces do not fit, the longer sentence is cut first
  (round robin; a tie leaves A one piece longer), which gives the lengths of
  BERT's `_truncate_seq_pair`.

  Args:
    vocab: the student WordPiece vocabulary (path or token list).
    seq_length: packed length, special tokens included.
    pair: True for sentence pairs (MRPC, MNLI: `datasets.glue.is_pair_task`).
    lower_case: lower-case, NFD-normalize and strip accents (uncased BERT).

  Returns:
    `featurize(example) -> features` for one example or a batch (map it before
    or after `batch`): `input_word_ids`, `input_mask`, `input_type_ids` (int32
    [..., seq_length]) and `label` (int32) when the example has one.
  """
  num_special = 3 if pair else 2
  if seq_length <= num_special:
    raise ValueError(
        f"seq_length must leave room for {num_special} special tokens and "
        f"text; received {seq_length}.")
  tokenizer, special_ids = wordpiece.fast_bert_tokenizer(vocab, lower_case)
  trimmer = tf_text.RoundRobinTrimmer(max_seq_length=seq_length - num_special)
  cls_id, sep_id = special_ids["[CLS]"], special_ids["[SEP]"]
  pad_id = special_ids["[PAD]"]
  keys = ("sentence_a", "sentence_b") if pair else ("sentence_a",)

  def featurize(example):
    is_scalar = tf.convert_to_tensor(example["sentence_a"]).shape.rank == 0
    segments = []
    for key in keys:
      text = tf.convert_to_tensor(example[key])
      segments.append(tokenizer.tokenize(
          tf.expand_dims(text, 0) if is_scalar else text))
    ids, type_ids = tf_text.combine_segments(
        trimmer.trim(segments), start_of_sequence_id=cls_id,
        end_of_segment_id=sep_id)
    input_word_ids, input_mask = tf_text.pad_model_inputs(
        ids, max_seq_length=seq_length, pad_value=pad_id)
    input_type_ids, _ = tf_text.pad_model_inputs(
        type_ids, max_seq_length=seq_length, pad_value=0)
    features = {
        "input_word_ids": tf.cast(input_word_ids, tf.int32),
        "input_mask": tf.cast(input_mask, tf.int32),
        "input_type_ids": tf.cast(input_type_ids, tf.int32),
    }
    if is_scalar:
      features = {k: tf.squeeze(v, 0) for k, v in features.items()}
    if "label" in example:
      features["label"] = tf.cast(example["label"], tf.int32)
    return features

  return featurize
