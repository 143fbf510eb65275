"""The student of a pretraining or distillation task: one spec, one builder.

Zhao et al. (EACL 2021), Section 3: the stage II student is a small BERT
(a preset such as L6-H96) whose word table may start from the student table
that stage I trained inside the teacher; the NoKD baseline and the
single-vocabulary baselines of Section 4 (DistilBERT, TinyBERT, PKD) train the
same architecture. Every task that trains a student takes a `StudentSpec`
(one spec, one builder) instead of forwarding its size, dropout, vocabulary
and init checkpoint through its constructor; in a gin file:

```
StudentSpec.preset = 'L6-H96'
StudentSpec.init_checkpoint = '/tmp/stage1'   # stage II only
```

`load_student_table` reads the stage I table (under its stable checkpoint
name `student_word_embeddings`) into a student.
"""

from typing import Any, Dict, Optional

from absl import logging
import gin
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import models
from mixvocab_tf import networks
from mixvocab_tf.core import checkpointing

#: Stable checkpoint names that stage I writes and later stages read.
STUDENT_TABLE_KEY = "student_word_embeddings"
UP_PROJECTION_KEY = "up_projection"
#: Stable checkpoint name of the student encoder, for fine-tuning and export.
STUDENT_ENCODER_KEY = "student_encoder"
STUDENT_TABLE_CHECKPOINT_KEY = f"{STUDENT_TABLE_KEY}/.ATTRIBUTES/VARIABLE_VALUE"


def student_table_shape(path: str):
  """[vocab, width] of the stage I student table in checkpoint `path`.

  Raises:
    ValueError: `path` holds no stage I student table.
  """
  shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
  if STUDENT_TABLE_CHECKPOINT_KEY not in shapes:
    raise ValueError(
        f"{path} holds no stage I student table ({STUDENT_TABLE_KEY}); "
        "expected a stage I (or dual) run.")
  return list(shapes[STUDENT_TABLE_CHECKPOINT_KEY])


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
  try:
    shape = student_table_shape(path)
  except ValueError as e:
    raise ValueError(f"{e} StudentSpec.init_checkpoint must point at a stage "
                     "I (or dual) run.") from e
  checkpointing.check_vocab_fingerprints(
      path, {"student": student_fingerprint},
      purpose="initialising the stage II student")
  if shape != table.shape.as_list():
    raise ValueError(
        f"The stage I student table in {path} has shape {shape} but this "
        f"student's word embeddings are {table.shape.as_list()} ([vocabulary, "
        "hidden]); set Stage1Task.student_embedding_width to the student's "
        "hidden size.")
  status = tf.train.Checkpoint(**{STUDENT_TABLE_KEY: table}).read(path)
  status.assert_existing_objects_matched().expect_partial()
  logging.info("Initialised the student table from %s.", path)
  return path


@gin.configurable(module="mixvocab_tf.tasks")
class StudentSpec:
  """What the student is: size, dropout, vocabulary, initial word table.

  Args:
    preset: a preset of `networks.STUDENT_PRESETS` ("L6-H96", ...) or None to
      give `num_layers` and `hidden_size`.
    num_layers: overrides the preset's number of layers.
    hidden_size: overrides the preset's hidden size.
    num_attention_heads: attention heads (presets: 4).
    dropout_rate: dropout of the student (None: the preset's, 0.1).
    vocab: the student vocabulary's vocab.txt (default: the shipped one).
      The single-vocabulary baselines' students read the teacher's
      vocabulary; for them this only sizes the teacher's (unused) student
      table.
    init_checkpoint: a stage I run (model_dir or checkpoint) whose student
      table initialises the student's word embeddings (stage II, Section 3);
      None: a fresh student.
  """

  def __init__(self,
               preset: Optional[str] = "L6-H96",
               num_layers: Optional[int] = None,
               hidden_size: Optional[int] = None,
               num_attention_heads: Optional[int] = None,
               dropout_rate: Optional[float] = None,
               vocab: Optional[str] = None,
               init_checkpoint: Optional[str] = None):
    self.preset = preset
    self.overrides = {name: value for name, value in (
        ("num_layers", num_layers), ("hidden_size", hidden_size),
        ("num_attention_heads", num_attention_heads)) if value is not None}
    if dropout_rate is not None:
      self.overrides.update(output_dropout=dropout_rate,
                            attention_dropout=dropout_rate)
    self.dropout_rate = dropout_rate
    self.vocab_path = vocab or assets.default_student_vocab()
    self.init_checkpoint = init_checkpoint
    # Validated now: a bad preset or size is a configuration error.
    self.encoder_config(seq_length=1)

  def encoder_config(self, seq_length: int, vocab_size: int = 1,
                     **extra) -> Dict[str, Any]:
    """`PlainBertEncoder` arguments of this student.

    Args:
      seq_length: the task's sequence length (positions: at least 512, as
        BERT's, so a checkpoint serves any length up to it).
      vocab_size: rows of the word table (1: not known yet).
      **extra: further `BertEncoderV2` arguments (e.g.
        return_word_embeddings=True for distillation).
    """
    overrides = dict(self.overrides, **extra)
    overrides.setdefault("max_sequence_length", max(512, seq_length))
    return networks.student_encoder_config(self.preset, vocab_size=vocab_size,
                                           **overrides)

  def build(self, encoder_config: Dict[str, Any], vocab_size: int):
    """The student `MLMPretrainer` of `encoder_config` over `vocab_size` words.

    Fresh weights; `initialize` loads the stage I table when there is one.
    """
    config = dict(encoder_config, vocab_size=vocab_size)
    return models.MLMPretrainer(networks.PlainBertEncoder(**config),
                                name="student")

  def initialize(self, student, student_fingerprint: str) -> Optional[str]:
    """Loads the stage I student table into `student` if there is one.

    Returns:
      The checkpoint read, or None without `init_checkpoint`.
    """
    if not self.init_checkpoint:
      return None
    return load_student_table(
        self.init_checkpoint, student.encoder_network.get_embedding_table(),
        student_fingerprint)

  def missing_files(self) -> Dict[str, str]:
    missing = {}
    if self.init_checkpoint:
      try:
        checkpointing.resolve_checkpoint(self.init_checkpoint)
      except FileNotFoundError as e:
        missing["stage I checkpoint"] = str(e)
    return missing

  def describe(self, encoder_config: Dict[str, Any]) -> str:
    table = (f", student table from {self.init_checkpoint}"
             if self.init_checkpoint else "")
    return (f"student {self.preset or ''} {encoder_config['num_layers']} x "
            f"{encoder_config['hidden_size']}{table}")
