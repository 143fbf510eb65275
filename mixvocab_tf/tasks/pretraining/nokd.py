"""NoKD: the stage II student trained from scratch, the paper's baseline.

Zhao et al. (EACL 2021), Section 4, compare the distilled student with the
identical student trained by masked-LM on the student vocabulary alone, with no
knowledge from a teacher ("NoKD"). Same model, inputs and loss as stage II
(Eq. 2), without the stage I student table.
"""

from typing import Optional

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks import student_spec as student_spec_lib
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import student_mlm_task


@base_task.register_task("nokd")
class NoKDTask(student_mlm_task.StudentMlmTask):
  """Student MLM (Eq. 2) from random initialisation.

  Args:
    student: the student (`StudentSpec`), without `init_checkpoint`.
    inputs: what to read (`MlmInputs`).
  """

  def __init__(self,
               student: Optional[student_spec_lib.StudentSpec] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None):
    super().__init__(student=student, inputs=inputs)
    if self.student_spec.init_checkpoint:
      raise ValueError(
          "NoKDTask trains the student from scratch, but StudentSpec."
          f"init_checkpoint is {self.student_spec.init_checkpoint!r}; expected "
          "None (use the 'stage2' task to start from a stage I table).")
