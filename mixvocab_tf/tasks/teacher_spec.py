"""The teacher of a task: one spec, one way to build and load it.

Zhao et al. (EACL 2021), Section 3: stage I starts from a pretrained BERT
(google-research/bert's BERT-LARGE in the paper, a Hugging Face safetensors
directory such as the package's default all-MiniLM-L6-v2 here) and adds a
student table and an up-projection; stage II with distillation and the
baselines of Section 4 (DistilBERT, TinyBERT, PKD) run that teacher frozen,
either as pretrained or with the weights of a stage I run. Fine-tuning the
teacher itself (Section 4.2) reads the same checkpoint.

`TeacherSpec` says where the teacher comes from (one spec, one builder); in a
gin
file:

```
TeacherSpec.checkpoint = '/ckpt/uncased_L-24_H-1024_A-16'
TeacherSpec.stage1_checkpoint = '/tmp/stage1'
```

Its architecture comes from, in order: the stage I run's
`encoder_config.json` (written beside its checkpoints), the
pretrained checkpoint's config, the `config` file, BERT-LARGE's dimensions.
The weights come from `models.teacher_loader` (the one loader of
pretrained BERTs) or from the stage I run. The frozen teacher of a
distillation task is loaded when the model is built, not in
`Task.initialize`: it is kept out of the student's checkpoints, so a
resumed run must load it again.
"""

import os
from typing import Any, Dict, Optional, Tuple

from absl import logging
import gin
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.core import checkpointing
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.tasks import student_spec

#: Checkpoint name (and `encoder_config.json` key) of stage I's teacher
#: encoder.
TEACHER_ENCODER_KEY = "teacher_encoder"

# Keys of a DualVocabBertEncoder config that are not BertEncoderV2 arguments
# of the pretrained BERT (the student table's sizes are chosen per task).
_NOT_BERT_KEYS = ("name", "trainable", "dtype", "student_vocab_size",
                  "student_embedding_width", "return_attention_scores",
                  "return_word_embeddings")


def _exists(path):
  return bool(path) and tf.io.gfile.exists(path)


def vocab_beside(checkpoint: str) -> str:
  """The vocab.txt beside a BERT checkpoint (both layouts keep it there)."""
  base = (checkpoint if not checkpoint.endswith(".ckpt")
          else os.path.dirname(checkpoint))
  return os.path.join(base, "vocab.txt")


@gin.configurable(module="mixvocab_tf.tasks")
class TeacherSpec:
  """Where the teacher comes from, and (after `build`) whether it was loaded.

  Args:
    checkpoint: a pretrained BERT (Hugging Face directory or
      google-research/bert checkpoint); default: the package's default
      teacher. Gives the architecture, and the weights when there is no stage
      I run.
    config: a config file giving the architecture when the checkpoint is not
      reachable (dry runs).
    vocab: the teacher's vocab.txt (default: beside the checkpoint).
    stage1_checkpoint: a stage I run (model_dir or checkpoint) of that
      teacher; its weights (teacher, student table, up-projection, both MLM
      heads) replace the pretrained ones.
    dropout_rate: dropout of the teacher when it trains (stage I; None: the
      checkpoint's).
  """

  def __init__(self,
               checkpoint: Optional[str] = None,
               config: Optional[str] = None,
               vocab: Optional[str] = None,
               stage1_checkpoint: Optional[str] = None,
               dropout_rate: Optional[float] = None):
    self.checkpoint = checkpoint or assets.default_teacher_dir()
    self.config_path = config
    self.vocab_path = vocab or vocab_beside(self.checkpoint)
    self.stage1_checkpoint = stage1_checkpoint
    self.dropout_rate = dropout_rate
    #: Set by `build`/`load`: whether weights were loaded, from where, and
    #: whether its teacher-vocabulary / student-vocabulary MLM heads are
    #: trained ones.
    self.loaded = False
    self.loaded_from = None
    self.trained_heads = {"teacher": False, "student": False}
    #: Where the architecture came from (set by `encoder_config`).
    self.config_source = None

  # ---------------------------------------------------------------------------
  # Files.

  def stage1_path(self) -> str:
    return checkpointing.resolve_checkpoint(self.stage1_checkpoint,
                                            what="stage I teacher checkpoint")

  def _stage1_path_or_none(self):
    if not self.stage1_checkpoint:
      return None
    try:
      return self.stage1_path()
    except FileNotFoundError:
      return None

  def missing_files(self, need_checkpoint: bool = False) -> Dict[str, str]:
    """{what: problem} of the teacher's files.

    Args:
      need_checkpoint: the pretrained checkpoint is needed even with a stage
        I run (stage I itself loads it).
    """
    missing = {}
    if self.stage1_checkpoint:
      try:
        self.stage1_path()
      except FileNotFoundError as e:
        missing["stage I teacher checkpoint"] = str(e)
    has_architecture = self.stage1_checkpoint and (
        _exists(self.config_path) or self._stage1_config() is not None)
    if not _exists(self.checkpoint) and (need_checkpoint or
                                         not has_architecture):
      missing["teacher checkpoint"] = f"not found: {self.checkpoint}"
    return missing

  # ---------------------------------------------------------------------------
  # Architecture.

  def _stage1_config(self):
    path = self._stage1_path_or_none()
    return path and checkpointing.read_encoder_config(path,
                                                      TEACHER_ENCODER_KEY)

  def encoder_config(self) -> Tuple[Dict[str, Any], str]:
    """`BertEncoderV2` arguments of the pretrained teacher, and their source."""
    stage1_config = self._stage1_config()
    if stage1_config:
      config = {k: v for k, v in stage1_config.items()
                if k not in _NOT_BERT_KEYS}
      config["vocab_size"] = config.pop("teacher_vocab_size")
      self.config_source = (f"{checkpointing.ENCODER_CONFIG_FILE} of the "
                            f"stage I run {self.stage1_checkpoint}")
      return config, self.config_source
    config, self.config_source = teacher_loader.teacher_encoder_config(
        self.checkpoint, self.config_path)
    if self.config_source.startswith("built-in"):
      logging.warning("Teacher dimensions from %s.", self.config_source)
    return config, self.config_source

  def student_table_shape(self, default):
    """[vocab, width] of the stage I student table, or `default` without one."""
    stage1_config = self._stage1_config()
    if stage1_config:
      return [int(stage1_config["student_vocab_size"]),
              int(stage1_config["student_embedding_width"])]
    path = self._stage1_path_or_none()
    if path is None:
      return list(default)
    try:
      return student_spec.student_table_shape(path)
    except ValueError as e:
      raise ValueError(f"{e} The teacher's stage1_checkpoint must be a stage "
                       "I (or dual) run.") from e

  def check_vocab_size(self, vocab_size: int, teacher_vocab_size: int):
    """Refuses a vocab.txt whose size is not the teacher's word table's."""
    if vocab_size != teacher_vocab_size:
      raise ValueError(
          f"The teacher vocabulary {self.vocab_path} has {vocab_size} tokens "
          f"but the teacher ({self.config_source}) has {teacher_vocab_size} "
          "word embeddings; use the checkpoint's own vocab.txt "
          "(TeacherSpec.vocab).")

  def build_architecture(self, student_vocab_size: int,
                         student_embedding_width: int, **overrides):
    """The teacher `DualVocabPretrainer` with fresh weights (stage I).

    Args:
      student_vocab_size: rows of the student table.
      student_embedding_width: its width, d_s.
      **overrides: as for `teacher_loader.build_teacher`.
    """
    config, _ = self.encoder_config()
    if self.dropout_rate is not None:
      overrides.setdefault("output_dropout", self.dropout_rate)
      overrides.setdefault("attention_dropout", self.dropout_rate)
    return teacher_loader.build_teacher(
        config, student_vocab_size=student_vocab_size,
        student_embedding_width=student_embedding_width, **overrides)

  # ---------------------------------------------------------------------------
  # Weights.

  def load_pretrained(self, model, option="TeacherSpec.checkpoint") -> bool:
    """Loads the pretrained checkpoint into `model` (a teacher or an encoder).

    Args:
      model: a teacher `DualVocabPretrainer`, or a plain encoder.
      option: the gin binding that names the checkpoint, for the error.

    Returns:
      Whether it had an MLM head (loaded into `model.masked_lm`).
    """
    if not _exists(self.checkpoint):
      raise FileNotFoundError(
          f"Teacher checkpoint not found: {self.checkpoint}. Set {option} (a "
          "Hugging Face directory or a google-research/bert checkpoint).")
    logging.info("Loading the teacher from %s.", self.checkpoint)
    has_head = teacher_loader.load_pretrained_weights(model, self.checkpoint)
    self.loaded, self.loaded_from = True, self.checkpoint
    self.trained_heads = {"teacher": has_head, "student": False}
    return has_head

  def build(self, student_vocab_size: int, student_embedding_width: int,
            vocab_fingerprints: Dict[str, str]):
    """The frozen teacher of a distillation task, with weights if available.

    Args:
      student_vocab_size: rows of the teacher's student table (without a
        stage I run; otherwise the run's table decides).
      student_embedding_width: its width (likewise).
      vocab_fingerprints: {'teacher'|'student': sha256} the stage I run must
        have been trained with (checked when it is read).

    Returns:
      The teacher; `self.loaded` says whether weights were loaded (a dry run
      without the files builds the architecture only).
    """
    vocab_size, width = self.student_table_shape(
        (student_vocab_size, student_embedding_width))
    teacher = self.build_architecture(vocab_size, width,
                                      return_word_embeddings=True)
    teacher.trainable = False
    if self.stage1_checkpoint and not self.missing_files():
      path = self.stage1_path()
      checkpointing.check_vocab_fingerprints(
          path, vocab_fingerprints, purpose="loading the teacher")
      status = tf.train.Checkpoint(model=teacher).read(path)
      status.assert_existing_objects_matched().expect_partial()
      self.loaded, self.loaded_from = True, path
      self.trained_heads = {"teacher": True, "student": True}
      logging.info("Teacher: the stage I run %s.", path)
    elif _exists(self.checkpoint):
      has_head = self.load_pretrained(teacher)
      logging.info("Teacher: %s (MLM head: %s).", self.checkpoint,
                   "trained" if has_head else "none, created fresh")
    else:
      logging.warning("No teacher weights on this machine (%s); built the "
                      "architecture only.", self.missing_files())
    return teacher

  def require_loaded(self, task_name):
    if not self.loaded:
      raise FileNotFoundError(
          f"Task {task_name} cannot train: its teacher was not loaded "
          f"({self.missing_files() or 'unknown reason'}).")

  def require_trained_head(self, which, task_name, option):
    """Refuses soft targets from an MLM head that was created fresh."""
    if self.loaded and not self.trained_heads[which]:
      raise ValueError(
          f"Task {task_name} needs soft targets from the teacher's {which}-"
          f"vocabulary MLM head, but {self.loaded_from} has none (it would be "
          "created fresh, and its soft targets would be noise). Give a stage I "
          "run of this teacher as TeacherSpec.stage1_checkpoint (its heads "
          "are trained; see the task's gin file), a checkpoint with an MLM "
          f"head, or set {option} = 0.")

  def describe(self):
    return (f"teacher {self.checkpoint}" +
            (f" + stage I {self.stage1_checkpoint}"
             if self.stage1_checkpoint else ""))
