"""Alias of `mixvocab_tf.tasks.finetuning.intent_slot.augment`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.intent_slot.augment import *
