"""Tasks: what to train. Importing this package registers the built-in ones.

Three kinds, one subpackage each: `pretraining/` (stage I, stage II, NoKD,
dual training: Zhao et al., EACL 2021, Section 3), `distillation/` (DistilBERT,
TinyBERT, PKD, stage II across vocabularies: the baselines of Section 4) and
`finetuning/` (SNIPS and GLUE, Section 4.2). What they share sits here: the
student of a task is one `StudentSpec` (`student_spec.py`), its teacher one
`TeacherSpec` (`teacher_spec.py`), each with its builder. The interface they
implement and the registry that finds a task by the name a gin file gives to
`Trainer.task` are `mixvocab_tf.core.base_task`.
"""

from mixvocab_tf.tasks.pretraining import dual
from mixvocab_tf.tasks.pretraining import nokd
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.tasks.pretraining import stage2
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task

# Distillation baselines with the teacher's vocabulary (DistilBERT, TinyBERT,
# PKD) and stage II with distillation across vocabularies.
from mixvocab_tf.tasks.distillation import distilbert
from mixvocab_tf.tasks.distillation import pkd
from mixvocab_tf.tasks.distillation import stage2_distill
from mixvocab_tf.tasks.distillation import tinybert
from mixvocab_tf.tasks.distillation import tinybert_snips
# Task distillation across vocabularies (a teacher fine-tuned on the task).
from mixvocab_tf.tasks.distillation import distill_intent_slot
from mixvocab_tf.tasks.distillation import distill_text_classification
