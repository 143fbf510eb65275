"""Alias of `mixvocab_tf.tasks.finetuning.intent_slot.task`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.intent_slot.task import *
from mixvocab_tf.tasks.finetuning.intent_slot.task import IntentSlotTask as FinetuneSnipsTask
from mixvocab_tf.tasks.finetuning.intent_slot.task import intent_slot_train_steps as snips_train_steps
