"""Alias of `mixvocab_tf.tasks.finetuning.text_classification.task`, kept for one release."""

# pylint: disable=wildcard-import,unused-wildcard-import
from mixvocab_tf.tasks.finetuning.text_classification.task import *
from mixvocab_tf.tasks.finetuning.text_classification.task import TextClassificationTask as FinetuneGlueTask
from mixvocab_tf.tasks.finetuning.text_classification.task import text_classification_train_steps as glue_train_steps
