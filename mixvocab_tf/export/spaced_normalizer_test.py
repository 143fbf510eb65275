"""SpacedBertTokenizer gives FastBertTokenizer's ids with smaller models."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf import assets
from mixvocab_tf.export import spaced_normalizer
from mixvocab_tf.text import vocab as vocab_lib

# A vocabulary whose tokens include punctuation, CJK characters, a token with
# punctuation inside and suffixes of both: the cases where the placeholder
# must not stand in for a known character.
_SMALL_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "x", "y", ".",
                "##.", "e.g", "中", "##中", "##a", "##b", "!", "(", "ab"]


@pytest.fixture(scope="module")
def student_tokens():
  return vocab_lib.load_vocab(assets.default_student_vocab())


def _assert_same_ids(tokens, lower_case, texts):
  reference = tf_text.FastBertTokenizer(
      vocab=list(tokens), token_out_type=tf.int64,
      lower_case_nfd_strip_accents=lower_case)
  spaced = spaced_normalizer.SpacedBertTokenizer(tokens, lower_case)
  x = tf.constant(texts)
  expected, got = reference.tokenize(x), spaced.tokenize(x)
  np.testing.assert_array_equal(got.row_splits.numpy(),
                                expected.row_splits.numpy())
  np.testing.assert_array_equal(got.flat_values.numpy(),
                                expected.flat_values.numpy())


@pytest.mark.large
@pytest.mark.parametrize("lower_case", [True, False])
@pytest.mark.parametrize("pattern", ["{}", "a{}b", "x{}{}y"])
def test_every_code_point_tokenizes_as_fast_bert_tokenizer(
    student_tokens, lower_case, pattern):
  texts = [pattern.format(chr(c), chr(c)).encode("utf-8")
           for c in spaced_normalizer.unicode_code_points()]
  _assert_same_ids(student_tokens, lower_case, texts)


@pytest.mark.large
@pytest.mark.parametrize("lower_case", [True, False])
def test_punctuation_and_cjk_tokens_keep_their_ids(lower_case):
  cps = spaced_normalizer.unicode_code_points()
  texts = [f"a{chr(c)}b {chr(c)}中.e.g".encode("utf-8") for c in cps]
  _assert_same_ids(_SMALL_VOCAB, lower_case, texts)


def test_text_and_edge_cases_tokenize_as_fast_bert_tokenizer(student_tokens):
  with open(assets.builtin_corpus_files()[0], encoding="utf-8") as f:
    lines = [line.encode("utf-8") for line in f.read().splitlines()[:3000]]
  edge = [b"", b"   ", b"[UNK]", b"##", b"a##b", b"a" * 100, b"a" * 101,
          b"a" * 150 + b",b", b"b," + b"a" * 150, b"\xff\xfeab", b"a\xc3",
          b"\x00a\x00", "Café naïve 中文!".encode("utf-8"),
          b"e.g. U.S.A. $5.00", "É".encode("utf-8") * 60]
  _assert_same_ids(student_tokens, True, lines + edge)


def test_the_rebuilt_standard_mapping_normalizes_as_tensorflow_text():
  """Our flatbuffer and trie are read by the kernel as its own are."""
  cps = spaced_normalizer.unicode_code_points()
  texts = tf.constant([f"x{chr(c)}y".encode("utf-8") for c in cps])
  for lower_case in (True, False):
    mapping = spaced_normalizer._bert_normalization(lower_case)  # pylint: disable=protected-access
    ours = tf_text.FastBertNormalizer(
        model_buffer=spaced_normalizer.normalizer_model(mapping, lower_case))
    theirs = tf_text.FastBertNormalizer(
        lower_case_nfd_strip_accents=lower_case)
    np.testing.assert_array_equal(ours.normalize(texts).numpy(),
                                  theirs.normalize(texts).numpy())


def test_the_models_are_smaller_than_fast_bert_tokenizers(student_tokens):
  reference = tf_text.FastBertTokenizer(
      vocab=list(student_tokens), lower_case_nfd_strip_accents=True)
  # pylint: disable=protected-access
  reference_bytes = (
      int(tf.size(reference._fast_bert_normalizer._model)) +
      int(tf.size(reference._fast_wordpiece_tokenizer._model)))
  spaced = sum(spaced_normalizer.SpacedBertTokenizer(
      student_tokens).model_sizes())
  assert reference_bytes - spaced > 300_000, (reference_bytes, spaced)


def test_letters_of_no_token_stay_out_of_the_normalizer(student_tokens):
  """Greek and Hangul make an [UNK] word either way; accents still strip."""
  mapping = spaced_normalizer.spaced_mapping(student_tokens, True)
  assert ord("\u03a3") not in mapping and ord("\uac00") not in mapping
  assert mapping[ord("\u00c9")] == "e" and mapping[ord("A")] == "a"
  assert mapping[ord("\u4e2d")].startswith(" ")  # CJK: still split off.
  normalizer_bytes, _ = spaced_normalizer.SpacedBertTokenizer(
      student_tokens).model_sizes()
  assert normalizer_bytes < 64_000, normalizer_bytes


def test_a_normalized_string_too_long_is_refused():
  with pytest.raises(ValueError, match="at most 63"):
    spaced_normalizer.normalizer_model({0x41: "x" * 64}, True)
