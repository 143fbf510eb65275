"""Serving module of a GLUE student: sentences in, label and probabilities out.

Zhao et al. (EACL 2021), §4.2, Table 2, fine-tune the students on SST-2 (one
sentence) and MRPC and MNLI (sentence pairs). This module wraps such a
classifier with the student tokenizer, packing `[CLS] A [SEP]` or
`[CLS] A [SEP] B [SEP]` as `text_classification_data.text_classification_featurizer` does in training.

Signatures (`serving_default`, and `serving_tflite`, the same outputs):
single-sentence tasks take `sentence` (string [batch]); pair tasks take
`sentence_a` and `sentence_b` (the same batch; other shapes are refused as
`serving_contract` says). Outputs: `label` (string [batch], from a
constant table, so TFLite answers it too), `label_id` (int32 [batch]),
`probabilities` and `logits` (float32 [batch, labels]). The label names are
also written to `assets.extra/labels.json` of the SavedModel.

`serving_builtin` is the same classifier without the tokenizer, for runtimes
that tokenize themselves (MediaPipe Tasks, LiteRT.js, a stock LiteRT app):
BERT's three int32 [1, n] inputs in (any n, at most `seq_length` read),
`probabilities` [1, labels] out (`builtin_model`).
`TextClassificationTask.export_module` builds this module.
"""

import json

import tensorflow as tf

from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import serving_contract
from mixvocab_tf.export import serving_tokenizer as serving_lib
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data


class TextClassificationExportModule(tf.Module):
  """A GLUE sentence(-pair) classifier with its tokenizer, for serving.

  Example:
  ```python
  module = TextClassificationExportModule(
      classifier, glue.LABEL_NAMES["mnli"], assets.default_student_vocab(),
      pair=True)
  module.serve(sentence_a=tf.constant(["A man sleeps."]),
               sentence_b=tf.constant(["Nobody sleeps."]))["label"]
  ```

  Args:
    model: a tf_keras model taking `input_word_ids`, `input_mask`,
      `input_type_ids` and returning logits [B, labels], either as a tensor
      or as a dict with `logits` (as Model Garden's `BertClassifier`).
    label_names: names indexed by label id (the dataset's `label_names`;
      GLUE: `datasets.glue.LABEL_NAMES[task]`).
    vocab: the student vocab.txt (path, kept as an asset) or token list.
    pair: True for sentence-pair tasks (the dataset's `is_pair`).
    seq_length: the most tokens of an example, special tokens included.
    lower_case: uncased tokenization, as in fine-tuning.
    task_name: the registered task whose serving hooks the converter uses
      for this export.
    name: module name.
  """

  task = "glue"

  def __init__(self, model, label_names, vocab, pair,
               seq_length=text_classification_data.DEFAULT_SEQ_LENGTH, lower_case=True,
               task_name="text_classification", name="glue_export_module"):
    super().__init__(name=name)
    label_names = [str(n) for n in label_names]
    if not label_names:
      raise ValueError("label_names must name at least one label; received "
                       "none.")
    if seq_length < (4 if pair else 3):
      raise ValueError(f"seq_length must leave room for the special tokens "
                       f"and text; received {seq_length}.")
    self.model = model
    self.label_names = label_names
    self.pair = bool(pair)
    self.seq_length = int(seq_length)
    self.task_name = task_name
    self.tokenizer = serving_lib.ServingTokenizer(vocab, lower_case)
    if self.pair:
      spec = [serving_contract.text_spec("sentence_a"),
              serving_contract.text_spec("sentence_b")]
      self.serve = tf.function(self._predict_pair, input_signature=spec)
    else:
      spec = [serving_contract.text_spec("sentence")]
      self.serve = tf.function(self._predict_single, input_signature=spec)

  def labels_json(self):
    return json.dumps({"labels": self.label_names}, indent=1)

  def export_info(self):
    """Fields of `export_info.json`: pair or single sentence, label names."""
    return {"pair": self.pair, "labels": self.label_names}

  def _logits(self, features):
    outputs = self.model(features, training=False)
    if isinstance(outputs, dict):
      outputs = outputs["logits"]
    return tf.cast(outputs, tf.float32)

  def _predict(self, text_a, text_b):
    logits = self._logits(
        self.tokenizer.pack_sentences(text_a, text_b, self.seq_length))
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {
        "label": tf.gather(tf.constant(self.label_names), label_id),
        "label_id": label_id,
        "probabilities": tf.nn.softmax(logits, axis=-1),
        "logits": logits,
    }

  def _predict_single(self, sentence):
    (sentence,) = serving_contract.check_text_batch([sentence], ["sentence"])
    return self._predict(sentence, None)

  def _predict_pair(self, sentence_a, sentence_b):
    return self._predict(*serving_contract.check_text_batch(
        [sentence_a, sentence_b], ["sentence_a", "sentence_b"]))

  def _predict_builtin(self, input_word_ids, input_mask, input_type_ids):
    input_word_ids, input_mask, input_type_ids = builtin_model.cut_to_length(
        [input_word_ids, input_mask, input_type_ids], self.seq_length)
    logits = self._logits({"input_word_ids": input_word_ids,
                           "input_mask": input_mask,
                           "input_type_ids": input_type_ids})
    return {"probabilities": tf.nn.softmax(logits, axis=-1)}

  def signatures(self):
    function = serving_contract.new_trace(self.serve)
    builtin = tf.function(
        self._predict_builtin,
        input_signature=builtin_model.input_signature(self.seq_length,
                                                      dynamic=True))
    return {"serving_default": function, "serving_tflite": function,
            builtin_model.BUILTIN_SIGNATURE: builtin.get_concrete_function()}
