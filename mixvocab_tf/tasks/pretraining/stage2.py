"""Stage II: the student's MLM, its word table taken from stage I (Eq. 2).

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3, stage II: the small student is trained with masked-LM on
text segmented with the student vocabulary only, its input word embeddings
initialised from the student table that stage I trained inside the teacher
(`stage1.py` saves it as `student_word_embeddings`; the stage I run is
`StudentSpec.init_checkpoint`). The rest of the student starts fresh.

The stage I checkpoint must have been trained with this run's student
vocabulary (its sha256 is recorded in the checkpoint); otherwise the table's
rows would belong to other tokens, and the task refuses to start.
"""

from typing import Optional

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks import student_spec as student_spec_lib
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import student_mlm_task

#: The one reader of the stage I table (`StudentSpec.initialize` uses it).
load_student_table = student_spec_lib.load_student_table


@base_task.register_task("stage2")
class Stage2Task(student_mlm_task.StudentMlmTask):
  """Student MLM (Eq. 2) from the stage I student table.

  Args:
    student: the student (`StudentSpec`); its `init_checkpoint`, the stage I
      run (model_dir) or one of its checkpoints, is required.
    inputs: what to read (`MlmInputs`).
  """

  def __init__(self,
               student: Optional[student_spec_lib.StudentSpec] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None):
    super().__init__(student=student, inputs=inputs)
    if not self.student_spec.init_checkpoint:
      raise ValueError(
          "Stage2Task needs StudentSpec.init_checkpoint: the stage I model_dir "
          "(or checkpoint) whose student table initialises the student; "
          "received None. Use the 'nokd' task to train the same student from "
          "scratch.")

  @property
  def init_checkpoint(self):
    return self.student_spec.init_checkpoint
