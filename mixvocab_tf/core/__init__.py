"""The training run shared by every task, and what it is built from.

`Trainer` (trainer.py) runs a registered `mixvocab_tf.core.base_task.Task`
on `orbit.Controller`: its step is a `task_trainer.TaskTrainer`
(`orbit.StandardTrainer`), its validation an `evaluation.Evaluator`
(`orbit.StandardEvaluator`), and `actions` holds what runs between loops;
`optimization` builds LAMB with warm-up and decay from `official.modeling`;
`checkpointing` saves, resumes and records vocabularies; `distribute` builds
the tf.distribute strategy; `gin_utils` parses configs for `train.py`.
"""

from mixvocab_tf.core.checkpointing import RunCheckpoint
from mixvocab_tf.core.checkpointing import VocabularyMismatchError
from mixvocab_tf.core.trainer import NonFiniteLossError
from mixvocab_tf.core.trainer import Trainer
