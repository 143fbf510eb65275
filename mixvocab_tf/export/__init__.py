"""Serving the students of mixed-vocabulary distillation (Zhao et al., 2021).

The generic plumbing: `ServingTokenizer` tokenizes raw strings in ops that
TFLite runs with tensorflow_text's kernels; `export_saved_model` writes an
export module as a SavedModel that tf_keras and Keras 3 load, its
.tflite-bound signatures reading the word table at 4 bits (`packed_embedding`);
`tflite_conversion` converts that SavedModel with a choice of quantization
and checks that the .tflite needs no Flex op; `parity` compares a .tflite
with its SavedModel. Export modules come from their tasks (e.g.
`IntentSlotTask.export_module(model)`); `EncoderExportModule` serves a bare
student encoder. Nothing here imports a task.
"""

from mixvocab_tf.export.encoder_export_module import EncoderExportModule
from mixvocab_tf.export.saved_model_export import export_saved_model
from mixvocab_tf.export.saved_model_export import read_export_info
from mixvocab_tf.export.serving_tokenizer import ServingTokenizer
