"""Alias of `mixvocab_tf.tasks.distillation.distill_text_classification`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.distillation.distill_text_classification import *
from mixvocab_tf.tasks.distillation.distill_text_classification import DistillTextClassificationTask as DistillGlueTask
