"""The names before the rename keep working: modules, tasks, gin bindings.

The one place that still uses the old names (`FinetuneSnipsTask`,
`snips_train_steps`, `finetune_glue`, ...): everything else says
`intent_slot` and `text_classification`.
"""

import gin
import tensorflow as tf

import mixvocab_tf.tasks  # pylint: disable=unused-import
from mixvocab_tf.core import base_task
from mixvocab_tf.jobs import convert_run
from mixvocab_tf.tasks import old_names
from mixvocab_tf.tasks.distillation import distill_intent_slot
from mixvocab_tf.tasks.distillation import distill_text_classification
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning.intent_slot import export_module as is_export
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.finetuning.text_classification import (
    data as text_classification_data)
from mixvocab_tf.tasks.finetuning.text_classification import (
    export_module as tc_export)
from mixvocab_tf.tasks.finetuning.text_classification import (
    task as text_classification_task)

#: Queries of the built-in SNIPS train split.
_SNIPS_TRAIN = 13084


class OldNamesTest(tf.test.TestCase):

  def tearDown(self):
    gin.clear_config()
    super().tearDown()

  def test_old_modules_hold_the_new_objects_under_old_names(self):
    # pylint: disable=g-import-not-at-top
    from mixvocab_tf.tasks.distillation import distill_glue
    from mixvocab_tf.tasks.distillation import distill_snips
    from mixvocab_tf.tasks.finetuning import finetune_glue
    from mixvocab_tf.tasks.finetuning import finetune_snips
    from mixvocab_tf.tasks.finetuning import glue_augment
    from mixvocab_tf.tasks.finetuning import glue_data
    from mixvocab_tf.tasks.finetuning import glue_export_module
    from mixvocab_tf.tasks.finetuning import snips_augment
    from mixvocab_tf.tasks.finetuning import snips_data
    from mixvocab_tf.tasks.finetuning import snips_export_module
    from mixvocab_tf.tasks.finetuning import snips_padding
    from mixvocab_tf.tasks.finetuning import batch_padding
    # pylint: enable=g-import-not-at-top
    self.assertIs(finetune_snips.FinetuneSnipsTask,
                  intent_slot_task.IntentSlotTask)
    self.assertIs(finetune_snips.read_split, intent_slot_task.read_split)
    self.assertIs(finetune_glue.FinetuneGlueTask,
                  text_classification_task.TextClassificationTask)
    self.assertIs(distill_snips.DistillSnipsTask,
                  distill_intent_slot.DistillIntentSlotTask)
    self.assertIs(distill_glue.DistillGlueTask,
                  distill_text_classification.DistillTextClassificationTask)
    self.assertIs(snips_data.SnipsLabels, intent_slot_data.IntentSlotLabels)
    self.assertIs(snips_data.snips_featurizer,
                  intent_slot_data.intent_slot_featurizer)
    self.assertIs(snips_data.make_snips_dataset,
                  intent_slot_data.make_intent_slot_dataset)
    self.assertIs(snips_export_module.SnipsExportModule,
                  is_export.IntentSlotExportModule)
    self.assertIs(glue_data.glue_featurizer,
                  text_classification_data.text_classification_featurizer)
    self.assertIs(glue_export_module.GlueExportModule,
                  tc_export.TextClassificationExportModule)
    self.assertIs(snips_padding.trim_to_longest,
                  batch_padding.trim_to_longest)
    self.assertTrue(callable(snips_augment.augment))
    self.assertTrue(callable(glue_augment.augment))

  def test_old_task_names_find_the_new_tasks(self):
    expected = {
        "finetune_snips": intent_slot_task.IntentSlotTask,
        "finetune_glue": text_classification_task.TextClassificationTask,
        "distill_snips": distill_intent_slot.DistillIntentSlotTask,
        "distill_glue":
            distill_text_classification.DistillTextClassificationTask,
    }
    for old, cls in expected.items():
      self.assertIs(base_task.get_task_class(old), cls)
      self.assertIs(base_task.get_task_class(cls.task_name), cls)
      self.assertTrue(old_names.same_task(old, cls.task_name))
    self.assertEqual(intent_slot_task.IntentSlotTask.task_name, "intent_slot")
    self.assertFalse(old_names.same_task("finetune_snips", "finetune_glue"))
    # An export made before the rename records the old name.
    self.assertIs(convert_run.serving_task_class(
        {"task_name": "finetune_snips"}), intent_slot_task.IntentSlotTask)

  def test_bindings_through_old_and_new_class_names_both_take_effect(self):
    gin.parse_config("""
        FinetuneSnipsTask.seq_length = 24
        IntentSlotTask.eval_split = 'train'
    """)
    task = intent_slot_task.IntentSlotTask()
    self.assertEqual(task.seq_length, 24)
    self.assertEqual(task.eval_split, "train")
    # Through the old task name (an old gin file) too: the same class.
    task = base_task.get_task_class("finetune_snips")()
    self.assertEqual((task.seq_length, task.eval_split), (24, "train"))

  def test_binding_one_parameter_through_both_names_is_an_error(self):
    gin.parse_config("""
        FinetuneGlueTask.seq_length = 24
        TextClassificationTask.seq_length = 32
    """)
    with self.assertRaisesRegex(ValueError, "seq_length bound both"):
      text_classification_task.TextClassificationTask()

  def test_old_bindings_reach_subclasses(self):
    # An archived distillation run's operative_config.gin binds the fine-
    # tuning parameters through the old base class name; subclasses
    # (DistillIntentSlotTask) construct their base through super().
    class Subclass(intent_slot_task.IntentSlotTask):
      pass

    gin.parse_config("FinetuneSnipsTask.seq_length = 24")
    self.assertEqual(Subclass().seq_length, 24)
    self.assertTrue(issubclass(distill_intent_slot.DistillIntentSlotTask,
                               intent_slot_task.IntentSlotTask))

  def test_train_steps_take_bindings_of_both_names_through_either(self):
    gin.parse_config("""
        snips_train_steps.epochs = 2.0
        intent_slot_train_steps.global_batch_size = 100
        epoch/snips_train_steps.epochs = 1.0
        glue_train_steps.epochs = 1.0
        text_classification_train_steps.glue_task = 'mrpc'
    """)
    expected = int(round(2.0 * _SNIPS_TRAIN / 100))
    self.assertEqual(intent_slot_task.intent_slot_train_steps(), expected)
    old = gin.get_configurable("snips_train_steps")
    self.assertEqual(old(), expected)
    with gin.config_scope("epoch"):
      self.assertEqual(intent_slot_task.intent_slot_train_steps(),
                       int(round(_SNIPS_TRAIN / 100)))
    self.assertEqual(text_classification_task.text_classification_train_steps(),
                     int(round(3668 / 64)))
    gin.parse_config("snips_train_steps.global_batch_size = 50")
    with self.assertRaisesRegex(ValueError, "global_batch_size bound both"):
      intent_slot_task.intent_slot_train_steps()


if __name__ == "__main__":
  tf.test.main()
