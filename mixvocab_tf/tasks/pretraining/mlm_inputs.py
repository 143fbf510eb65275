"""What masked-LM pretraining reads: files, batch, sequence, masking.

The settings of Zhao et al. (EACL 2021), Section 4: sequences of 128 tokens,
batches of 2048, 20 masked tokens per sequence of which at most 10 in the
teacher's vocabulary, and p_SV = 0.5 of the words segmented with the student
vocabulary in stage I. One gin-configurable record shared by the pretraining
tasks (`MlmInputs.seq_length = 128` in a gin file); each task picks the mode
("mixed" for stage I, "student" for stage II) when it builds its dataset.
"""

import dataclasses
from typing import Optional, Sequence, Union

import gin

from mixvocab_tf import assets
from mixvocab_tf import text as text_lib

SHARDINGS = ("pipeline", "global_batch")


@gin.configurable(module="mixvocab_tf.tasks")
@dataclasses.dataclass
class MlmInputs:
  """Input settings of the pretraining tasks.

  Attributes:
    input_files: text files or globs (list or comma-separated) in BERT
      create_pretraining_data layout; None with no `tfds_name`: the built-in
      corpus.
    tfds_name: a TFDS dataset (e.g. "wikipedia/20230601.en") instead.
    tfds_split: its split.
    tfds_text_key: its text feature.
    global_batch_size: sequences per step over all replicas.
    seq_length: tokens per sequence, [CLS] and [SEP]s included.
    max_predictions: masked tokens per sequence at most (paper: 20).
    max_teacher_predictions: of which teacher-vocabulary tokens at most
      (paper: 10; mixed input only).
    p_student: share of words segmented with the student vocabulary (p_SV,
      paper: 0.5; mixed input only).
    masked_lm_prob: share of tokens masked before the caps.
    whole_word_masking: mask whole words.
    shuffle_buffer: sequences in the shuffle buffer.
    seed: seed of mixing, masking and shuffling.
    sharding: "pipeline" (each input pipeline reads its own shard of the data;
      the scalable choice) or "global_batch" (each pipeline builds the whole
      global batch and keeps its replicas' rows, so that a step sees the same
      examples for any number of replicas and workers; for tests and small
      runs).
  """
  input_files: Optional[Union[str, Sequence[str]]] = None
  tfds_name: Optional[str] = None
  tfds_split: str = "train"
  tfds_text_key: str = "text"
  global_batch_size: int = 32
  seq_length: int = 128
  max_predictions: int = 20
  max_teacher_predictions: Optional[int] = 10
  p_student: float = 0.5
  masked_lm_prob: float = 0.15
  whole_word_masking: bool = False
  shuffle_buffer: int = 1000
  seed: int = 0
  sharding: str = "pipeline"

  def __post_init__(self):
    if int(self.global_batch_size) <= 0:
      raise ValueError("global_batch_size must be a positive integer; "
                       f"received {self.global_batch_size!r}.")
    if self.sharding not in SHARDINGS:
      raise ValueError(f"sharding must be one of {SHARDINGS}; received "
                       f"{self.sharding!r}.")
    if not 0.0 <= self.p_student <= 1.0:
      raise ValueError(f"p_student must be in [0, 1]; received "
                       f"{self.p_student!r}.")
    if self.input_files is None and self.tfds_name is None:
      self.input_files = assets.builtin_corpus_files()
    if isinstance(self.input_files, tuple):
      self.input_files = list(self.input_files)
    # Validates lengths and caps now: a bad value is a configuration error.
    self.pipeline_config("mixed")

  def pipeline_config(self, mode: str, repeat: bool = True,
                      seed_offset: int = 0) -> text_lib.PretrainingInputConfig:
    """The `PretrainingInputConfig` of one stream ("mixed" or "student")."""
    return text_lib.PretrainingInputConfig(
        input_files=self.input_files, tfds_name=self.tfds_name,
        tfds_split=self.tfds_split, tfds_text_key=self.tfds_text_key,
        mode=mode, p_student=self.p_student, seq_length=self.seq_length,
        max_predictions=self.max_predictions,
        max_teacher_predictions=self.max_teacher_predictions,
        masked_lm_prob=self.masked_lm_prob,
        whole_word_masking=self.whole_word_masking,
        shuffle_buffer=self.shuffle_buffer, seed=self.seed + seed_offset,
        repeat=repeat)

  def missing(self) -> Optional[str]:
    """Why the input files cannot be read, or None."""
    if self.input_files is None:
      return None
    try:
      text_lib.pretraining_input.expand_files(self.input_files)
    except FileNotFoundError as e:
      return str(e)
    return None
