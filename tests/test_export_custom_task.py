"""End to end: a fine-tuning task defined here exports and converts.

Convention 15 (extension points are owned by the extension): a new
fine-tuning task brings its export module and its serving hooks, and the
shared plumbing (`export/`, `serving.export_run`, `serving.convert_run`, the tools
on top of them) serves it unchanged. The task below is registered by this
file alone: trained by the trainer, exported by `export_run` from its run
directory, converted to TFLite and checked by `convert_run` on the task's own
examples and metric.
"""

import pytest
import json

import gin
import numpy as np
import tensorflow as tf

from mixvocab_tf import export
from mixvocab_tf import models
from mixvocab_tf.core import base_task
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.export import serving_contract
from mixvocab_tf.serving import convert_run
from mixvocab_tf.serving import export_run
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

SEQ_LENGTH = 16
#: Is the request about music (1) or not (0)?
SENTENCES = ["play some jazz", "book a table for two", "play the new album",
             "will it rain tomorrow", "add this song to my playlist",
             "rate this book five stars", "put on some music",
             "find the movie schedule"]
LABELS = [1, 0, 1, 0, 1, 0, 1, 0]
LABEL_NAMES = ["other", "music"]


class ToyExportModule(tf.Module):
  """Raw text in, music or not out: the toy task's serving module."""

  task = "toy"

  def __init__(self, model, vocab, seq_length, task_name):
    super().__init__(name="toy_export_module")
    self.model = model
    self.seq_length = seq_length
    self.task_name = task_name
    self.tokenizer = export.ServingTokenizer(vocab)

  def labels_json(self):
    return json.dumps({"labels": LABEL_NAMES})

  def export_info(self):
    return {"labels": LABEL_NAMES}

  @tf.function(input_signature=[serving_contract.text_spec("text")])
  def serve(self, text):
    # The package's serving contract: [batch] strings, other shapes refused.
    (text,) = serving_contract.check_text_batch([text], ["text"])
    features = self.tokenizer.pack_sentences(text, None, self.seq_length)
    logits = tf.cast(self.model(features, training=False)["logits"],
                     tf.float32)
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {"label": tf.gather(tf.constant(LABEL_NAMES), label_id),
            "label_id": label_id, "logits": logits}

  def signatures(self):
    function = self.serve.get_concrete_function()
    return {"serving_default": function, "serving_tflite": function}


@base_task.register_task("toy_music_intent")
class ToyMusicIntentTask(finetune_task.FinetuneTask):
  """Music requests against the rest, on eight sentences."""

  def build_model(self):
    return models.SentenceClassifier(self.build_encoder(), num_classes=2,
                                     dropout_rate=self.dropout_rate)

  def build_inputs(self, input_context=None, training=True):
    featurize = text_classification_data.text_classification_featurizer(self.tokens, self.seq_length,
                                          pair=False)
    dataset = tf.data.Dataset.from_tensor_slices(
        {"sentence_a": SENTENCES, "label": LABELS})
    return self.shuffled(dataset, input_context).batch(
        self.replica_batch_size(input_context), drop_remainder=True).map(
            featurize)

  def compute_loss(self, model, features, training):
    logits = model(features, training=training)["logits"]
    loss_sum, correct, count = text_classification_task.classification_loss(
        logits, features["label"])
    return loss_sum / count, {
        "accuracy": base_task.metric(correct, count)}

  def export_module(self, model):
    return ToyExportModule(model, self.vocab_path, self.seq_length,
                           self.task_name)

  @classmethod
  def serving_examples(cls, split, limit):
    return SENTENCES[:limit]

  @classmethod
  def serving_scores(cls, predictions, split):
    predicted = [int(p["label_id"]) for p in predictions]
    return {"accuracy": float(np.mean(
        np.equal(predicted, LABELS[:len(predicted)])))}


def test_a_task_defined_here_exports_and_converts(tmp_path):
  model_dir = str(tmp_path / "run")
  gin.clear_config()
  try:
    gin_utils.parse([], [
        "Trainer.task = 'toy_music_intent'",
        "Trainer.train_steps = 4",
        "Trainer.checkpoint_every = 4",
        "Trainer.log_every = 4",
        "ToyMusicIntentTask.student_preset = None",
        "ToyMusicIntentTask.num_layers = 1",
        "ToyMusicIntentTask.hidden_size = 32",
        "ToyMusicIntentTask.num_attention_heads = 2",
        f"ToyMusicIntentTask.seq_length = {SEQ_LENGTH}",
        "ToyMusicIntentTask.global_batch_size = 4",
        "ToyMusicIntentTask.shuffle_buffer = 8",
    ])
    trainer_lib.Trainer(model_dir=model_dir).train()
  finally:
    gin.clear_config()

  exported = export_run.export_run(model_dir, str(tmp_path / "export"))
  assert exported["task"] == "toy_music_intent"
  info = export.read_export_info(exported["export_dir"])
  assert info["task"] == "toy" and info["task_name"] == "toy_music_intent"
  assert info["inputs"] == ["text"] and info["labels"] == LABEL_NAMES

  output = str(tmp_path / "toy.tflite")
  converted = convert_run.convert_run(exported["export_dir"], output)
  assert converted["task"] == "toy"
  parity = converted["parity"]
  # The task's own examples and metric, not the built-in corpus.
  assert parity["num_examples"] == len(SENTENCES)
  assert parity["max_abs_diff/logits"] <= 1e-4
  assert parity["agreement/label"] == 1.0
  assert parity["tflite/accuracy"] == parity["saved_model/accuracy"]
  with open(output + ".labels.json", encoding="utf-8") as f:
    assert json.load(f) == {"labels": LABEL_NAMES}
