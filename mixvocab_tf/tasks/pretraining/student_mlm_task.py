"""The student's masked-LM over the student vocabulary (Eq. 2), shared by tasks.

Zhao et al. (EACL 2021), Section 3, stage II trains the small student with
masked-LM on text segmented with the student vocabulary only; its NoKD
baseline (Section 4) trains the identical student from scratch. Both are this
task with or without an initial student table (`stage2.py`, `nokd.py`): the
student, its size and its table are one `StudentSpec`.
"""

from typing import Optional

from mixvocab_tf import text as text_lib
from mixvocab_tf.tasks import student_spec as student_spec_lib
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task

#: Stable checkpoint name of the student encoder, for fine-tuning and export.
STUDENT_ENCODER_KEY = student_spec_lib.STUDENT_ENCODER_KEY


class StudentMlmTask(mlm_task.MlmTask):
  """MLM of a student encoder on student-vocabulary input.

  Args:
    student: the student (`StudentSpec`; default: gin's bindings of
      `StudentSpec`).
    inputs: what to read (`MlmInputs`; default: gin's bindings).
  """

  input_mode = "student"
  loss_vocab_ids = (text_lib.STUDENT_VOCAB_ID,)

  def __init__(self,
               student: Optional[student_spec_lib.StudentSpec] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None):
    self.student_spec = (student if student is not None
                         else student_spec_lib.StudentSpec())
    super().__init__(inputs=inputs,
                     student_vocab=self.student_spec.vocab_path)
    self.encoder_config = self.student_spec.encoder_config(
        self.input_config.seq_length)
    self.student_preset = self.student_spec.preset

  def fingerprinted_vocabs(self):
    return ("student",)

  @property
  def hidden_size(self):
    return self.encoder_config["hidden_size"]

  def build_student(self):
    """The student `MLMPretrainer` over the student vocabulary."""
    return self.student_spec.build(self.encoder_config,
                                   len(self.vocab("student")))

  def build_model(self):
    return self.build_student()

  def initialize(self, model):
    self.student_spec.initialize(model, self.vocab_fingerprints()["student"])

  def compute_loss(self, model, features, training):
    outputs = model(features, training=training)
    outputs = {"student_mlm_logits": outputs["mlm_logits"]}
    return mlm_task.mlm_loss(outputs, features, self.loss_vocab_ids)

  def checkpoint_items(self, model):
    return {"model": model, STUDENT_ENCODER_KEY: model.encoder_network}

  def encoder_configs(self, model):
    return {STUDENT_ENCODER_KEY: model.encoder_network.get_config()}

  def missing_files(self):
    missing = dict(super().missing_files())
    missing.update(self.student_spec.missing_files())
    return missing

  def describe(self):
    return (f"{super().describe()}, "
            f"{self.student_spec.describe(self.encoder_config)}")
