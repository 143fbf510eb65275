"""Per-word mixed-vocabulary WordPiece tokenization, in the TensorFlow graph.

Implements the input side of stage I of mixed-vocabulary training (Zhao et al.,
"Extremely Small BERT Models from Mixed-Vocabulary Training", EACL 2021, Section 3
and Figure 1): every *word* of the input is segmented with the student vocabulary
with probability `p_student` (p_SV in the paper), and with the teacher vocabulary
otherwise. Words are found with the uncased BERT basic tokenizer (clean text,
lower case, NFD, accents stripped, split on whitespace, punctuation and CJK
characters), then each word is cut into WordPieces by tensorflow_text's
`FastWordpieceTokenizer`, so the whole layer runs inside tf.data and inside
exported graphs, with no Python in the loop.

Every token comes out as (id in its own vocabulary, vocabulary tag, word index):
the two id spaces are never merged, so a model looks a token up in the table of
the vocabulary that produced it.
"""

import tensorflow as tf
import tensorflow_text as tf_text
import tf_keras

from mixvocab_tf.text import packing
from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece

TEACHER_VOCAB_ID = 0
STUDENT_VOCAB_ID = 1

# The delimiters of BERT's basic tokenizer, as tensorflow_text writes them
# (tensorflow_text/python/ops/bert_tokenizer.py): ASCII and Unicode
# punctuation and CJK ideographs split and are kept; whitespace splits.
_PUNCTUATION = r"[!-/]|[:-@]|[\[-`]|[{-~]|[\p{P}]"
_CJK = "|".join([
    r"[\x{4E00}-\x{9FFF}]", r"[\x{3400}-\x{4DBF}]", r"[\x{20000}-\x{2A6DF}]",
    r"[\x{2A700}-\x{2B73F}]", r"[\x{2B740}-\x{2B81F}]",
    r"[\x{2B820}-\x{2CEAF}]", r"[\x{F900}-\x{FAFF}]", r"[\x{2F800}-\x{2FA1F}]"
])
# Spacing out the kept delimiters, then a whitespace split, is 6x faster than
# tensorflow_text's regex_split with the same patterns.
_KEPT_DELIMITER = f"({_PUNCTUATION}|{_CJK})"
# The same for strings of the short path (below): every ASCII \\p{P} is in
# the first ranges, and U+2010-U+2027 are all \\p{P}.
_SHORT_KEPT_DELIMITER = r"([!-/:-@\[-`{-~\x{2010}-\x{2027}])"
# Whitespace to BERT that a plain ASCII split would miss: the Unicode space
# separators (Zs: U+0020 aside, U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F,
# U+3000) and, as in Hugging Face's BERT pre-tokenizer (Rust's
# `char::is_whitespace`), U+2028 and U+2029 become spaces. An explicit class
# without U+0020 is 20x faster than \p{Zs}, which matches (and rewrites)
# every ASCII space; `mixed_vocab_tokenizer_test` checks it against \p{Zs} on
# every code point.
_SPACE_SEPARATOR = (r"[\x{00A0}\x{1680}\x{2000}-\x{200A}\x{202F}\x{205F}"
                    r"\x{3000}\x{2028}\x{2029}]")
# google-research/bert's `_clean_text` (and Hugging Face's BertNormalizer)
# delete NUL, U+FFFD and control/format characters rather than turning them
# into spaces as tensorflow_text's BasicTokenizer does; tab, newline and
# carriage return are whitespace, so they are not deleted.
_DELETED_CHARACTERS = (r"[\x{FFFD}\p{Cf}\p{Co}\p{Cs}]|"
                       r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]")
_ASCII_DELETED_CHARACTERS = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]"
# Strings of the short path: ASCII and General Punctuation's dashes, quotes,
# bullets and ellipsis (U+2010-U+2027), which English text is full of and
# which the full path leaves as they are (no case, no decomposition, not
# deleted, not spaces) and spaces out as punctuation. Invalid UTF-8 never
# matches.
_SHORT_PATH = r"[\x00-\x7F\x{2010}-\x{2027}]*"

#: Default cap on the characters of one input string. Bounds the work on
#: pathological inputs (a 1 MB string) before any tokenization; far above what a
#: 128- or 512-token sequence can hold.
DEFAULT_MAX_INPUT_CHARS = 20_000


def clean_and_truncate(strings, max_input_chars=DEFAULT_MAX_INPUT_CHARS):
  """Makes any byte string valid, bounded UTF-8 text.

  Invalid UTF-8 bytes become U+FFFD (deleted afterwards by `split_words`, as
  BERT's reference tokenizer deletes U+FFFD). The byte cut before transcoding
  bounds the work on huge strings; a character it splits becomes U+FFFD too.

  Args:
    strings: string tensor of any shape.
    max_input_chars: characters kept per string.

  Returns:
    A string tensor of the same shape.
  """
  strings = tf.strings.substr(strings, 0, 4 * max_input_chars, unit="BYTE")
  strings = tf.strings.unicode_transcode(
      strings, input_encoding="UTF-8", output_encoding="UTF-8",
      errors="replace", replacement_char=0xFFFD)
  return tf.strings.substr(strings, 0, max_input_chars, unit="UTF8_CHAR")


def split_words(strings, max_input_chars=DEFAULT_MAX_INPUT_CHARS):
  """Uncased BERT basic tokenization: [batch] strings -> [batch, (words)].

  Lower-cases exactly as BERT's reference tokenizer does, which needs ops
  that TFLite lacks; serving, which must convert, tokenizes with
  `wordpiece.fast_bert_tokenizer` instead (`export.ServingTokenizer`).

  Strings of ASCII and the dashes, quotes and ellipsis of U+2010-U+2027
  (most of English text) take a short path: for them transcoding, NFD,
  accent stripping and the Unicode classes are no-ops, so only control
  characters are deleted, letters lower-cased and punctuation spaced out.
  The other strings take the full path. Both give the same words as the
  full path alone (`mixed_vocab_tokenizer_test`).

  Args:
    strings: [batch] string tensor.
    max_input_chars: characters kept per string.
  """
  strings = tf.convert_to_tensor(strings, tf.string)
  is_other = tf.cast(
      tf.logical_not(tf.strings.regex_full_match(strings, _SHORT_PATH)),
      tf.int32)
  positions = tf.dynamic_partition(tf.range(tf.size(strings)), is_other, 2)
  short_strings, other_strings = tf.dynamic_partition(strings, is_other, 2)
  short_strings = tf.strings.substr(short_strings, 0, max_input_chars,
                                    unit="UTF8_CHAR")
  short_strings = tf.strings.regex_replace(short_strings,
                                           _ASCII_DELETED_CHARACTERS, "")
  # ASCII letters only: the other bytes here are those of U+2010-U+2027.
  short_strings = tf.strings.lower(short_strings)
  short_strings = tf.strings.regex_replace(short_strings,
                                           _SHORT_KEPT_DELIMITER, r" \1 ")
  strings = tf.dynamic_stitch(
      positions, [short_strings, _spaced_unicode(other_strings,
                                                 max_input_chars)])
  # After the rewrites above the only whitespace left is ASCII.
  return tf.strings.split(strings)


def _spaced_unicode(strings, max_input_chars):
  """Any strings, cleaned and normalised, delimiters spaced out."""
  strings = clean_and_truncate(strings, max_input_chars)
  strings = tf.strings.regex_replace(strings, _DELETED_CHARACTERS, "")
  # Lower case per character as Hugging Face's BertNormalizer does: ICU
  # lower case, not case folding ("ß" stays "ß"), and without ICU's
  # Final_Sigma context rule (HF maps every capital sigma to "σ"). Then NFD
  # and accents stripped.
  strings = tf.strings.regex_replace(strings, "\u03a3", "\u03c3")
  strings = tf.strings.lower(strings, encoding="utf-8")
  strings = tf_text.normalize_utf8(strings, "NFD")
  strings = tf.strings.regex_replace(strings, r"\p{Mn}", "")
  strings = tf.strings.regex_replace(strings, _SPACE_SEPARATOR, " ")
  return tf.strings.regex_replace(strings, _KEPT_DELIMITER, r" \1 ")


@tf_keras.utils.register_keras_serializable(package="mixvocab_tf")
class MixedVocabTokenizer(tf_keras.layers.Layer):
  """Segments each word with the student or the teacher WordPiece vocabulary.

  Raw strings in; for every token its id in its own vocabulary, its vocabulary
  tag (0 = teacher, 1 = student) and the index of the word it belongs to. With
  `p_student=0` the ids are exactly those of the uncased BERT tokenizer with
  the teacher vocabulary; with `p_student=1` those of the same tokenizer with
  the student vocabulary.

  Randomness is stateless: the vocabulary choice of each word is a function of
  the seed and of the batch of strings, so the same seed gives the same output.
  The data pipeline passes a fresh `seed` per batch and epoch (dynamic mixing).

  Example:

  >>> tokenizer = MixedVocabTokenizer("teacher/vocab.txt", "student/vocab.txt",
  ...                                 p_student=0.5, seed=1)
  >>> out = tokenizer(tf.constant(["Mixed vocabularies!"]))
  >>> out["token_ids"], out["vocab_ids"], out["word_ids"]  # [batch, (tokens)]

  Args:
    teacher_vocab: teacher vocabulary, a vocab.txt path or a list of tokens.
    student_vocab: student vocabulary, a vocab.txt path or a list of tokens.
    p_student: probability that a word is segmented with the student vocabulary.
    seed: integer seed of the stateless vocabulary choice; None draws one per
      call (not reproducible).
    max_input_chars: characters of each input string kept before tokenizing.
    max_chars_per_word: longer words map to `[UNK]` (BERT's rule; counted in
      UTF-8 bytes by tensorflow_text).
    **kwargs: passed to `tf_keras.layers.Layer`.

  The vocabularies live in the layer's config as token lists (never as paths),
  so a saved model carries them.
  """

  def __init__(self,
               teacher_vocab,
               student_vocab,
               p_student=0.5,
               seed=None,
               max_input_chars=DEFAULT_MAX_INPUT_CHARS,
               max_chars_per_word=100,
               **kwargs):
    super().__init__(**kwargs)
    if not 0.0 <= float(p_student) <= 1.0:
      raise ValueError(
          f"p_student must be in [0, 1]; received {p_student!r}.")
    if int(max_input_chars) < 1:
      raise ValueError(
          f"max_input_chars must be positive; received {max_input_chars!r}.")
    self.teacher_vocab = vocab_lib.load_vocab(teacher_vocab)
    self.student_vocab = vocab_lib.load_vocab(student_vocab)
    self.p_student = float(p_student)
    self.seed = None if seed is None else int(seed)
    self.max_input_chars = int(max_input_chars)
    self.max_chars_per_word = int(max_chars_per_word)
    self._wordpieces = [
        wordpiece.word_piece_tokenizer(v, self.max_chars_per_word)
        for v in (self.teacher_vocab, self.student_vocab)
    ]

  @property
  def teacher_vocab_size(self):
    return len(self.teacher_vocab)

  @property
  def student_vocab_size(self):
    return len(self.student_vocab)

  def _word_choice(self, words, seed):
    """Per-word vocabulary tag, int32 [num_words]: 1 = student."""
    num_words = tf.shape(words.flat_values)[0]
    if self.p_student == 0.0:
      return tf.zeros([num_words], tf.int32)
    if self.p_student == 1.0:
      return tf.ones([num_words], tf.int32)
    uniform = tf.random.stateless_uniform([num_words], seed=seed)
    return tf.cast(uniform < self.p_student, tf.int32)

  def _call_seed(self, strings, seed):
    if seed is not None:
      return tf.cast(seed, tf.int64)
    if self.seed is None:
      return tf.random.uniform([2], maxval=tf.int64.max, dtype=tf.int64)
    # Deterministic in (seed, batch contents): same strings, same choices.
    batch_hash = tf.reduce_sum(
        tf.strings.to_hash_bucket_fast(strings, 2**31 - 1)
        * tf.range(1, tf.size(strings, out_type=tf.int64) + 1))
    return tf.stack([tf.constant(self.seed, tf.int64), batch_hash])

  def tokenize_words(self, strings, seed=None):
    """Tokenizes and keeps the word level.

    Args:
      strings: [batch] string tensor.
      seed: optional [2] integer tensor overriding the layer's seed for this call.

    Returns:
      (token_ids, vocab_ids): int32 RaggedTensors [batch, (words), (pieces)].
    """
    words = split_words(strings, self.max_input_chars)
    flat_words = words.flat_values
    choice = self._word_choice(words, self._call_seed(strings, seed))
    if self.p_student in (0.0, 1.0):
      pieces = self._wordpieces[int(self.p_student)].tokenize(flat_words)
    else:
      # Each word is cut only with its own vocabulary; the two ragged results
      # are then interleaved back into word order with one gather.
      teacher_words, student_words = tf.dynamic_partition(flat_words, choice,
                                                          2)
      teacher = self._wordpieces[TEACHER_VOCAB_ID].tokenize(teacher_words)
      student = self._wordpieces[STUDENT_VOCAB_ID].tokenize(student_words)
      num_teacher_words = tf.cast(teacher.nrows(), tf.int32)
      rank_in_vocab = tf.where(tf.cast(choice, tf.bool),
                               tf.cumsum(choice, exclusive=True),
                               tf.cumsum(1 - choice, exclusive=True))
      pieces = tf.gather(
          tf.concat([teacher, student], axis=0),
          rank_in_vocab + choice * num_teacher_words)
    pieces = tf.cast(pieces, tf.int32)
    splits = tf.cast(pieces.row_splits, tf.int32)
    vocab_ids = pieces.with_flat_values(
        tf.gather(choice, packing.row_ids(splits, splits[-1])))
    nest = lambda t: tf.RaggedTensor.from_row_splits(
        t, words.row_splits, validate=False)
    return nest(pieces), nest(vocab_ids)

  def call(self, inputs, seed=None):
    """Tokenizes a batch of raw strings.

    Args:
      inputs: [batch] string tensor (any bytes: invalid UTF-8 is replaced).
      seed: optional [2] integer tensor overriding the layer's seed.

    Returns:
      Dict of int32 RaggedTensors [batch, (tokens)]: `token_ids` (id in the
      token's own vocabulary), `vocab_ids` (0 teacher, 1 student) and
      `word_ids` (index of the token's word within its string).
    """
    strings = tf.convert_to_tensor(inputs, tf.string)
    if strings.shape.rank is not None and strings.shape.rank != 1:
      raise ValueError(
          "MixedVocabTokenizer expects a [batch] string tensor (rank 1); "
          f"received shape {strings.shape.as_list()}. Wrap a single string "
          "in a list; flatten a batch of several columns (e.g. "
          "tf.reshape(x, [-1])) or tokenize each column.")
    token_ids, vocab_ids = self.tokenize_words(strings, seed)
    words_per_row = token_ids.row_lengths()
    word_in_row = tf.range(tf.reduce_sum(words_per_row), dtype=tf.int64) - (
        tf.repeat(token_ids.row_splits[:-1], words_per_row))
    word_ids = tf.repeat(
        tf.cast(word_in_row, tf.int32), token_ids.values.row_lengths())
    token_ids = token_ids.merge_dims(1, 2)
    return {
        "token_ids": token_ids,
        "vocab_ids": vocab_ids.merge_dims(1, 2),
        "word_ids": token_ids.with_flat_values(word_ids),
    }

  def get_config(self):
    config = super().get_config()
    config.update({
        "teacher_vocab": list(self.teacher_vocab),
        "student_vocab": list(self.student_vocab),
        "p_student": self.p_student,
        "seed": self.seed,
        "max_input_chars": self.max_input_chars,
        "max_chars_per_word": self.max_chars_per_word,
    })
    return config
