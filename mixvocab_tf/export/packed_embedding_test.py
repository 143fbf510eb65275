"""packed_embedding: the 4-bit word table, alone and in an exported model."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf import export
from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import packed_embedding
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks.finetuning.text_classification import export_module


def test_unpack_gives_each_row_back_to_half_a_level():
  rng = np.random.default_rng(0)
  table = rng.normal(size=(50, 8)).astype(np.float32)
  table[3] = 0.0
  table[4, 5] = -9.0  # A row whose largest weight is negative.
  packed, scales = packed_embedding.pack(table)
  assert packed.dtype == np.uint8 and packed.shape == (50, 4)
  assert scales.shape == (50,)
  back = packed_embedding.unpack(packed, scales).numpy()
  assert back.shape == table.shape
  assert np.all(np.abs(back - table) <= scales[:, None] / 2 + 1e-6)
  np.testing.assert_array_equal(back[3], 0.0)
  assert back[4, 5] == pytest.approx(-9.0)  # The extreme levels are exact.
  # Gathered rows, as the lookup reads them.
  ids = np.array([1, 4, 49, 0, 4])
  np.testing.assert_allclose(
      packed_embedding.unpack(packed[ids], scales[ids]).numpy(), back[ids])


def test_odd_width_is_refused():
  with pytest.raises(ValueError, match="even width"):
    packed_embedding.pack(np.zeros((4, 3)))


def _classifier(hidden_size=32):
  """(encoder, export module) of a random one-layer student classifier."""
  tf_keras.utils.set_random_seed(3)
  vocab = assets.default_student_vocab()
  encoder = student_encoder.build_student_encoder(
      None, vocab_size=4929, num_layers=1, hidden_size=hidden_size,
      num_attention_heads=2, max_sequence_length=16)
  model = sentence_classifier.SentenceClassifier(encoder, num_classes=2)
  return encoder, export_module.TextClassificationExportModule(
      model, ["no", "yes"], vocab, pair=False, seq_length=16)


@pytest.mark.large
def test_exported_files_carry_the_packed_table_and_the_model_its_float_one(
    tmp_path):
  encoder, module = _classifier()
  word_layer = encoder.get_embedding_layer()
  table = word_layer.embeddings.numpy()
  export.export_saved_model(module, str(tmp_path / "packed"))
  export.export_saved_model(_classifier()[1], str(tmp_path / "float"),
                            pack_word_tables=False)
  # The model reads its own float table again after the export.
  ids = tf.constant([[2, 100, 4000]])
  np.testing.assert_array_equal(word_layer(ids).numpy()[0],
                                table[[2, 100, 4000]])
  texts = ["play the best song of the year", "is it going to rain?"]
  want = module._logits(module.tokenizer.pack_sentences(  # pylint: disable=protected-access
      tf.constant(texts), None, 16)).numpy()
  sizes = {}
  for name in ("packed", "float"):
    directory = str(tmp_path / name)
    info = saved_model_export.read_export_info(directory)
    assert info["word_table_bits"] == (4 if name == "packed" else 32)
    content = tflite_conversion.convert_saved_model(directory, "none")
    builtin = builtin_model.convert_builtin(directory, "dynamic")
    assert builtin_model.non_builtin_operators(builtin) == []
    sizes[name] = (
        len(tflite_conversion.convert_saved_model(directory, "dynamic")),
        len(builtin))
    loaded = tf.saved_model.load(directory)
    # serving_default: the float model, packed or not.
    np.testing.assert_allclose(loaded.signatures["serving_default"](
        sentence=tf.constant(texts))["logits"].numpy(), want, atol=1e-5)
    # The .tflite: what the signature it was converted from computes.
    tflite = loaded.signatures["serving_tflite"](sentence=tf.constant(texts))
    np.testing.assert_allclose(
        tflite_conversion.TFLiteRunner(model_content=content)(texts)["logits"],
        tflite["logits"].numpy(), atol=1e-5)
    moved = np.abs(tflite["logits"].numpy() - want).max()
    if name == "float":
      assert moved < 1e-5
    else:
      assert 0 < moved < 0.05
  # int8 table: 4,929 x 32 bytes; packed: half of it and a scale per row.
  assert sizes["float"][0] - sizes["packed"][0] > 4929 * 32 * 0.35
  assert sizes["float"][1] - sizes["packed"][1] > 4929 * 32 * 0.35


@pytest.mark.large
def test_a_module_exported_twice_serves_its_weights_of_the_second_time(
    tmp_path):
  encoder, module = _classifier()
  texts = tf.constant(["play the best song of the year", "rain tomorrow?"])
  features = module.tokenizer.pack_sentences(texts, None, 16)
  want = {"first": module._logits(features).numpy()}  # pylint: disable=protected-access
  export.export_saved_model(module, str(tmp_path / "first"))
  word_layer = encoder.get_embedding_layer()
  word_layer.embeddings.assign(word_layer.embeddings[::-1])
  want["second"] = module._logits(features).numpy()  # pylint: disable=protected-access
  export.export_saved_model(module, str(tmp_path / "second"))
  # The 4-bit table moves the logits a little; the reversed table, more.
  tolerance = 0.1 * np.abs(want["first"] - want["second"]).max()
  for name in ("first", "second"):
    info = saved_model_export.read_export_info(str(tmp_path / name))
    assert info["word_table_bits"] == 4
    loaded = tf.saved_model.load(str(tmp_path / name))
    # serving_tflite reads the packed copy of that export's weights.
    got = loaded.signatures["serving_tflite"](sentence=texts)["logits"]
    np.testing.assert_allclose(got.numpy(), want[name], atol=tolerance)
    assert np.abs(got.numpy() - want[name]).max() > 1e-6  # The packed table.
