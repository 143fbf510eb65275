"""Alias of `mixvocab_tf.tasks.finetuning.intent_slot.data`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.intent_slot.data import *
from mixvocab_tf.tasks.finetuning.intent_slot.data import IntentSlotLabels as SnipsLabels
from mixvocab_tf.tasks.finetuning.intent_slot.data import IntentSlotExamples as SnipsExamples
from mixvocab_tf.tasks.finetuning.intent_slot.data import make_intent_slot_dataset as make_snips_dataset
from mixvocab_tf.tasks.finetuning.intent_slot.data import intent_slot_featurizer as snips_featurizer
from mixvocab_tf.tasks.finetuning.intent_slot.data import load_intent_slot as load_snips
from mixvocab_tf.tasks.finetuning.intent_slot.data import read_intent_slot as read_snips
