"""Tasks: what to train. Importing this package registers the built-in ones.

`base_task.Task` is the interface and `base_task.register_task` the registry;
`base_task.get_task_class(name)` finds a task by the name a gin file gives to
`Trainer.task`. Pretraining (Zhao et al., EACL 2021, Section 3): `stage1`
(mixed-vocabulary teacher MLM, Eq. 1), `stage2` (student MLM from the stage I
table, Eq. 2), `nokd` (the same student from scratch), `dual` (teacher and
student together with shared projections).
"""

from mixvocab_tf.tasks import base_task
from mixvocab_tf.tasks import dual
from mixvocab_tf.tasks import nokd
from mixvocab_tf.tasks import stage1
from mixvocab_tf.tasks import stage2
from mixvocab_tf.tasks import finetune_glue
from mixvocab_tf.tasks import finetune_snips
# Distillation baselines with the teacher's vocabulary (DistilBERT, TinyBERT,
# PKD) and stage II with distillation across vocabularies.
from mixvocab_tf.tasks import distilbert
from mixvocab_tf.tasks import pkd
from mixvocab_tf.tasks import stage2_distill
from mixvocab_tf.tasks import tinybert
from mixvocab_tf.tasks import tinybert_snips
from mixvocab_tf.tasks import distill_snips  # Across vocabularies.
