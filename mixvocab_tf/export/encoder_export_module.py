"""Serving module of a bare student encoder: strings in, embeddings out.

For uses of the small BERTs of Zhao et al. (EACL 2021) other than the paper's
fine-tuning tasks (features for another model, on-device similarity): the
encoder with the student tokenizer, `[CLS] text [SEP]` packed as
`text_classification_data.text_classification_featurizer` does for one sentence.

Signatures `serving_default` and `serving_tflite` (the same) take `text`
(string [batch]; other shapes are refused as `serving_contract` says) and
give `pooled_output` (float32 [batch, hidden]),
`sequence_output` (float32 [batch, length, hidden]) and `input_mask` (int32
[batch, length], 1 on real tokens; length is the longest packed text of the
batch, at most `seq_length`).
"""

import tensorflow as tf

from mixvocab_tf.export import serving_contract
from mixvocab_tf.export import serving_tokenizer as serving_lib

DEFAULT_SEQ_LENGTH = 128


class EncoderExportModule(tf.Module):
  """A BERT encoder with its tokenizer, for serving.

  Example:
  ```python
  module = EncoderExportModule(encoder, assets.default_student_vocab())
  module.serve(tf.constant(["a tiny bert"]))["pooled_output"]  # [1, hidden]
  ```

  Args:
    model: an encoder taking `input_word_ids`, `input_mask`,
      `input_type_ids` and returning `sequence_output` and `pooled_output`
      (`PlainBertEncoder`).
    vocab: the student vocab.txt (path, kept as an asset) or token list.
    seq_length: the most tokens of a text, [CLS] and [SEP] included.
    lower_case: uncased tokenization, as in training.
    name: module name.
  """

  task = "encoder"
  #: No fine-tuning task: the converter feeds it generic text.
  task_name = None

  def __init__(self, model, vocab, seq_length=DEFAULT_SEQ_LENGTH,
               lower_case=True, name="encoder_export_module"):
    super().__init__(name=name)
    if seq_length < 3:
      raise ValueError("seq_length must leave room for [CLS], a piece and "
                       f"[SEP]; received {seq_length}.")
    self.model = model
    self.seq_length = int(seq_length)
    self.tokenizer = serving_lib.ServingTokenizer(vocab, lower_case)

  def labels_json(self):
    return None

  def export_info(self):
    return {}

  @tf.function(input_signature=[serving_contract.text_spec("text")])
  def serve(self, text):
    (text,) = serving_contract.check_text_batch([text], ["text"])
    features = self.tokenizer.pack_sentences(text, None, self.seq_length)
    outputs = self.model(features, training=False)
    return {
        "pooled_output": tf.cast(outputs["pooled_output"], tf.float32),
        "sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
        "input_mask": features["input_mask"],
    }

  def signatures(self):
    function = serving_contract.new_trace(self.serve)
    return {"serving_default": function, "serving_tflite": function}
