"""Custom-op checks of the TFLite conversion."""

import pytest
import tensorflow as tf

from mixvocab_tf.export import tflite_conversion


def _convert(function):
  converter = tf.lite.TFLiteConverter.from_concrete_functions(
      [function.get_concrete_function()])
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  converter.allow_custom_ops = True
  return converter.convert()


def test_ragged_range_is_refused():
  @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
  def ragged(lengths):
    return tf.ragged.range(lengths).flat_values

  model = _convert(ragged)
  assert "RaggedRange" in tflite_conversion.custom_ops(model)
  with pytest.raises(tflite_conversion.UnsupportedOpsError,
                     match="RaggedRange"):
    tflite_conversion.check_custom_ops(model)


def test_builtins_only_pass():
  @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
  def double(x):
    return 2.0 * x

  model = _convert(double)
  assert tflite_conversion.custom_ops(model) == []
  tflite_conversion.check_custom_ops(model)


def test_unknown_quantization_is_refused():
  with pytest.raises(ValueError, match="quantize must be one of"):
    tflite_conversion.convert_saved_model("/nonexistent", quantize="int4")
