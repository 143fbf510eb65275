"""Alias of `mixvocab_tf.tasks.finetuning.text_classification.export_module`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.text_classification.export_module import *
from mixvocab_tf.tasks.finetuning.text_classification.export_module import TextClassificationExportModule as GlueExportModule
