"""Words the student cannot read: whitespace words it sees only as [UNK].

The student vocabulary (`assets.default_student_vocab()`: 4,929 WordPieces
learned from English text, uncased, accents stripped) spells English words,
digits and ASCII punctuation. A word in another script (Chinese, Arabic,
Cyrillic, ...) or an emoji has no piece in it, and WordPiece turns such a
word wholly into [UNK]: the model trains and serves on it without an error,
but every such word looks the same to it. This module counts them, so that
the own-data check warns before training
(`datasets.user_dataset.UserDataset.unreadable_warning`) and the predictor
says how many words of a query the model could not read (`predict`,
`unreadable_words`).

A whitespace word (`str.split`) is *unreadable* when every WordPiece that the
student's tokenizer gives it is [UNK], or when it gives none (a word made only
of characters the normalizer deletes or reads as white space: zero-width,
control and format characters, lone combining marks). Two implementations
answer that one question:

- `unreadable_mask`: the fine-tuning tokenizer itself
  (`wordpiece.fast_bert_tokenizer`, whose ids the served model sees too), on
  a batch of words in one call; `count_unreadable` tokenizes each distinct
  word of a dataset once (SST-2's 67,349 training sentences, 633,724
  words: 0.7 s, 1.6 s with the tokenizer's first build).
- `WordReader`: the same question in Python, for a few queries at a time
  (the predictor), without building a graph: BERT's basic tokenization
  (per character: NFKC case folding, NFD, accents and default-ignorable
  characters dropped, control and format characters read as white space;
  words split at white space, punctuation and CJK ideographs) and greedy
  longest-match WordPiece against the set of the vocabulary's tokens, with
  tensorflow_text's limit of 100 bytes a word. It agrees with
  `unreadable_mask` on every code point that Python's `unicodedata` knows,
  alone and between letters, cased and uncased (measured on all planes;
  `unreadable_test.py` checks the Basic Multilingual Plane); a character
  that Unicode added after Python's `unicodedata` version (14.0 in Python
  3.11) reads as an unknown letter.

`piece_counts` gives the fine-tuning tokenizer's count of pieces for each
word, from which the own-data job measures the examples longer than the
student reads (`UserDataset.long_examples`).

Example:
  reader = WordReader(assets.default_student_vocab())
  reader.count("play 周杰伦 on spotify 😀")  # 2
  count_unreadable({"train": ["play", "周杰伦"]}, assets.default_student_vocab())
  # {"train": {"words": 2, "unreadable": 1, "distinct_unreadable": 1,
  #            "examples": {"周杰伦": 1}}}
"""

import collections
import functools
import unicodedata
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import tensorflow as tf

from mixvocab_tf.text import vocab as vocab_lib
from mixvocab_tf.text import wordpiece

#: Unreadable words listed per group by `count_unreadable`, most frequent
#: first.
MOST_LISTED = 10
#: Distinct words tokenized per call of the tokenizer (bounds its memory).
_CHUNK = 100_000

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt):
# NFKC case folding, which the normalizer applies, deletes them. Most are
# format characters (deleted anyway) or combining marks (stripped); the
# others are Hangul fillers and reserved code points.
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C),
    (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F),
    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
# BERT's CJK ideographs (`_is_chinese_char` of its reference tokenizer).
_CJK = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)
# What `_normalize_char` gives a character that ends a word.
_SPACE = " "


def _in(ranges, cp: int) -> bool:
  return any(low <= cp <= high for low, high in ranges)


def _is_punctuation(ch: str) -> bool:
  """BERT's punctuation: ASCII symbols and Unicode's P* categories."""
  cp = ord(ch)
  if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
    return True
  return unicodedata.category(ch).startswith("P")


@functools.lru_cache(maxsize=1 << 16)
def _normalize_char(ch: str, lower_case: bool) -> str:
  """What the normalizer makes of one character, with word breaks marked.

  '' for a deleted character; ' ' for white space; ' x ' for a character x
  that is a word of its own (punctuation, CJK); else its normalized letters.
  `FastBertNormalizer` maps each code point on its own, so a word is the
  concatenation of its characters' forms.
  """
  if lower_case:
    text = unicodedata.normalize("NFKC", unicodedata.normalize(
        "NFKC", ch).casefold())
    text = unicodedata.normalize("NFD", text)
  else:
    text = ch
  out = []
  for c in text:
    cp = ord(c)
    category = unicodedata.category(c)
    if lower_case and (category == "Mn" or _in(_IGNORABLE, cp)):
      continue
    if c.isspace() or category in ("Cc", "Cf"):
      out.append(_SPACE)
    elif _in(_CJK, cp) or _is_punctuation(c):
      out.append(f"{_SPACE}{c}{_SPACE}")
    else:
      out.append(c)
  return "".join(out)


class WordReader:
  """Tells, in Python, whether the student reads a word (module docstring).

  Args:
    vocab: the student's WordPiece vocabulary (a vocab.txt path or tokens).
    lower_case: uncased normalization, as `wordpiece.fast_bert_tokenizer`.
    max_bytes_per_word: longer pieces of a word are [UNK], as there.
  """

  def __init__(self, vocab: vocab_lib.PathOrTokens, lower_case: bool = True,
               max_bytes_per_word: int = wordpiece.DEFAULT_MAX_BYTES_PER_WORD):
    tokens = vocab_lib.load_vocab(vocab, required_tokens=(vocab_lib.UNK,))
    self._tokens = frozenset(tokens)
    self.vocab_size = len(tokens)
    self.lower_case = bool(lower_case)
    self.max_bytes_per_word = max_bytes_per_word
    # Per reader, so that two vocabularies never share answers.
    self.is_unreadable = functools.lru_cache(maxsize=1 << 16)(
        self._is_unreadable)

  def _segments(self, piece: str) -> bool:
    """Whether greedy longest-match WordPiece cuts `piece` without [UNK]."""
    if len(piece.encode("utf-8", "surrogatepass")) > self.max_bytes_per_word:
      return False
    start = 0
    while start < len(piece):
      for end in range(len(piece), start, -1):
        candidate = piece[start:end]
        if start:
          candidate = vocab_lib.SUFFIX_INDICATOR + candidate
        if candidate in self._tokens:
          start = end
          break
      else:
        return False
    return True

  def _is_unreadable(self, word: str) -> bool:
    """True when every WordPiece of `word` is [UNK] (or it has none)."""
    normalized = "".join(_normalize_char(ch, self.lower_case) for ch in word)
    return not any(self._segments(piece) for piece in normalized.split(_SPACE)
                   if piece)

  def count(self, text: str) -> int:
    """How many whitespace words of `text` the student turns into [UNK]."""
    return sum(self.is_unreadable(word) for word in text.split())


@functools.lru_cache(maxsize=2)
def _tokenizer(tokens: tuple, lower_case: bool):
  """`wordpiece.fast_bert_tokenizer`, built once per vocabulary: a dataset is
  read by several steps of a job, and its tests read many."""
  return wordpiece.fast_bert_tokenizer(list(tokens), lower_case)


def _pieces(words: Sequence[str], vocab: vocab_lib.PathOrTokens,
            lower_case: bool) -> Iterable[tuple[tf.RaggedTensor, int]]:
  """The fine-tuning tokenizer's pieces of `words`, [chunk, (pieces)], a chunk
  of `_CHUNK` words at a time, each with the [UNK] id."""
  tokenizer, special_ids = _tokenizer(
      tuple(vocab_lib.load_vocab(vocab, wordpiece.PACKING_TOKENS)),
      bool(lower_case))
  for start in range(0, len(words), _CHUNK):
    chunk = [w.encode("utf-8", "surrogatepass")
             for w in words[start:start + _CHUNK]]
    yield (tokenizer.tokenize(tf.constant(chunk, tf.string)),
           special_ids[vocab_lib.UNK])


def unreadable_mask(words: Sequence[str], vocab: vocab_lib.PathOrTokens,
                    lower_case: bool = True) -> np.ndarray:
  """Which `words` the fine-tuning tokenizer turns wholly into [UNK].

  Args:
    words: whitespace words (strings; a lone surrogate is passed as the
      bytes that encode it).
    vocab: the student's WordPiece vocabulary (path or tokens).
    lower_case: as `wordpiece.fast_bert_tokenizer`.

  Returns:
    bool [len(words)]: every piece is [UNK], or the word has none.
  """
  masks = [np.zeros([0], bool)]
  for pieces, unk_id in _pieces(words, vocab, lower_case):
    # reduce_all of a word without pieces is True.
    masks.append(tf.reduce_all(tf.equal(pieces, unk_id), axis=1).numpy())
  return np.concatenate(masks)


def piece_counts(words: Sequence[str], vocab: vocab_lib.PathOrTokens,
                 lower_case: bool = True) -> np.ndarray:
  """How many WordPieces the fine-tuning tokenizer gives each of `words`.

  Args: as `unreadable_mask`.

  Returns:
    int [len(words)]: 0 for a word the normalizer deletes whole.
  """
  counts = [np.zeros([0], np.int64)]
  for pieces, _ in _pieces(words, vocab, lower_case):
    counts.append(pieces.row_lengths().numpy())
  return np.concatenate(counts)


def count_unreadable(words: Mapping[str, Iterable[str]],
                     vocab: vocab_lib.PathOrTokens,
                     lower_case: bool = True,
                     most: Optional[int] = MOST_LISTED) -> dict:
  """Per group (e.g. a dataset's splits): its words, and the unreadable ones.

  Each distinct word of all groups is tokenized once (`unreadable_mask`).

  Args:
    words: group name -> its whitespace words, repeats included.
    vocab: the student's WordPiece vocabulary (path or tokens).
    lower_case: as `wordpiece.fast_bert_tokenizer`.
    most: unreadable words listed per group (None: all of them).

  Returns:
    {name: {"words": all words, "unreadable": unreadable words (repeats
    counted), "distinct_unreadable": distinct unreadable words, "examples":
    {word: count} of the `most` most frequent, most frequent first, then
    alphabetically}}.
  """
  counters = {name: collections.Counter(group)
              for name, group in words.items()}
  distinct = sorted(set().union(*counters.values()))
  unreadable = {word for word, bad in zip(
      distinct, unreadable_mask(distinct, vocab, lower_case)) if bad}
  result = {}
  for name, counter in counters.items():
    found = sorted(((word, n) for word, n in counter.items()
                    if word in unreadable), key=lambda item: (-item[1],
                                                              item[0]))
    result[name] = {
        "words": sum(counter.values()),
        "unreadable": sum(n for _, n in found),
        "distinct_unreadable": len(found),
        "examples": dict(found if most is None else found[:most]),
    }
  return result
