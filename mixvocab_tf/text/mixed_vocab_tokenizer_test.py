"""Tests for MixedVocabTokenizer: BERT-exact ids, mixing, bad input, saving."""

import json
import os

import hypothesis
from hypothesis import strategies as st
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf.text import mixed_vocab_tokenizer
from mixvocab_testing import testing_utils

SHARED = testing_utils.SHARED_DATA
MixedVocabTokenizer = mixed_vocab_tokenizer.MixedVocabTokenizer


@pytest.fixture(scope="module")
def vocabs():
  return assets.default_teacher_vocab(), assets.default_student_vocab()


@pytest.fixture(scope="module")
def hf_tokenizers(vocabs):
  tokenizers = pytest.importorskip("tokenizers")
  return [tokenizers.BertWordPieceTokenizer(v, lowercase=True) for v in vocabs]


def _hf_ids(hf, lines):
  return [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]


def _shared_sentences():
  sst2 = os.path.join(SHARED, "glue", "SST-2", "dev.tsv")
  mnli = os.path.join(SHARED, "glue", "MNLI", "dev_sample.json")
  if not (os.path.exists(sst2) and os.path.exists(mnli)):
    pytest.skip("../shared/data is not beside the project")
  with open(sst2, encoding="utf-8") as f:
    lines = [l.split("\t")[0] for l in f.read().splitlines()[1:]]
  with open(mnli, encoding="utf-8") as f:
    for example in json.load(f).values():
      lines += [example["text_a"], example["text_b"]]
  return lines


@pytest.mark.large
@pytest.mark.parametrize("p_student", [0.0, 1.0])
def test_single_vocab_ids_equal_hugging_face_on_glue(vocabs, hf_tokenizers,
                                                     p_student):
  lines = _shared_sentences()
  assert len(lines) > 2800
  tokenizer = MixedVocabTokenizer(*vocabs, p_student=p_student)
  out = tokenizer(tf.constant(lines))
  hf = hf_tokenizers[int(p_student)]
  assert out["token_ids"].to_list() == _hf_ids(hf, lines)
  vocab_ids = out["vocab_ids"].flat_values.numpy()
  assert (vocab_ids == int(p_student)).all()


_ODD_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0, max_codepoint=0x24F),
        st.sampled_from("\u00a0\u3000\u200b\u0301\u0308\u4e2d\u6587"
                        "\U0001F600\u05d0\u0410\u03a3\ufeff\ufffd\t\n\r"
                        "\u2028\u2029\u0085\u1680\u202f\u2010\u2014\u2019"
                        "\u201c\u201d\u2026\u2027\u200f"),
    ),
    max_size=60)


@pytest.mark.large
@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(lines=st.lists(_ODD_TEXT, min_size=1, max_size=8))
def test_teacher_ids_equal_hugging_face_on_any_text(vocabs, hf_tokenizers,
                                                    lines):
  tokenizer = _cached_tokenizer(vocabs, 0.0)
  out = tokenizer(tf.constant(lines))
  assert out["token_ids"].to_list() == _hf_ids(hf_tokenizers[0], lines)


def test_space_separators_are_zs_but_the_ascii_space():
  code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
  chars = tf.constant([chr(c).encode() for c in code_points])
  is_zs = tf.strings.regex_full_match(chars, r"\p{Zs}").numpy()
  is_space = tf.strings.regex_full_match(
      chars, mixed_vocab_tokenizer._SPACE_SEPARATOR).numpy()  # pylint: disable=protected-access
  zs = {c for c, z in zip(code_points, is_zs) if z}
  spaces = {c for c, s in zip(code_points, is_space) if s}
  assert spaces == (zs - {0x20}) | {0x2028, 0x2029}


def test_short_path_takes_ascii_and_general_punctuation_only():
  code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
  chars = tf.constant([chr(c).encode() for c in code_points])
  short = tf.strings.regex_full_match(
      chars, mixed_vocab_tokenizer._SHORT_PATH).numpy()  # pylint: disable=protected-access
  assert {c for c, s in zip(code_points, short) if s} == (
      set(range(0x80)) | set(range(0x2010, 0x2028)))
  # Invalid UTF-8, also the bytes of those characters cut short, does not.
  bad = tf.constant([b"\xe2\x80", b"a\xe2\x80\x9c\xe2", b"\xff", b"\x80 b"])
  assert not tf.strings.regex_full_match(
      bad, mixed_vocab_tokenizer._SHORT_PATH).numpy().any()  # pylint: disable=protected-access


def test_short_path_equals_the_unicode_path():
  # Every character of the short path alone, between letters and between
  # words, its neighbours U+200F (deleted) and U+2028 (a space), invalid
  # bytes, plus the corpus's lines: the short path must give the words of
  # the full path.
  chars = [chr(c) for c in list(range(128)) + list(range(0x200F, 0x2029))]
  lines = [f"A{c}b x{c} {c}Y {c}" for c in chars]
  lines += ["\u201cQuoted,\u201d she said \u2014 it\u2019s 5\u2026",
            "\u201cNa\u00efve\u201d \u2013 \u00c9cole"]
  with open(assets.builtin_corpus_files()[0], encoding="utf-8") as f:
    corpus = [line.rstrip("\n") for line in f]
  lines += [line for line in corpus if line.isascii()][:1000]
  lines += [line for line in corpus if not line.isascii()][:1000]
  strings = tf.constant([line.encode() for line in lines] +
                        [b"a\xe2\x80 b", b"\xe2\x80\x9cx\xff"])
  full = tf.strings.split(mixed_vocab_tokenizer._spaced_unicode(  # pylint: disable=protected-access
      strings, mixed_vocab_tokenizer.DEFAULT_MAX_INPUT_CHARS))
  assert mixed_vocab_tokenizer.split_words(strings).to_list() == full.to_list()
  # Truncation counts characters on both paths.
  short = mixed_vocab_tokenizer.split_words(strings, max_input_chars=5)
  assert short.to_list() == tf.strings.split(
      mixed_vocab_tokenizer._spaced_unicode(strings, 5)).to_list()  # pylint: disable=protected-access


_CACHE = {}


def _cached_tokenizer(vocabs, p_student, seed=None):
  key = (p_student, seed)
  if key not in _CACHE:
    _CACHE[key] = MixedVocabTokenizer(*vocabs, p_student=p_student, seed=seed)
  return _CACHE[key]


def test_mixing_picks_one_vocabulary_per_word(vocabs, hf_tokenizers):
  lines = _shared_sentences()[:400]
  tokenizer = MixedVocabTokenizer(*vocabs, p_student=0.5, seed=7)
  token_ids, vocab_ids = tokenizer.tokenize_words(tf.constant(lines))
  words = mixed_vocab_tokenizer.split_words(tf.constant(lines))
  flat_words = [w.decode() for w in words.flat_values.numpy()]
  teacher_hf, student_hf = hf_tokenizers
  per_word_ids = token_ids.values.to_list()
  per_word_vocab = vocab_ids.values.to_list()
  student_words = 0
  for word, ids, tags in zip(flat_words, per_word_ids, per_word_vocab):
    assert len(set(tags)) == 1, (word, tags)
    hf = student_hf if tags[0] == 1 else teacher_hf
    assert ids == hf.encode(word, add_special_tokens=False).ids, word
    student_words += tags[0]
  share = student_words / len(flat_words)
  assert 0.45 <= share <= 0.55, share


def test_same_seed_same_output_other_seed_other_output(vocabs):
  lines = tf.constant(_shared_sentences()[:64])
  a = MixedVocabTokenizer(*vocabs, seed=1)(lines)
  b = MixedVocabTokenizer(*vocabs, seed=1)(lines)
  c = MixedVocabTokenizer(*vocabs, seed=2)(lines)
  for key in a:
    assert a[key].to_list() == b[key].to_list()
  assert a["vocab_ids"].to_list() != c["vocab_ids"].to_list()
  tokenizer = MixedVocabTokenizer(*vocabs)
  seed = tf.constant([3, 4])
  assert (tokenizer(lines, seed=seed)["vocab_ids"].to_list() ==
          tokenizer(lines, seed=seed)["vocab_ids"].to_list())


def test_word_ids_index_words_within_each_string(vocabs):
  tokenizer = MixedVocabTokenizer(*vocabs, p_student=1.0)
  out = tokenizer(tf.constant(["unaffable tokenization, ok", "", "a b"]))
  word_ids = out["word_ids"].to_list()
  assert word_ids[1] == []
  assert word_ids[2] == [0, 1]
  assert word_ids[0][0] == 0 and word_ids[0][-1] == 3
  assert word_ids[0] == sorted(word_ids[0])


BAD_INPUTS = [
    b"", b"   \t\n ", b"\xff\xfe\xfa invalid \xc3", b"nul\x00inside",
    b"\x01\x02\x7f control", "\u4e2d\u6587\u5b57".encode(),
    "emoji \U0001F600\U0001F680!".encode(),
    "combining e\u0301 a\u0308 \u0301".encode(), "\u202e\u200d rtl".encode(),
]


@pytest.mark.parametrize("p_student", [0.0, 0.5, 1.0])
def test_bad_input_gives_defined_output(vocabs, p_student):
  tokenizer = _cached_tokenizer(vocabs, p_student, seed=0)
  out = tokenizer(tf.constant(BAD_INPUTS))
  ids = out["token_ids"].to_list()
  assert ids[0] == [] and ids[1] == []
  vocab_ids = out["vocab_ids"].flat_values.numpy()
  token_ids = out["token_ids"].flat_values.numpy()
  sizes = np.where(vocab_ids == 1, len(tokenizer.student_vocab),
                   len(tokenizer.teacher_vocab))
  assert ((token_ids >= 0) & (token_ids < sizes)).all()
  # NUL and other control characters are deleted, as BERT's reference does.
  unk = tokenizer.teacher_vocab.index("[UNK]")
  if p_student == 0.0:
    assert len(ids[3]) >= 1 and unk not in ids[3]


def test_huge_string_is_truncated_before_tokenizing(vocabs):
  tokenizer = MixedVocabTokenizer(*vocabs, p_student=0.5, seed=0,
                                  max_input_chars=1000)
  huge = "word " * 200_000  # 1 MB
  out = tokenizer(tf.constant([huge, "short"]))
  lengths = out["token_ids"].row_lengths().numpy()
  assert lengths[0] == 200  # 1000 characters = 200 words, one piece each
  assert lengths[1] >= 1


def test_rejects_bad_arguments(vocabs):
  with pytest.raises(ValueError, match="p_student"):
    MixedVocabTokenizer(*vocabs, p_student=1.5)
  with pytest.raises(ValueError, match=r"rank 1\); received shape \[\]"):
    MixedVocabTokenizer(*vocabs)(tf.constant("one string"))
  with pytest.raises(ValueError, match=r"received shape \[2, 2\].*flatten"):
    MixedVocabTokenizer(*vocabs)(tf.constant([["a b", "c"], ["d", "e"]]))


@pytest.mark.large
def test_config_round_trip_and_saved_model(vocabs, tmp_path):
  tokenizer = MixedVocabTokenizer(*vocabs, p_student=0.5, seed=5)
  config = tokenizer.get_config()
  assert isinstance(config["teacher_vocab"], list)  # tokens, not a path
  restored = MixedVocabTokenizer.from_config(config)
  lines = tf.constant(["Saving the tokenizer keeps its vocabularies."])
  for key, value in tokenizer(lines).items():
    assert value.to_list() == restored(lines)[key].to_list()

  inputs = tf_keras.Input(shape=(), dtype=tf.string)
  outputs = tokenizer(inputs)
  model = tf_keras.Model(inputs, {k: v.to_tensor(-1) for k, v in
                                  outputs.items()})
  path = str(tmp_path / "tokenizer_model")
  model.save(path, save_format="tf")
  reloaded = tf_keras.models.load_model(path)
  expected = model(lines)
  got = reloaded(lines)
  for key in expected:
    np.testing.assert_array_equal(expected[key], got[key])
