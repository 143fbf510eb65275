"""Alias of `mixvocab_tf.tasks.finetuning.intent_slot.export_module`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.intent_slot.export_module import *
from mixvocab_tf.tasks.finetuning.intent_slot.export_module import IntentSlotExportModule as SnipsExportModule
from mixvocab_tf.tasks.finetuning.intent_slot.export_module import intent_slot_scores as snips_scores
