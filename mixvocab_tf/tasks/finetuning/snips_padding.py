"""Alias of `mixvocab_tf.tasks.finetuning.batch_padding`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.batch_padding import *
