"""The masked-LM input function: text files or TFDS -> mixed-vocabulary batches.

One tf.data pipeline for stage I (mixed vocabularies, Zhao et al., EACL 2021,
Section 3), stage II and NoKD (student vocabulary only) and teacher-vocabulary
baselines:

  lines -> repeat -> tokenize (per-word vocabulary choice) -> pack
        -> [CLS] A [SEP] B [SEP] -> shuffle -> batch -> mask (caps per vocab)

Everything is in the graph with stateless randomness keyed by the element's
position in the stream, so a new epoch gets new mixing and new masks (dynamic
masking), and saving the iterator with `tf.train.Checkpoint` resumes the stream
exactly.
"""

import dataclasses
import glob as glob_lib
import os

import tensorflow as tf

from mixvocab_tf.text import masking
from mixvocab_tf.text import mixed_vocab_tokenizer
from mixvocab_tf.text import packing
from mixvocab_tf.text import vocab as vocab_lib

MODES = ("mixed", "student", "teacher")
_P_STUDENT_BY_MODE = {"student": 1.0, "teacher": 0.0}

FEATURE_NAMES = ("input_word_ids", "input_mask", "input_type_ids",
                 "input_vocab_ids", "masked_lm_positions", "masked_lm_ids",
                 "masked_lm_vocab_ids", "masked_lm_weights")


@dataclasses.dataclass
class PretrainingInputConfig:
  """How to read, tokenize, pack and mask pretraining text.

  Attributes:
    input_files: files or globs (comma-separated string or list) in BERT
      create_pretraining_data layout. Either this or `tfds_name`.
    tfds_name: a tensorflow-datasets name (e.g. "wikipedia/20230601.en").
    tfds_split: its split.
    tfds_text_key: the feature holding the document text.
    tfds_data_dir: where TFDS data lives (None: TFDS's default).
    mode: "mixed" (stage I), "student" (stage II, NoKD) or "teacher".
    p_student: share of words segmented with the student vocabulary in "mixed"
      mode (p_SV, paper: 0.5).
    seq_length: tokens per sequence including [CLS] and [SEP]s.
    max_predictions: masked tokens per sequence at most (paper: 20).
    max_teacher_predictions: teacher-vocabulary masks at most (paper: 10).
    masked_lm_prob: share of tokens masked before the caps.
    whole_word_masking: mask whole words.
    shuffle_buffer: sequences in the shuffle buffer (0: no shuffling).
    seed: seed of every random choice in the pipeline.
    repeat: loop over the data forever (training) or once (evaluation).
    lines_per_tokenizer_call: lines tokenized per batched tokenizer call.
    output_word_ids: also yield int32 [batch, seq_length] `word_ids` (word
      index per position, -1 on specials and padding), for analysis.
  """
  input_files: object = None
  tfds_name: str | None = None
  tfds_split: str = "train"
  tfds_text_key: str = "text"
  tfds_data_dir: str | None = None
  mode: str = "mixed"
  p_student: float = 0.5
  seq_length: int = 128
  max_predictions: int = 20
  max_teacher_predictions: int | None = 10
  masked_lm_prob: float = 0.15
  whole_word_masking: bool = False
  shuffle_buffer: int = 1000
  seed: int = 0
  repeat: bool = True
  lines_per_tokenizer_call: int = 256
  output_word_ids: bool = False

  def __post_init__(self):
    if self.mode not in MODES:
      raise ValueError(f"mode must be one of {MODES}; received {self.mode!r}.")
    if (self.input_files is None) == (self.tfds_name is None):
      raise ValueError("Give exactly one of input_files and tfds_name; "
                       f"received {self.input_files!r} and {self.tfds_name!r}.")
    if self.seq_length < 8:
      raise ValueError(f"seq_length must be at least 8; received "
                       f"{self.seq_length}.")
    if self.max_predictions > self.seq_length:
      raise ValueError(
          "max_predictions cannot exceed seq_length; received "
          f"{self.max_predictions} and {self.seq_length}.")


def read_documents(path):
  """The documents of a BERT-layout text file, as lists of lines.

  Lines of a document are consecutive; blank lines separate documents.
  """
  docs, current = [], []
  with open(path, encoding="utf-8") as f:
    for line in f:
      line = line.rstrip("\n")
      if line.strip():
        current.append(line)
      elif current:
        docs.append(current)
        current = []
  if current:
    docs.append(current)
  return docs


def expand_files(input_files):
  """Sorted files matching comma-separated paths or globs; error if none."""
  if isinstance(input_files, str):
    patterns = [p for p in input_files.split(",") if p.strip()]
  else:
    patterns = list(input_files)
  files = []
  for pattern in patterns:
    pattern = os.path.expanduser(pattern.strip())
    matches = sorted(glob_lib.glob(pattern))
    if not matches:
      raise FileNotFoundError(f"No file matches {pattern!r}.")
    files.extend(m for m in matches if os.path.isfile(m))
  if not files:
    raise FileNotFoundError(f"No input files in {input_files!r}.")
  return files


def _text_lines(files):
  """Lines of each file, with a blank line after each (a document boundary)."""
  def file_lines(path):
    return tf.data.TextLineDataset(path).concatenate(
        tf.data.Dataset.from_tensors(tf.constant("")))
  return tf.data.Dataset.from_tensor_slices(files).flat_map(file_lines)


def _tfds_lines(config, input_context):
  import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top
  read_config = tfds.ReadConfig(input_context=input_context,
                                shuffle_seed=config.seed)
  documents = tfds.load(config.tfds_name, split=config.tfds_split,
                        data_dir=config.tfds_data_dir, shuffle_files=False,
                        read_config=read_config)

  def document_lines(example):
    if config.tfds_text_key not in example:
      raise KeyError(f"TFDS dataset {config.tfds_name!r} has no feature "
                     f"{config.tfds_text_key!r}; it has {sorted(example)}.")
    lines = tf.strings.split(example[config.tfds_text_key], "\n")
    return tf.data.Dataset.from_tensor_slices(
        tf.concat([lines, [""]], axis=0))

  return documents.flat_map(document_lines)


def pretraining_dataset(config, teacher_vocab, student_vocab, batch_size,
                        input_context=None):
  """Builds the masked-LM dataset.

  Args:
    config: a `PretrainingInputConfig`.
    teacher_vocab: teacher vocabulary (vocab.txt path or token list).
    student_vocab: student vocabulary (vocab.txt path or token list).
    batch_size: global batch size; with `input_context`, each input pipeline
      yields its per-replica share.
    input_context: a `tf.distribute.InputContext` (sharding and batch split).

  Returns:
    A `tf.data.Dataset` of dicts with the features in `FEATURE_NAMES`, int32
    except `masked_lm_weights` (float32); [batch, seq_length] inputs and
    [batch, max_predictions] targets.
  """
  teacher_tokens = vocab_lib.load_vocab(teacher_vocab)
  student_tokens = vocab_lib.load_vocab(student_vocab)
  p_student = _P_STUDENT_BY_MODE.get(config.mode, config.p_student)
  tokenizer = mixed_vocab_tokenizer.MixedVocabTokenizer(
      teacher_tokens, student_tokens, p_student=p_student)
  num_pipelines = input_context.num_input_pipelines if input_context else 1
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  if input_context:
    batch_size = input_context.get_per_replica_batch_size(batch_size)

  shard_sequences = False
  if config.tfds_name:
    lines = _tfds_lines(config, input_context)
  else:
    files = expand_files(config.input_files)
    if num_pipelines > 1 and len(files) >= num_pipelines:
      files = files[pipeline_id::num_pipelines]
    else:
      shard_sequences = num_pipelines > 1
    lines = _text_lines(files)
  if config.repeat:
    lines = lines.repeat()

  base_seed = tf.constant(config.seed, tf.int64)

  def tokenize(index, text):
    token_ids, vocab_ids = tokenizer.tokenize_words(
        text, seed=tf.stack([base_seed, index]))
    doc_end = tf.equal(tf.strings.strip(text), "")
    return packing.flatten_line_batch(token_ids, vocab_ids, doc_end)

  special_vocab_id = 1 if config.mode == "student" else 0
  special_tokens = student_tokens if special_vocab_id else teacher_tokens
  special_ids = {t: special_tokens.index(t) for t in ("[CLS]", "[SEP]",
                                                      "[PAD]")}

  def to_pairs(index, chunks):
    return packing.make_sequence_pairs(chunks, config.seq_length, special_ids,
                                       special_vocab_id,
                                       tf.stack([base_seed + 1, index]))

  line_batches = lines.batch(config.lines_per_tokenizer_call).enumerate().map(
      tokenize, num_parallel_calls=tf.data.AUTOTUNE)
  chunks = packing.pack_line_batches(line_batches, config.seq_length - 3)
  sequences = chunks.enumerate().map(to_pairs,
                                     num_parallel_calls=tf.data.AUTOTUNE)
  if config.shuffle_buffer or shard_sequences:
    sequences = sequences.unbatch()
    if shard_sequences:
      sequences = sequences.shard(num_pipelines, pipeline_id)
    if config.shuffle_buffer:
      sequences = sequences.shuffle(config.shuffle_buffer, seed=config.seed)
    batches = sequences.batch(batch_size, drop_remainder=config.repeat)
  else:
    # Without shuffling, rebatching the packer's chunk batches saves the
    # per-sequence cost of unbatch + batch.
    batches = sequences.rebatch(batch_size, drop_remainder=config.repeat)
  masking_config = masking.MaskingConfig(
      mask_token_ids=(teacher_tokens.index("[MASK]"),
                      student_tokens.index("[MASK]")),
      vocab_sizes=(len(teacher_tokens), len(student_tokens)),
      max_predictions=config.max_predictions,
      max_teacher_predictions=(config.max_teacher_predictions
                               if config.mode == "mixed" else None),
      masked_lm_prob=config.masked_lm_prob,
      whole_word_masking=config.whole_word_masking)

  def mask(index, batch):
    seed = tf.stack([base_seed + 2, index])
    word_ids = batch.pop("word_ids")
    outputs = masking.mask_batch(batch, word_ids, masking_config, seed)
    if config.output_word_ids:
      outputs["word_ids"] = word_ids
    return outputs

  batches = batches.enumerate().map(mask, num_parallel_calls=tf.data.AUTOTUNE)
  return batches.prefetch(tf.data.AUTOTUNE)
