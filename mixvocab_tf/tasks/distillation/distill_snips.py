"""Alias of `mixvocab_tf.tasks.distillation.distill_intent_slot`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.distillation.distill_intent_slot import *
from mixvocab_tf.tasks.distillation.distill_intent_slot import DistillIntentSlotTask as DistillSnipsTask
