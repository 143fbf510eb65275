"""Stage I: the teacher learns the student vocabulary on mixed-vocabulary MLM.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3, stage I and Eq. 1. A pretrained teacher reads text in which
each word was segmented with the teacher's or (with probability p_SV = 0.5)
the student's vocabulary. Student tokens are embedded with a new student table
of the student's width d_s and an up-projection to the teacher's width. A
masked token is predicted with the softmax of its own vocabulary, and the loss
adds both cross-entropies (`mlm_task.mlm_loss`). The teacher, both tables and
the up-projection all train.

Stage II (`stage2.py`) reads the student table from this task's checkpoint
under the stable name `student_word_embeddings`.
"""

from typing import Optional

from absl import logging

from mixvocab_tf import networks
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.core import base_task
from mixvocab_tf.tasks import student_spec
from mixvocab_tf.tasks import teacher_spec
from mixvocab_tf.tasks.pretraining import mlm_inputs
from mixvocab_tf.tasks.pretraining import mlm_task
from mixvocab_tf.tasks.pretraining import student_table_init

#: `Stage1Task.student_table_init` values.
TABLE_INITS = ("random", "teacher")

#: google-research/bert's BERT-LARGE dimensions (`teacher_loader`).
BERT_LARGE_CONFIG = teacher_loader.BERT_LARGE_CONFIG

#: Stable checkpoint names that later stages read.
STUDENT_TABLE_KEY = student_spec.STUDENT_TABLE_KEY
UP_PROJECTION_KEY = student_spec.UP_PROJECTION_KEY


def teacher_encoder_config(teacher_checkpoint: Optional[str],
                           teacher_config: Optional[str] = None):
  """BertEncoderV2 arguments of the teacher, and where they came from.

  See `teacher_loader.teacher_encoder_config`.
  """
  return teacher_loader.teacher_encoder_config(teacher_checkpoint,
                                               teacher_config)


@base_task.register_task("stage1")
class Stage1Task(mlm_task.MlmTask):
  """Mixed-vocabulary MLM of the teacher (Eq. 1).

  Args:
    teacher_checkpoint: the pretrained teacher, a Hugging Face directory
      (config.json + model.safetensors) or a google-research/bert checkpoint
      (directory with bert_config.json + bert_model.ckpt, or prefix); default:
      the package's default teacher (all-MiniLM-L6-v2).
    teacher_config: a config file giving the teacher's dimensions when the
      checkpoint is not reachable (dry runs); default: the checkpoint's.
    student_embedding_width: d_s, the width of the student table: the hidden
      size of the stage II student (96 for L6-H96).
    dropout_rate: dropout of the teacher (None: the checkpoint's).
    inputs: what to read (`MlmInputs`; default: gin's bindings).
    teacher_vocab: the teacher's vocab.txt (default: the one beside the
      teacher checkpoint, where both layouts keep it).
    student_vocab: the student's vocab.txt (default: the shipped one).
    student_table_init: how the student table and the up-projection start:
      'random' (the paper) or 'teacher' (`student_table_init.py`: the best
      rank-d_s factors of the teacher's own embeddings of the student
      tokens, so that a short stage I starts aligned instead of from noise).
    train_teacher: False freezes what the teacher brings (its word table,
      position and type embeddings and transformer layers); the student
      table, the up-projection and both MLM heads still train, so the
      student tokens are aligned with a teacher that does not move. (The
      paper trains everything; on a budget of minutes the pretrained layers
      may be better left alone.)
  """

  input_mode = "mixed"

  def __init__(self,
               teacher_checkpoint: Optional[str] = None,
               teacher_config: Optional[str] = None,
               student_embedding_width: int = 96,
               dropout_rate: Optional[float] = None,
               inputs: Optional[mlm_inputs.MlmInputs] = None,
               teacher_vocab: Optional[str] = None,
               student_vocab: Optional[str] = None,
               student_table_init: str = "random",
               train_teacher: bool = True):
    # Every argument explicit: stage I trains from the pretrained checkpoint,
    # never from a `TeacherSpec.stage1_checkpoint` bound for another task.
    self.teacher = teacher_spec.TeacherSpec(
        checkpoint=teacher_checkpoint, config=teacher_config,
        vocab=teacher_vocab, stage1_checkpoint=None, dropout_rate=dropout_rate)
    super().__init__(inputs=inputs, teacher_vocab=self.teacher.vocab_path,
                     student_vocab=student_vocab)
    if int(student_embedding_width) <= 0:
      raise ValueError("student_embedding_width must be positive; received "
                       f"{student_embedding_width!r}.")
    self.teacher_checkpoint = self.teacher.checkpoint
    self.student_embedding_width = int(student_embedding_width)
    self.dropout_rate = dropout_rate
    if student_table_init not in TABLE_INITS:
      raise ValueError(f"student_table_init must be one of {TABLE_INITS}; "
                       f"received {student_table_init!r}.")
    self.student_table_init = student_table_init
    self.train_teacher = bool(train_teacher)

  @property
  def config_source(self):
    return self.teacher.config_source

  def _vocab_size(self, which, default):
    try:
      return len(self.vocab(which))
    except FileNotFoundError:
      # Dry run without the files: sizes from the config.
      return default

  def build_model(self):
    teacher_vocab_size = self.teacher.encoder_config()[0]["vocab_size"]
    self.teacher.check_vocab_size(
        self._vocab_size("teacher", teacher_vocab_size), teacher_vocab_size)
    return self.teacher.build_architecture(
        student_vocab_size=self._vocab_size(
            "student", networks.PAPER_STUDENT_VOCAB_SIZE),
        student_embedding_width=self.student_embedding_width)

  def initialize(self, model):
    # Stage I starts from a pretrained teacher.
    self.teacher.load_pretrained(model, "Stage1Task.teacher_checkpoint")
    if self.student_table_init == "teacher":
      summary = student_table_init.warm_start(
          model.encoder_network.embedding_layer, self.vocab("teacher"),
          self.vocab("student"))
      logging.info(
          "Student table warm-started from the teacher's embeddings: %d of "
          "%d student tokens are teacher tokens; rank %d keeps %.1f%% of "
          "their variance.", summary["shared_with_teacher"],
          summary["student_tokens"], self.student_embedding_width,
          100 * summary["variance_kept"])

  def trainable_variables(self, model):
    if self.train_teacher:
      return model.trainable_variables
    encoder = model.encoder_network
    frozen = {id(v) for v in encoder.bert_encoder.trainable_variables}
    frozen.add(id(encoder.get_embedding_table()))
    return [v for v in model.trainable_variables if id(v) not in frozen]

  def encoder_configs(self, model):
    # Stage II and the distillation tasks rebuild this teacher from it.
    return {teacher_spec.TEACHER_ENCODER_KEY:
                model.encoder_network.get_config()}

  def checkpoint_items(self, model):
    encoder = model.encoder_network
    return {
        "model": model,
        # Stable names for stage II (the object paths inside `model` are
        # implementation details of the networks).
        STUDENT_TABLE_KEY: encoder.get_student_embedding_table(),
        UP_PROJECTION_KEY: encoder.up_projection,
    }

  def missing_files(self):
    missing = dict(super().missing_files())
    missing.update(self.teacher.missing_files(need_checkpoint=True))
    return missing

  def describe(self):
    source = f", teacher dims from {self.config_source}" if (
        self.config_source) else ""
    return (f"{super().describe()}, p_SV {self.input_config.p_student}, "
            f"teacher {self.teacher_checkpoint}, student table width "
            f"{self.student_embedding_width} ({self.student_table_init} "
            f"init){'' if self.train_teacher else ', teacher frozen'}"
            f"{source}")
