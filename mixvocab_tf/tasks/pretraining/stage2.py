"""Stage II: the student's MLM, its word table taken from stage I (Eq. 2).

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3, stage II: the small student is trained with masked-LM on
text segmented with the student vocabulary only, its input word embeddings
initialised from the student table that stage I trained inside the teacher
(`stage1.py` saves it as `student_word_embeddings`). The rest of the student
starts fresh.

The stage I checkpoint must have been trained with this run's student
vocabulary (its sha256 is recorded in the checkpoint); otherwise the table's
rows would belong to other tokens, and the task refuses to start.
"""

from typing import Optional

from absl import logging
import tensorflow as tf

from mixvocab_tf.core import base_task
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import stage1
from mixvocab_tf.tasks.pretraining import student_mlm_task
from mixvocab_tf.core import checkpointing

_TABLE_KEY = f"{stage1.STUDENT_TABLE_KEY}/.ATTRIBUTES/VARIABLE_VALUE"


def load_student_table(init_checkpoint: str, table: tf.Variable,
                       student_fingerprint: str) -> str:
  """Assigns the stage I student table of `init_checkpoint` to `table`.

  Args:
    init_checkpoint: a stage I model_dir (its latest checkpoint) or checkpoint.
    table: the student's word-embedding variable [vocab, hidden].
    student_fingerprint: sha256 of this run's student vocabulary.

  Returns:
    The checkpoint path read.

  Raises:
    FileNotFoundError: no checkpoint there.
    VocabularyMismatchError: it was trained with another student vocabulary.
    ValueError: it holds no student table, or one of another shape.
  """
  path = checkpointing.resolve_checkpoint(init_checkpoint,
                                          what="stage I checkpoint")
  shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
  if _TABLE_KEY not in shapes:
    raise ValueError(
        f"{path} holds no stage I student table ({stage1.STUDENT_TABLE_KEY});"
        " Stage2Task.init_checkpoint must point at a stage I (or dual) run.")
  checkpointing.check_vocab_fingerprints(
      path, {"student": student_fingerprint},
      purpose="initialising the stage II student")
  if list(shapes[_TABLE_KEY]) != table.shape.as_list():
    raise ValueError(
        f"The stage I student table in {path} has shape {shapes[_TABLE_KEY]} "
        f"but this student's word embeddings are {table.shape.as_list()} "
        "([vocabulary, hidden]); set Stage1Task.student_embedding_width to the "
        "student's hidden size.")
  status = tf.train.Checkpoint(**{stage1.STUDENT_TABLE_KEY: table}).read(path)
  status.assert_existing_objects_matched().expect_partial()
  logging.info("Initialised the student table from %s.", path)
  return path


@base_task.register_task("stage2")
class Stage2Task(student_mlm_task.StudentMlmTask):
  """Student MLM (Eq. 2) from the stage I student table.

  Args:
    init_checkpoint: the stage I run (model_dir) or one of its checkpoints.
    student_preset, num_layers, hidden_size, num_attention_heads,
    dropout_rate, inputs, student_vocab, teacher_vocab: as for
      `StudentMlmTask`.
  """

  def __init__(self,
               init_checkpoint: Optional[str] = None,
               student_preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: Optional[float] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               student_vocab: Optional[str] = None,
               teacher_vocab: Optional[str] = None):
    super().__init__(
        student_preset=student_preset, num_layers=num_layers,
        hidden_size=hidden_size, num_attention_heads=num_attention_heads,
        dropout_rate=dropout_rate, inputs=inputs, student_vocab=student_vocab,
        teacher_vocab=teacher_vocab)
    if not init_checkpoint:
      raise ValueError(
          "Stage2Task.init_checkpoint is required: the stage I model_dir (or "
          "checkpoint) whose student table initialises the student. Use the "
          "'nokd' task to train the same student from scratch.")
    self.init_checkpoint = init_checkpoint

  def initialize(self, model):
    load_student_table(self.init_checkpoint,
                       model.encoder_network.get_embedding_table(),
                       self.vocab_fingerprints()["student"])

  def missing_files(self):
    missing = dict(super().missing_files())
    try:
      checkpointing.resolve_checkpoint(self.init_checkpoint)
    except FileNotFoundError as e:
      missing["stage I checkpoint"] = str(e)
    return missing

  def describe(self):
    return f"{super().describe()}, student table from {self.init_checkpoint}"
