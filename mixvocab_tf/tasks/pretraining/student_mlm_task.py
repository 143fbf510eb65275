"""The student's masked-LM over the student vocabulary (Eq. 2), shared by tasks.

Zhao et al. (EACL 2021), Section 3, stage II trains the small student with
masked-LM on text segmented with the student vocabulary only; its NoKD
baseline (Section 4) trains the identical student from scratch. Both are this
task with or without an initial student table (`stage2.py`, `nokd.py`).
"""

from typing import Optional

from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf import text as text_lib
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task

#: Stable checkpoint name of the student encoder, for fine-tuning and export.
STUDENT_ENCODER_KEY = "student_encoder"


class StudentMlmTask(mlm_task.MlmTask):
  """MLM of a student encoder on student-vocabulary input.

  Args:
    student_preset: a preset of `networks.STUDENT_PRESETS` ("L6-H96", ...) or
      None to give `num_layers` and `hidden_size`.
    num_layers: overrides the preset's number of layers.
    hidden_size: overrides the preset's hidden size.
    num_attention_heads: attention heads (presets: 4).
    dropout_rate: dropout of the student (None: the preset's, 0.1).
    inputs: what to read (`MlmInputs`; default: gin's bindings).
    student_vocab: the student's vocab.txt (default: the shipped one).
    teacher_vocab: unused by the student's data; None (the default) lets the
      student vocabulary stand in for it.
  """

  input_mode = "student"
  loss_vocab_ids = (text_lib.STUDENT_VOCAB_ID,)

  def __init__(self,
               student_preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: Optional[float] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               student_vocab: Optional[str] = None,
               teacher_vocab: Optional[str] = None):
    super().__init__(inputs=inputs, teacher_vocab=teacher_vocab,
                     student_vocab=student_vocab)
    overrides = {}
    for name, value in (("num_layers", num_layers),
                        ("hidden_size", hidden_size),
                        ("num_attention_heads", num_attention_heads)):
      if value is not None:
        overrides[name] = value
    if dropout_rate is not None:
      overrides.update(output_dropout=dropout_rate,
                       attention_dropout=dropout_rate)
    overrides.setdefault("max_sequence_length",
                         max(512, self.input_config.seq_length))
    # Validated now: a bad preset or size is a configuration error.
    self.encoder_config = networks.student_encoder_config(
        student_preset, vocab_size=1, **overrides)
    self.student_preset = student_preset

  def vocab(self, which):
    # Student-only text needs no teacher vocabulary: the pipeline's teacher
    # side is never used when every word takes the student's segmentation, so
    # unless one is given the student's vocabulary stands in for it.
    if which == "teacher" and self.teacher_vocab_path is None:
      which = "student"
    return super().vocab(which)

  def fingerprinted_vocabs(self):
    return ("student",)

  @property
  def hidden_size(self):
    return self.encoder_config["hidden_size"]

  def build_student(self):
    """The student `MLMPretrainer` over the student vocabulary."""
    config = dict(self.encoder_config)
    config["vocab_size"] = len(self.vocab("student"))
    encoder = networks.PlainBertEncoder(**config)
    return models.MLMPretrainer(encoder, name="student")

  def build_model(self):
    return self.build_student()

  def compute_loss(self, model, features, training):
    outputs = model(features, training=training)
    outputs = {"student_mlm_logits": outputs["mlm_logits"]}
    return mlm_task.mlm_loss(outputs, features, self.loss_vocab_ids)

  def checkpoint_items(self, model):
    return {"model": model, STUDENT_ENCODER_KEY: model.encoder_network}

  def describe(self):
    config = self.encoder_config
    return (f"{super().describe()}, student {self.student_preset or ''} "
            f"{config['num_layers']} x {config['hidden_size']}")
