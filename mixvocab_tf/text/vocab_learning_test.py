"""Tests for vocab_learning: corpus reading, learning, pruning, summaries."""

import pytest
import os

import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf import assets
from mixvocab_tf.text import vocab
from mixvocab_tf.text import vocab_learning

SPECIALS = list(vocab.SPECIAL_TOKENS)
# Every printable ASCII character, A-Z included (the tokenizers lower-case).
ALL_ASCII = "".join(chr(c) for c in range(0x21, 0x7F))


def _corpus_lines(n):
  return vocab_learning.read_corpus_lines(assets.builtin_corpus_files(),
                                          max_lines=n)


class CorpusTest(tf.test.TestCase):

  def test_read_skips_blank_lines_and_stops_at_max_lines(self):
    path = os.path.join(self.get_temp_dir(), "c.txt")
    with open(path, "w") as f:
      f.write(" one \n\ntwo\n\nthree\n")
    self.assertEqual(vocab_learning.read_corpus_lines(path), ["one", "two", "three"])
    self.assertEqual(vocab_learning.read_corpus_lines([path], max_lines=2),
                     ["one", "two"])

  def test_read_errors(self):
    with self.assertRaisesRegex(FileNotFoundError, "not found"):
      vocab_learning.read_corpus_lines([os.path.join(self.get_temp_dir(), "no.txt")])
    path = os.path.join(self.get_temp_dir(), "latin1.txt")
    with open(path, "wb") as f:
      f.write(b"caf\xe9\n")
    with self.assertRaisesRegex(ValueError, "not UTF-8"):
      vocab_learning.read_corpus_lines(path)

  def test_split_heldout_every_nth_line(self):
    lines = [str(i) for i in range(1000)]
    train, heldout = vocab_learning.split_heldout(lines, 0.01)
    self.assertEqual(heldout, [str(i) for i in range(99, 1000, 100)])
    self.assertLen(train, 990)
    self.assertEmpty(set(train) & set(heldout))
    self.assertEqual(vocab_learning.split_heldout(lines, 0), (lines, []))
    with self.assertRaisesRegex(ValueError, r"\[0, 0.5\]; received 0.9"):
      vocab_learning.split_heldout(lines, 0.9)


class LearnVocabularyTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.lines = _corpus_lines(300)
    cls.tokens = vocab_learning.learn_vocabulary_from_lines(cls.lines, vocab_size=400)

  def test_specials_first_and_size(self):
    self.assertEqual(self.tokens[:5], SPECIALS)
    self.assertLessEqual(len(self.tokens), 400)
    # The learned part is real: common words of the text are whole tokens.
    self.assertContainsSubset(["the", "and", "of"], self.tokens)
    vocab.load_vocab(self.tokens)  # No duplicates, no blanks.

  def test_ascii_guarantee(self):
    self.assertEmpty(vocab_learning.missing_ascii_tokens(self.tokens))
    # A-Z is left out on purpose: lower-casing maps it to a-z.
    self.assertNotIn("A", self.tokens)
    # Rare ASCII glued into words and standing alone never becomes [UNK].
    tokenizer = tf_text.FastBertTokenizer(
        vocab=self.tokens, lower_case_nfd_strip_accents=True)
    ids = tokenizer.tokenize(
        [ALL_ASCII, " ".join(ALL_ASCII), "zq{x}~^|<qz>@ w#w"]).flat_values
    self.assertNotIn(self.tokens.index(vocab.UNK), ids.numpy().tolist())

  def test_wordpiece_guarantee_without_punctuation_split(self):
    # The mixed-vocabulary tokenizer may split words itself (e.g. SNIPS
    # whitespace words): a glued-on ASCII character then needs its ## piece.
    tokenizer = tf_text.FastWordpieceTokenizer(
        self.tokens, token_out_type=tf.string, no_pretokenization=True)
    pieces = tokenizer.tokenize(["zq{x}~", "a+b=c"]).to_list()
    self.assertIn(b"##{", sum(pieces, []))
    self.assertNotIn(vocab.UNK.encode(), sum(pieces, []))

  @pytest.mark.large
  def test_learn_vocabulary_from_files_matches_lines(self):
    tokens = vocab_learning.learn_vocabulary(assets.builtin_corpus_files(),
                                    vocab_size=400, max_lines=300)
    self.assertEqual(tokens, self.tokens)

  def test_vocab_size_too_small(self):
    with self.assertRaisesRegex(ValueError,
                                "at least 141 .* received 140"):
      vocab_learning.learn_vocabulary_from_lines(self.lines, vocab_size=140)

  @pytest.mark.large
  def test_alphabet_must_fit(self):
    # 55 letters after normalisation (final sigma folds to sigma, and the
    # breve of short i is stripped), each whole and as a ## piece, plus the
    # 68 ASCII characters twice and 5 specials: 251 tokens at least.
    lines = ["".join(map(chr, range(0x3b1, 0x3ca))),
             "".join(map(chr, range(0x430, 0x450)))] * 20
    with self.assertRaisesRegex(ValueError,
                                "at least 251 .* Lower max_unique_chars"):
      vocab_learning.learn_vocabulary_from_lines(lines, vocab_size=200)
    tokens = vocab_learning.learn_vocabulary_from_lines(lines, vocab_size=200,
                                               max_unique_chars=10)
    self.assertLessEqual(len(tokens), 200)
    self.assertEmpty(vocab_learning.missing_ascii_tokens(tokens))

  def test_empty_input(self):
    with self.assertRaisesRegex(ValueError, "input is empty"):
      vocab_learning.learn_vocabulary_from_lines([], vocab_size=400)
    with self.assertRaisesRegex(ValueError, "holds no words"):
      vocab_learning.learn_vocabulary_from_lines(["   ", "\t"], vocab_size=400)

  def test_trim_drops_rarest_multichar_tokens(self):
    tokens = SPECIALS + ["a", "b", "##a", "ab", "ba", "##ab", "##b"]
    self.assertEqual(
        vocab_learning._trim(tokens, 9, protected=set(SPECIALS)),
        SPECIALS + ["a", "b", "##a", "##b"])
    with self.assertRaisesRegex(ValueError, "cannot hold"):
      vocab_learning._trim(tokens, 8, protected=set(SPECIALS))


class PruneToTeacherTest(tf.test.TestCase):

  def test_intersection_in_student_order(self):
    student = SPECIALS + ["!", "##!", "the", "zyx", "##ing", "a"]
    teacher = ["a", "##ing", "the", "!", "[PAD]", "[UNK]", "[CLS]", "[SEP]",
               "[MASK]", "cat"]
    pruned = vocab_learning.prune_to_teacher(student, teacher)
    self.assertEqual(pruned, SPECIALS + ["!", "the", "##ing", "a"])
    # The ASCII guarantee survives only where the teacher has the tokens.
    self.assertIn("##!", vocab_learning.missing_ascii_tokens(pruned))
    self.assertNotIn("!", vocab_learning.missing_ascii_tokens(pruned))

  def test_keeps_reserved_tokens_the_teacher_lacks(self):
    pruned = vocab_learning.prune_to_teacher(SPECIALS + ["a"], ["a"])
    self.assertEqual(pruned, SPECIALS + ["a"])


class VocabularySummaryTest(tf.test.TestCase):

  def test_counts_by_hand(self):
    student = SPECIALS + ["a", "b", "##a", "##b", "ab"]
    teacher = SPECIALS + ["ab", "abba", "b", "##a", "c"]
    # Words: ab | ba | abba | c.  Student: ab | b ##a | ab ##b ##a | [UNK]
    # (7 pieces). Teacher: ab | b ##a | abba | c (5 pieces).
    summary = vocab_learning.vocabulary_summary(student, teacher, ["AB ba", "abba c"])
    self.assertEqual(summary["student_size"], 10)
    self.assertEqual(summary["teacher_size"], 10)
    self.assertEqual(summary["heldout_words"], 4)
    self.assertAllClose(summary["student_pieces_per_word"], 7 / 4)
    self.assertAllClose(summary["teacher_pieces_per_word"], 5 / 4)
    self.assertAllClose(summary["student_unk_share"], 1 / 4)
    self.assertAllClose(summary["teacher_unk_share"], 0.0)
    self.assertAllClose(summary["student_in_teacher"], 8 / 10)
    self.assertEqual(summary["student_missing_ascii"],
                     len(vocab_learning.ascii_tokens()) - 4)

  def test_without_teacher_or_heldout_text(self):
    summary = vocab_learning.vocabulary_summary(SPECIALS + ["a"], None, [])
    self.assertNotIn("teacher_size", summary)
    self.assertEqual(summary["heldout_words"], 0)
    self.assertIsNone(summary["student_pieces_per_word"])


if __name__ == "__main__":
  tf.test.main()
