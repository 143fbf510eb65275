"""TextClassificationExportModule: training features' logits, labels, and a TFLite twin."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf import export
from mixvocab_tf.datasets import glue
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks.finetuning.text_classification import data as text_classification_data
from mixvocab_tf.tasks.finetuning.text_classification import export_module as text_classification_export

SEQ_LENGTH = 32
SENTENCES_A = ["A man is playing a guitar.", "", "Nobody sleeps 😴 here",
               "The cat sat on the mat " * 10]
SENTENCES_B = ["Someone plays music.", "Empty premise", "   ",
               "a cat was sitting"]


def _classifier():
  # tf_keras's own seeding (its initializers draw from its generator), so
  # the weights do not depend on what ran before in the process.
  tf_keras.utils.set_random_seed(3)
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=len(open(assets.default_student_vocab(),
                                encoding="utf-8").read().splitlines()),
      num_layers=1, hidden_size=32, num_attention_heads=2,
      max_sequence_length=SEQ_LENGTH)
  return sentence_classifier.SentenceClassifier(encoder, num_classes=3)


@pytest.fixture(scope="module")
def module():
  return text_classification_export.TextClassificationExportModule(
      _classifier(), glue.LABEL_NAMES["mnli"],
      assets.default_student_vocab(), pair=True, seq_length=SEQ_LENGTH)


def test_logits_are_the_classifier_logits_on_training_features(module):
  featurize = text_classification_data.text_classification_featurizer(assets.default_student_vocab(),
                                        SEQ_LENGTH, pair=True)
  features = featurize({"sentence_a": tf.constant(SENTENCES_A),
                        "sentence_b": tf.constant(SENTENCES_B)})
  want = module.model(features, training=False)["logits"].numpy()
  got = module.serve(sentence_a=tf.constant(SENTENCES_A),
                     sentence_b=tf.constant(SENTENCES_B))
  np.testing.assert_allclose(got["logits"], want, atol=1e-5)
  np.testing.assert_allclose(got["probabilities"].numpy().sum(-1), 1.0,
                             atol=1e-6)
  names = [glue.LABEL_NAMES["mnli"][i] for i in want.argmax(-1)]
  assert [n.decode() for n in got["label"].numpy()] == names


def test_single_sentence_signature_takes_sentence():
  module = text_classification_export.TextClassificationExportModule(
      _classifier(), ["negative", "positive", "neutral"],
      assets.default_student_vocab(), pair=False, seq_length=SEQ_LENGTH)
  function = module.signatures()["serving_default"]
  specs = tf.nest.flatten(function.structured_input_signature)
  assert [spec.name for spec in specs] == ["sentence"]
  out = function(sentence=tf.constant(SENTENCES_A))
  assert out["logits"].shape == (len(SENTENCES_A), 3)


@pytest.mark.large
def test_tflite_gives_the_saved_model_outputs(module, tmp_path):
  export_dir = str(tmp_path / "glue")
  export.export_saved_model(module, export_dir)
  info = export.read_export_info(export_dir)
  assert info["task"] == "glue" and info["pair"]
  assert info["task_name"] == "text_classification"
  assert info["inputs"] == ["sentence_a", "sentence_b"]
  assert info["labels"] == list(glue.LABEL_NAMES["mnli"])
  runner = tflite_conversion.TFLiteRunner(
      model_content=tflite_conversion.convert_saved_model(export_dir))
  assert runner.input_names == ["sentence_a", "sentence_b"]
  got = runner(SENTENCES_A, SENTENCES_B)
  # The signature the file is converted from (its word table at 4 bits).
  want = tf.saved_model.load(export_dir).signatures["serving_tflite"](
      sentence_a=tf.constant(SENTENCES_A), sentence_b=tf.constant(SENTENCES_B))
  np.testing.assert_allclose(got["logits"], want["logits"], atol=1e-4)
  np.testing.assert_array_equal(got["label"], want["label"].numpy())


@pytest.mark.large
def test_int8_conversion_of_a_pair_model_is_reproducible(module, tmp_path):
  export_dir = str(tmp_path / "glue")
  export.export_saved_model(module, export_dir)
  pairs = list(zip(SENTENCES_A, SENTENCES_B))
  content = tflite_conversion.convert_saved_model(export_dir, "int8", pairs)
  assert tflite_conversion.convert_saved_model(export_dir, "int8",
                                               pairs) == content
  got = tflite_conversion.TFLiteRunner(model_content=content)(SENTENCES_A,
                                                              SENTENCES_B)
  want = module.serve(sentence_a=tf.constant(SENTENCES_A),
                      sentence_b=tf.constant(SENTENCES_B))
  # Random weights give logits of about 0.01; int8 is within 1% of the
  # largest (measured 1.3e-4 of 0.018), so 5% is room, not a blank check.
  scale = np.abs(want["logits"].numpy()).max()
  np.testing.assert_allclose(got["logits"], want["logits"], atol=0.05 * scale)
