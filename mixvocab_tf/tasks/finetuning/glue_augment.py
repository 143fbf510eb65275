"""Alias of `mixvocab_tf.tasks.finetuning.text_classification.augment`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.text_classification.augment import *
