"""builtin_model: a pair classifier's token-id file, its operators and metadata.

A tiny random classifier (1 layer, hidden 32, the shipped student
vocabulary) is exported as a SavedModel and converted: the builtin file
holds no custom op, answers the raw-string model's probabilities on the same
texts (fed the in-graph tokenizer's ids), and its metadata gives back the
vocabulary and labels. The own-data job's real files are checked in
tests/test_deploy.py.
"""

import io
import time
from unittest import mock
import zipfile

import numpy as np
import pytest
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf import export
from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks.finetuning.text_classification import export_module

SEQ_LENGTH = 24
LABELS = ["entailment", "neutral", "contradiction"]
PAIRS = [("A man is playing a guitar.", "Someone plays music."),
         ("", "Empty premise"), ("Café au lait, s'il vous plaît!", "   "),
         ("The cat sat on the mat " * 10, "a cat was sitting")]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
  tf_keras.utils.set_random_seed(5)
  vocab = assets.default_student_vocab()
  with open(vocab, encoding="utf-8") as f:
    tokens = f.read().splitlines()
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=len(tokens), num_layers=1, hidden_size=32,
      num_attention_heads=2, max_sequence_length=SEQ_LENGTH)
  module = export_module.TextClassificationExportModule(
      sentence_classifier.SentenceClassifier(encoder, num_classes=3), LABELS,
      vocab, pair=True, seq_length=SEQ_LENGTH)
  directory = str(tmp_path_factory.mktemp("export") / "saved_model")
  export.export_saved_model(module, directory)
  return directory, tokens


@pytest.mark.large
def test_builtin_file_has_no_custom_op_and_the_raw_models_outputs(exported):
  directory, _ = exported
  content = builtin_model.convert_builtin(directory, "none")
  assert builtin_model.non_builtin_operators(content) == []
  assert {"FULLY_CONNECTED", "SOFTMAX"} <= set(builtin_model.operators(content))
  runner = builtin_model.BuiltinRunner(model_content=content)
  assert runner.seq_length == SEQ_LENGTH
  raw = tflite_conversion.TFLiteRunner(
      model_content=tflite_conversion.convert_saved_model(directory))
  features = builtin_model.features(directory, PAIRS)
  for pair, inputs in zip(PAIRS, features):
    got = runner(inputs)["probabilities"]
    want = raw([pair[0]], [pair[1]])["probabilities"]
    np.testing.assert_allclose(got, want, atol=1e-5)
  # Pair packing: segment 1 on the second text and its [SEP].
  assert features[0]["input_type_ids"].max() == 1
  # Dynamic length: a text at its own length answers as padded to the
  # default one; a longer input is cut in the graph to its first
  # SEQ_LENGTH - 1 positions and its last token.
  details = runner.runner.get_input_details()["input_word_ids"]
  assert list(details["shape_signature"]) == [1, -1] and runner.dynamic
  own = runner.fit(features[0])
  assert own["input_word_ids"].shape[1] == features[0]["input_mask"].sum()
  padded = {k: np.pad(v, ((0, 0), (0, SEQ_LENGTH - v.shape[1])))
            for k, v in own.items()}
  np.testing.assert_allclose(runner.runner(**own)["probabilities"],
                             runner.runner(**padded)["probabilities"],
                             atol=1e-6)
  rng = np.random.default_rng(0)
  long = {"input_word_ids": rng.integers(1000, 2000, [1, 40], np.int32),
          "input_mask": np.ones([1, 40], np.int32),
          "input_type_ids": np.zeros([1, 40], np.int32)}
  keep = np.r_[0:SEQ_LENGTH - 1, 39]
  np.testing.assert_allclose(
      runner.runner(**long)["probabilities"],
      runner.runner(**{k: v[:, keep] for k, v in long.items()})[
          "probabilities"], atol=1e-6)
  np.testing.assert_array_equal(runner.fit(long)["input_word_ids"],
                                long["input_word_ids"][:, keep])


def test_metadata_gives_back_vocabulary_labels_and_length(exported):
  directory, tokens = exported
  read = builtin_model.read_metadata(
      builtin_model.convert_builtin(directory, "dynamic"))
  assert read["files"]["vocab.txt"].splitlines() == tokens
  assert read["files"]["labels.txt"].splitlines() == LABELS
  metadata = read["metadata"]
  assert f"seq_length={SEQ_LENGTH}" in metadata["description"]
  assert "[1, n]" in metadata["description"]
  assert metadata["license"] == builtin_model.LICENSE
  (subgraph,) = metadata["subgraph_metadata"]
  assert subgraph["input_process_units"][0]["options_type"] == (
      "BertTokenizerOptions")
  (output,) = subgraph["output_tensor_metadata"]
  assert output["associated_files"][0]["name"] == "labels.txt"


def test_the_same_model_gives_the_same_bytes_at_any_time(exported):
  # tflite-support stamps each packed file with the clock's time: two exports
  # of one model differed in the zip's time stamps.
  directory, tokens = exported
  model = tflite_conversion.convert_saved_model(
      directory, "dynamic", signature=builtin_model.BUILTIN_SIGNATURE,
      builtin_only=True)
  info = saved_model_export.read_export_info(directory)
  files = []
  for clock in (1.7e9, 1.8e9):  # 2023 and 2027
    with mock.patch.object(time, "time", return_value=clock):
      files.append(builtin_model.write_metadata(model, info, tokens))
  assert files[0] == files[1]
  with zipfile.ZipFile(io.BytesIO(files[0])) as archive:
    assert archive.testzip() is None
    assert {i.filename: i.date_time for i in archive.infolist()} == {
        name: builtin_model.PACKED_FILE_TIME
        for name in ("labels.txt", "vocab.txt")}
  read = builtin_model.read_metadata(files[0])
  assert read["files"]["labels.txt"].splitlines() == LABELS


@pytest.mark.large
def test_paths_and_errors(exported, tmp_path):
  assert builtin_model.builtin_path("/x/snips.tflite") == (
      "/x/snips_builtin.tflite")
  directory, _ = exported
  assert builtin_model.has_builtin_signature(directory)
  # An export without the signature (an encoder) is refused by name.
  from mixvocab_tf.export import encoder_export_module  # pylint: disable=g-import-not-at-top
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=len(exported[1]), num_layers=1, hidden_size=16,
      num_attention_heads=2, max_sequence_length=SEQ_LENGTH)
  encoder_dir = str(tmp_path / "encoder")
  export.export_saved_model(encoder_export_module.EncoderExportModule(
      encoder, assets.default_student_vocab(), SEQ_LENGTH), encoder_dir)
  assert not builtin_model.has_builtin_signature(encoder_dir)
  with pytest.raises(ValueError, match="no 'serving_builtin' signature"):
    builtin_model.convert_builtin(encoder_dir)
