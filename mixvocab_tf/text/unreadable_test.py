"""Words the student cannot read: the Python reader against the tokenizer."""

import unicodedata

import numpy as np
import pytest

from mixvocab_tf import assets
from mixvocab_tf.text import unreadable
from mixvocab_tf.text import vocab as vocab_lib

# A vocabulary where "ab" is [UNK] but "a" and "b" are not: a character
# between them shows whether it is deleted (one word, [UNK]) or breaks the
# word (two readable pieces).
_TINY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##a", "s",
         "e", "##s"]

WORDS = [
    # English, digits, punctuation.
    "play", "Spotify", "don't", "3.14", "10%", "$100", "e-mail", "C++",
    "#hashtag", "@user", "...", "(hello)", "hello,world", "https://x.org/a?b=1",
    "1990s", "OK!", "'", "--", "[UNK]", "##s",
    # Accents, ligatures, compatibility forms: read once normalized.
    "café", "naïve", "Ångström", "Éclair", "ﬁne", "ＡＢＣ", "Ⅻ", "①", "x²",
    "straße", "ẞ", "İstanbul", "Øresund", "œuvre", "ǅ",
    # Other scripts: not read.
    "北京", "周杰伦", "東京タワー", "こんにちは", "서울", "مرحبا", "السلام",
    "שלום", "Москва", "привет", "Αθήνα", "नमस्ते", "สวัสดี", "ሰላም", "١٢٣",
    # Mixed: readable when one piece is.
    "abc中文", "中a", "iPhone手机", "Москваa", "a😀",
    # Emoji, with modifiers, joiners, flags, keycaps.
    "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "1️⃣", "❤️", "✨✨",
    # Characters the normalizer deletes or splits at.
    "\u200b", "\u00ad", "a\u200db", "a\u0001b", "\u0301", "a\u0301",
    "\ufeffhello", "a\u00a0b", "\ufffd", "a\u2028b",
    # Longer than 100 bytes: [UNK], even in English.
    "a" * 100, "a" * 101, "a" * 60 + "," + "b" * 60,
    "中" * 40,
]


@pytest.fixture(scope="module")
def student_vocab():
  return vocab_lib.load_vocab(assets.default_student_vocab())


@pytest.mark.parametrize("vocab_name", ["student", "tiny"])
@pytest.mark.parametrize("lower_case", [True, False])
def test_reader_agrees_with_the_tokenizer_on_varied_words(
    student_vocab, vocab_name, lower_case):
  vocab = student_vocab if vocab_name == "student" else _TINY
  words = WORDS + [w.upper() for w in WORDS]
  want = unreadable.unreadable_mask(words, vocab, lower_case)
  reader = unreadable.WordReader(vocab, lower_case)
  got = np.array([reader.is_unreadable(w) for w in words])
  assert [w for w, a, b in zip(words, want, got) if a != b] == []


@pytest.mark.parametrize("vocab_name", ["student", "tiny"])
def test_reader_agrees_with_the_tokenizer_on_every_bmp_character(
    student_vocab, vocab_name):
  """Every assigned code point of the Basic Multilingual Plane, alone and
  between two letters (uncased, as the student)."""
  vocab = student_vocab if vocab_name == "student" else _TINY
  chars = [chr(c) for c in range(0x10000)
           if unicodedata.category(chr(c)) not in ("Cn", "Cs", "Co")]
  words = chars + [f"a{c}b" for c in chars]
  want = unreadable.unreadable_mask(words, vocab)
  reader = unreadable.WordReader(vocab)
  got = np.array([reader.is_unreadable(w) for w in words])
  differ = [f"U+{ord(w[len(w) // 2]):04X} in {w!r}"
            for w, a, b in zip(words, want, got) if a != b]
  assert differ == []


def test_student_reads_english_not_other_scripts():
  reader = unreadable.WordReader(assets.default_student_vocab())
  assert not any(reader.is_unreadable(w) for w in
                 ["play", "Beyoncé", "don't", "2024", "ﬁne", "abc中文"])
  assert all(reader.is_unreadable(w) for w in
             ["北京", "مرحبا", "😀", "Москва", "\u200b", "a" * 101])
  assert reader.count("play 周杰伦 on  spotify 😀 \t") == 2
  assert reader.count("") == 0


def test_count_unreadable_counts_repeats_and_lists_the_most_frequent():
  counts = unreadable.count_unreadable(
      {"train": ["play", "北京", "北京", "😀", "مرحبا", "مرحبا", "play"],
       "validation": ["jazz"]},
      assets.default_student_vocab(), most=2)
  assert counts == {
      "train": {"words": 7, "unreadable": 5, "distinct_unreadable": 3,
                "examples": {"北京": 2, "مرحبا": 2}},
      "validation": {"words": 1, "unreadable": 0, "distinct_unreadable": 0,
                     "examples": {}},
  }
  assert unreadable.count_unreadable({"test": []}, _TINY) == {
      "test": {"words": 0, "unreadable": 0, "distinct_unreadable": 0,
               "examples": {}}}
