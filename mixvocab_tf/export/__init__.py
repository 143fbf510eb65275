"""Serving the students of mixed-vocabulary distillation (Zhao et al., 2021).

Export modules wrap a fine-tuned student with the student tokenizer (raw
strings in, labels out) in ops that TFLite runs with tensorflow_text's kernels;
`export_saved_model` writes them as a SavedModel that tf_keras and Keras 3
load; `tflite_conversion` converts that SavedModel with a choice of
quantization and checks that the .tflite needs no Flex op.
"""

from mixvocab_tf.export.encoder_export_module import EncoderExportModule
from mixvocab_tf.export.glue_export_module import GlueExportModule
from mixvocab_tf.export.saved_model_export import export_saved_model
from mixvocab_tf.export.saved_model_export import read_export_info
from mixvocab_tf.export.serving_tokenizer import ServingTokenizer
from mixvocab_tf.export.snips_export_module import SnipsExportModule
