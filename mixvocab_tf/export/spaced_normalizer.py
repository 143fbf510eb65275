"""BERT's tokenizer in a smaller .tflite: punctuation split by the normalizer.

`FastBertTokenizer` (what training uses, `wordpiece.fast_bert_tokenizer`) runs
two tensorflow_text models: `FastBertNormalizer` (uncased: case folding,
NFD, accents and control characters; a darts-clone trie over the code points
it changes, 0.25 MB) and an end-to-end `FastWordpieceTokenizer`, which also
splits words at BERT's punctuation and CJK characters. For that split its
model holds all 82,385 of those code points beside the vocabulary: 0.35 of the
0.61 MB that the 4,929-token student vocabulary takes, a sixth of the 6x96
SNIPS .tflite (`bench/tflite_bench.py`).

`SpacedBertTokenizer` gives the same ids with the split moved into the
normalizer: its trie (built here, `text/darts_trie.py`) maps each code point
to its uncased form with a space on either side of every punctuation or CJK
character, then `WhitespaceTokenizer` splits, and a `FastWordpieceTokenizer`
without pre-tokenization cuts each piece. Punctuation and CJK characters
that are not tokens of the vocabulary (all of them become [UNK]) are mapped
to one placeholder character that is not a token either, so the trie stores
their shared last-byte blocks once. All three are tensorflow_text ops with
TFLite kernels.

Equality with `FastBertTokenizer` is tested on every Unicode code point
between letters, and on text (`spaced_normalizer_test.py`).

Example:
```python
tokenizer = SpacedBertTokenizer(vocab_tokens)
tokenizer.tokenize(tf.constant(["Hello, wörld!"]))
# <tf.RaggedTensor [[hello, ",", world, "!"]]> (as ids, int64)
```
"""

import functools
from typing import Dict, List, Sequence, Tuple

import flatbuffers
import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.text import darts_trie
from mixvocab_tf.text import vocab as vocab_lib

# `fast_bert_normalizer.h`: bit 30 marks a changed code point; bits 0-5 hold
# the normalized string's UTF-8 length, bits 6-29 its offset in the pool.
_CHANGED = 0x40000000
_LENGTH_BITS = 6
_MAX_LENGTH = (1 << _LENGTH_BITS) - 1
_MAX_OFFSET = (1 << (32 - 2 - _LENGTH_BITS)) - 1


def unicode_code_points() -> np.ndarray:
  """Every Unicode scalar value that is not a noncharacter (ICU's
  `U_IS_UNICODE_CHAR`, the code points tensorflow_text's builders visit)."""
  cps = np.arange(0x110000, dtype=np.int64)
  keep = ~((cps >= 0xD800) & (cps <= 0xDFFF))
  keep &= ~((cps >= 0xFDD0) & (cps <= 0xFDEF))
  keep &= (cps & 0xFFFE) != 0xFFFE
  return cps[keep]


def _encode(strings: Sequence[str]) -> tf.Tensor:
  return tf.constant([s.encode("utf-8", "surrogatepass") for s in strings])


@functools.lru_cache(maxsize=2)
def _bert_normalization(lower_case: bool) -> Dict[int, str]:
  """{code point: its normalized form} where `FastBertNormalizer` changes it."""
  cps = unicode_code_points()
  normalized = tf_text.FastBertNormalizer(
      lower_case_nfd_strip_accents=lower_case).normalize(
          _encode([chr(c) for c in cps])).numpy()
  return {int(c): n.decode("utf-8") for c, n in zip(cps, normalized)
          if n != chr(c).encode("utf-8")}


@functools.lru_cache(maxsize=1)
def _pretokenization_classes() -> Tuple[frozenset, frozenset]:
  """(split, whitespace) code points of `FastWordpieceTokenizer`'s
  pre-tokenization, read from tensorflow_text's own rule: with "a" the only
  token, `a?a` is one [UNK] word unless `?` is split off (three pieces) or is
  whitespace (two)."""
  cps = unicode_code_points()
  probe = tf_text.FastWordpieceTokenizer(
      vocab=[vocab_lib.UNK, "a"], unknown_token=vocab_lib.UNK,
      no_pretokenization=False)
  pieces = probe.tokenize(_encode([f"a{chr(c)}a" for c in cps]))
  lengths = pieces.row_lengths().numpy()
  return (frozenset(int(c) for c in cps[lengths == 3]),
          frozenset(int(c) for c in cps[lengths == 2]))


def split_characters() -> frozenset:
  """The code points `FastWordpieceTokenizer` splits off as words of their own:
  BERT's punctuation (ICU's `u_ispunct` and ASCII symbols) and CJK
  ideographs."""
  return _pretokenization_classes()[0]


def whitespace_characters() -> frozenset:
  """The code points `FastWordpieceTokenizer` splits words at (ICU white
  space, some of which `WhitespaceTokenizer` keeps inside words)."""
  return _pretokenization_classes()[1]


def _placeholder(tokens: set, splits: frozenset) -> str:
  """A split character that is not a token: what unknown ones become."""
  for cp in range(0x4E00, 0xA000):  # CJK ideographs first: 3 bytes each.
    if cp in splits and chr(cp) not in tokens:
      return chr(cp)
  for cp in sorted(splits):
    if chr(cp) not in tokens:
      return chr(cp)
  raise ValueError("Every punctuation and CJK character is a token of the "
                   "vocabulary; no placeholder for unknown ones.")


def token_characters(tokens: Sequence[str]) -> frozenset:
  """The characters that occur in a word piece of `tokens` (without the
  `##` of suffixes and the bracketed special tokens): a word with any other
  character is one [UNK], whatever that character is normalized to."""
  chars = set()
  for token in tokens:
    if token.startswith("[") and token.endswith("]"):
      continue
    if token.startswith(vocab_lib.SUFFIX_INDICATOR):
      token = token[len(vocab_lib.SUFFIX_INDICATOR):]
    chars.update(token)
  return frozenset(chars)


def spaced_mapping(tokens: Sequence[str], lower_case: bool) -> Dict[int, str]:
  """{code point: what the spaced normalizer writes for it}, if not itself.

  The normalized form of the code point (as `FastBertNormalizer`'s), each of
  its punctuation or CJK characters with a space before and after, and
  replaced by the placeholder if it is not a token of `tokens`; each of its
  white-space characters an ASCII space.

  A letter is left as it is when neither it nor its normalized form can be
  part of a known word (both hold a character of no token, as Greek, Cyrillic
  or Hangul do for an English vocabulary): its word is [UNK] either way, and
  the trie does not store it (0.25 -> 0.03 MB for the shipped 4,929-token
  vocabulary).
  """
  splits = split_characters()
  spaces = whitespace_characters()
  token_set = set(tokens)
  known = token_characters(tokens)
  placeholder = _placeholder(token_set, splits)
  normalized = _bert_normalization(bool(lower_case))
  mapping = {}
  for cp in unicode_code_points():
    cp = int(cp)
    text = normalized.get(cp, chr(cp))
    if any(ord(ch) in splits or ord(ch) in spaces for ch in text):
      text = "".join(
          f" {ch if ch in token_set else placeholder} " if ord(ch) in splits
          else " " if ord(ch) in spaces else ch for ch in text)
    elif chr(cp) not in known and any(ch not in known for ch in text):
      continue  # An [UNK] word either way.
    if text != chr(cp):
      mapping[cp] = text
  return mapping


def normalizer_model(mapping: Dict[int, str], lower_case: bool) -> bytes:
  """A `FastBertNormalizerModel` flatbuffer for `mapping` (code point -> text).

  The layout of `fast_bert_normalizer_model.fbs`: the trie from each code
  point's UTF-8 bytes to (changed, length, pool offset), the code point 0's
  data beside it (a trie key cannot be empty), the pool of output strings.

  Raises:
    ValueError: an output longer than the format's 63 bytes, or a pool too
      large for its offsets.
  """
  pool = bytearray()
  offsets: Dict[bytes, int] = {}
  keys: List[bytes] = []
  values: List[int] = []
  data_for_zero = 0
  for cp in sorted(mapping):
    text = mapping[cp].encode("utf-8")
    if len(text) > _MAX_LENGTH:
      raise ValueError(f"U+{cp:04X} normalizes to {len(text)} bytes; the "
                       f"model stores at most {_MAX_LENGTH}.")
    offset = 0
    if text:
      if text not in offsets:
        offsets[text] = len(pool)
        pool.extend(text)
      offset = offsets[text]
      if offset > _MAX_OFFSET:
        raise ValueError("The normalized-string pool is too large.")
    data = _CHANGED | len(text) | (offset << _LENGTH_BITS)
    if cp == 0:
      data_for_zero = data
    else:
      keys.append(chr(cp).encode("utf-8"))
      values.append(data)
  trie = darts_trie.build(keys, values)
  builder = flatbuffers.Builder(4 * len(trie) + len(pool) + 1024)
  pool_vector = builder.CreateByteVector(bytes(pool))
  trie_vector = builder.CreateNumpyVector(trie.astype("<u4"))
  builder.StartObject(4)
  builder.PrependBoolSlot(0, bool(lower_case), False)
  builder.PrependUOffsetTRelativeSlot(1, trie_vector, 0)
  builder.PrependInt32Slot(2, data_for_zero, 0)
  builder.PrependUOffsetTRelativeSlot(3, pool_vector, 0)
  builder.Finish(builder.EndObject())
  return bytes(builder.Output())


@functools.lru_cache(maxsize=4)
def _cached_model(tokens: Tuple[str, ...], lower_case: bool) -> bytes:
  return normalizer_model(spaced_mapping(tokens, lower_case), lower_case)


class SpacedBertTokenizer(tf.Module):
  """`FastBertTokenizer.tokenize`, with the punctuation split in the normalizer.

  Args:
    tokens: the WordPiece vocabulary, in id order.
    lower_case: uncased normalization (as `FastBertTokenizer`'s
      `lower_case_nfd_strip_accents`).
    max_bytes_per_word: longer words are [UNK], as in `FastBertTokenizer`.
    token_out_type: dtype of the ids.
  """

  def __init__(self, tokens: Sequence[str], lower_case: bool = True,
               max_bytes_per_word: int = 100,
               token_out_type=tf.int64, name=None):
    super().__init__(name=name)
    self._normalizer = tf_text.FastBertNormalizer(
        model_buffer=_cached_model(tuple(tokens), bool(lower_case)))
    self._whitespace = tf_text.WhitespaceTokenizer()
    self._wordpiece = tf_text.FastWordpieceTokenizer(
        vocab=list(tokens), suffix_indicator=vocab_lib.SUFFIX_INDICATOR,
        max_bytes_per_word=max_bytes_per_word, token_out_type=token_out_type,
        unknown_token=vocab_lib.UNK, no_pretokenization=True,
        support_detokenization=False)

  def model_sizes(self) -> Tuple[int, int]:
    """Bytes of the (normalizer, WordPiece) models, as in a .tflite."""
    return (int(tf.size(self._normalizer._model)),  # pylint: disable=protected-access
            int(tf.size(self._wordpiece._model)))  # pylint: disable=protected-access

  def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """Ids of string [batch]: int [batch, (pieces)], as `FastBertTokenizer`."""
    words = self._whitespace.tokenize(self._normalizer.normalize(text))
    pieces = self._wordpiece.tokenize(words.flat_values)
    # The pieces of each string's words, end to end.
    splits = tf.gather(pieces.row_splits, words.row_splits)
    return tf.RaggedTensor.from_row_splits(pieces.flat_values, splits,
                                           validate=False)
