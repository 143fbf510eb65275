"""Alias of `mixvocab_tf.tasks.finetuning.text_classification.data`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.text_classification.data import *
from mixvocab_tf.tasks.finetuning.text_classification.data import text_classification_featurizer as glue_featurizer
