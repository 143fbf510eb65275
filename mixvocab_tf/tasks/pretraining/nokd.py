"""NoKD: the stage II student trained from scratch, the paper's baseline.

Zhao et al. (EACL 2021), Section 4, compare the distilled student with the
identical student trained by masked-LM on the student vocabulary alone, with no
knowledge from a teacher ("NoKD"). Same model, inputs and loss as stage II
(Eq. 2), without the stage I student table.
"""

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.pretraining import student_mlm_task


@base_task.register_task("nokd")
class NoKDTask(student_mlm_task.StudentMlmTask):
  """Student MLM (Eq. 2) from random initialisation.

  The arguments are those of `StudentMlmTask` (student size, inputs,
  vocabulary).
  """
