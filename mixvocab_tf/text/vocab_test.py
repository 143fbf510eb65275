"""Tests for vocab: loading, fingerprints, learning, pruning, summaries."""

import hashlib
import os
import string

import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf import data
from mixvocab_tf.text import vocab

SPECIALS = list(vocab.SPECIAL_TOKENS)
# Every printable ASCII character, A-Z included (the tokenizers lower-case).
ALL_ASCII = "".join(chr(c) for c in range(0x21, 0x7F))


def _corpus_lines(n):
  return vocab.read_corpus_lines(data.builtin_corpus_files(), max_lines=n)


class LoadVocabTest(tf.test.TestCase):

  def _write(self, content, name="vocab.txt"):
    path = os.path.join(self.get_temp_dir(), name)
    with open(path, "wb") as f:
      f.write(content if isinstance(content, bytes) else content.encode())
    return path

  def test_ids_are_line_numbers(self):
    tokens = SPECIALS + ["the", "##s"]
    path = self._write("\n".join(tokens) + "\n")
    self.assertEqual(vocab.load_vocab(path), tokens)
    self.assertEqual(vocab.load_vocab(tokens), tokens)

  def test_crlf_and_missing_final_newline(self):
    path = self._write("\r\n".join(SPECIALS + ["x"]))
    self.assertEqual(vocab.load_vocab(path), SPECIALS + ["x"])

  def test_missing_file(self):
    with self.assertRaisesRegex(FileNotFoundError, "not found: .*nope.txt"):
      vocab.load_vocab(os.path.join(self.get_temp_dir(), "nope.txt"))

  def test_empty_file(self):
    with self.assertRaisesRegex(ValueError, "empty"):
      vocab.load_vocab(self._write("\n"))
    with self.assertRaisesRegex(ValueError, "empty"):
      vocab.load_vocab([])

  def test_duplicate_token(self):
    with self.assertRaisesRegex(ValueError,
                                r"Duplicate token 'a'.*ids 5 and 7"):
      vocab.load_vocab(SPECIALS + ["a", "b", "a"])

  def test_missing_special_token(self):
    path = self._write("\n".join(SPECIALS[:4] + ["a"]) + "\n")
    with self.assertRaisesRegex(ValueError, r"lacks the required tokens "
                                r"\['\[MASK\]'\]"):
      vocab.load_vocab(path)
    self.assertLen(vocab.load_vocab(path, required_tokens=()), 5)

  def test_not_utf8(self):
    path = self._write(("\n".join(SPECIALS) + "\n").encode() + b"caf\xe9\n")
    with self.assertRaisesRegex(ValueError, r"not UTF-8: byte 0xe9.*line 6"):
      vocab.load_vocab(path)

  def test_blank_and_whitespace_tokens(self):
    with self.assertRaisesRegex(ValueError, "Blank token at id 5"):
      vocab.load_vocab(self._write("\n".join(SPECIALS + ["", "a"])))
    with self.assertRaisesRegex(ValueError, "contains whitespace"):
      vocab.load_vocab(SPECIALS + ["a b"])

  def test_non_string_token(self):
    with self.assertRaisesRegex(ValueError, "must be str"):
      vocab.load_vocab(SPECIALS + [b"a"])


class FingerprintTest(tf.test.TestCase):

  def test_stable_value(self):
    # Checkpoints store this value: it must not change between versions.
    self.assertEqual(
        vocab.vocab_fingerprint(["[PAD]", "a", "##b"]),
        hashlib.sha256(b"[PAD]\na\n##b\n").hexdigest())

  def test_equals_sha256_of_written_file(self):
    tokens = SPECIALS + ["hello", "##world"]
    path = os.path.join(self.get_temp_dir(), "v.txt")
    vocab.write_vocab(tokens, path)
    with open(path, "rb") as f:
      self.assertEqual(vocab.vocab_fingerprint(tokens),
                       hashlib.sha256(f.read()).hexdigest())
    self.assertEqual(vocab.vocab_fingerprint(vocab.load_vocab(path)),
                     vocab.vocab_fingerprint(tokens))

  def test_order_matters(self):
    self.assertNotEqual(vocab.vocab_fingerprint(["a", "b"]),
                        vocab.vocab_fingerprint(["b", "a"]))


class CorpusTest(tf.test.TestCase):

  def test_read_skips_blank_lines_and_stops_at_max_lines(self):
    path = os.path.join(self.get_temp_dir(), "c.txt")
    with open(path, "w") as f:
      f.write(" one \n\ntwo\n\nthree\n")
    self.assertEqual(vocab.read_corpus_lines(path), ["one", "two", "three"])
    self.assertEqual(vocab.read_corpus_lines([path], max_lines=2),
                     ["one", "two"])

  def test_read_errors(self):
    with self.assertRaisesRegex(FileNotFoundError, "not found"):
      vocab.read_corpus_lines([os.path.join(self.get_temp_dir(), "no.txt")])
    path = os.path.join(self.get_temp_dir(), "latin1.txt")
    with open(path, "wb") as f:
      f.write(b"caf\xe9\n")
    with self.assertRaisesRegex(ValueError, "not UTF-8"):
      vocab.read_corpus_lines(path)

  def test_split_heldout_every_nth_line(self):
    lines = [str(i) for i in range(1000)]
    train, heldout = vocab.split_heldout(lines, 0.01)
    self.assertEqual(heldout, [str(i) for i in range(99, 1000, 100)])
    self.assertLen(train, 990)
    self.assertEmpty(set(train) & set(heldout))
    self.assertEqual(vocab.split_heldout(lines, 0), (lines, []))
    with self.assertRaisesRegex(ValueError, r"\[0, 0.5\]; received 0.9"):
      vocab.split_heldout(lines, 0.9)


class LearnVocabularyTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.lines = _corpus_lines(300)
    cls.tokens = vocab.learn_vocabulary_from_lines(cls.lines, vocab_size=400)

  def test_specials_first_and_size(self):
    self.assertEqual(self.tokens[:5], SPECIALS)
    self.assertLessEqual(len(self.tokens), 400)
    # The learned part is real: common words of the text are whole tokens.
    self.assertContainsSubset(["the", "and", "of"], self.tokens)
    vocab.load_vocab(self.tokens)  # No duplicates, no blanks.

  def test_ascii_guarantee(self):
    self.assertEmpty(vocab.missing_ascii_tokens(self.tokens))
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

  def test_learn_vocabulary_from_files_matches_lines(self):
    tokens = vocab.learn_vocabulary(data.builtin_corpus_files(),
                                    vocab_size=400, max_lines=300)
    self.assertEqual(tokens, self.tokens)

  def test_vocab_size_too_small(self):
    with self.assertRaisesRegex(ValueError,
                                "at least 141 .* received 140"):
      vocab.learn_vocabulary_from_lines(self.lines, vocab_size=140)

  def test_alphabet_must_fit(self):
    # 55 letters after normalisation (final sigma folds to sigma, and the
    # breve of short i is stripped), each whole and as a ## piece, plus the
    # 68 ASCII characters twice and 5 specials: 251 tokens at least.
    lines = ["".join(map(chr, range(0x3b1, 0x3ca))),
             "".join(map(chr, range(0x430, 0x450)))] * 20
    with self.assertRaisesRegex(ValueError,
                                "at least 251 .* Lower max_unique_chars"):
      vocab.learn_vocabulary_from_lines(lines, vocab_size=200)
    tokens = vocab.learn_vocabulary_from_lines(lines, vocab_size=200,
                                               max_unique_chars=10)
    self.assertLessEqual(len(tokens), 200)
    self.assertEmpty(vocab.missing_ascii_tokens(tokens))

  def test_empty_input(self):
    with self.assertRaisesRegex(ValueError, "input is empty"):
      vocab.learn_vocabulary_from_lines([], vocab_size=400)
    with self.assertRaisesRegex(ValueError, "holds no words"):
      vocab.learn_vocabulary_from_lines(["   ", "\t"], vocab_size=400)

  def test_trim_drops_rarest_multichar_tokens(self):
    tokens = SPECIALS + ["a", "b", "##a", "ab", "ba", "##ab", "##b"]
    self.assertEqual(
        vocab._trim(tokens, 9, protected=set(SPECIALS)),
        SPECIALS + ["a", "b", "##a", "##b"])
    with self.assertRaisesRegex(ValueError, "cannot hold"):
      vocab._trim(tokens, 8, protected=set(SPECIALS))


class PruneToTeacherTest(tf.test.TestCase):

  def test_intersection_in_student_order(self):
    student = SPECIALS + ["!", "##!", "the", "zyx", "##ing", "a"]
    teacher = ["a", "##ing", "the", "!", "[PAD]", "[UNK]", "[CLS]", "[SEP]",
               "[MASK]", "cat"]
    pruned = vocab.prune_to_teacher(student, teacher)
    self.assertEqual(pruned, SPECIALS + ["!", "the", "##ing", "a"])
    # The ASCII guarantee survives only where the teacher has the tokens.
    self.assertIn("##!", vocab.missing_ascii_tokens(pruned))
    self.assertNotIn("!", vocab.missing_ascii_tokens(pruned))

  def test_keeps_reserved_tokens_the_teacher_lacks(self):
    pruned = vocab.prune_to_teacher(SPECIALS + ["a"], ["a"])
    self.assertEqual(pruned, SPECIALS + ["a"])


class VocabularySummaryTest(tf.test.TestCase):

  def test_counts_by_hand(self):
    student = SPECIALS + ["a", "b", "##a", "##b", "ab"]
    teacher = SPECIALS + ["ab", "abba", "b", "##a", "c"]
    # Words: ab | ba | abba | c.  Student: ab | b ##a | ab ##b ##a | [UNK]
    # (7 pieces). Teacher: ab | b ##a | abba | c (5 pieces).
    summary = vocab.vocabulary_summary(student, teacher, ["AB ba", "abba c"])
    self.assertEqual(summary["student_size"], 10)
    self.assertEqual(summary["teacher_size"], 10)
    self.assertEqual(summary["heldout_words"], 4)
    self.assertAllClose(summary["student_pieces_per_word"], 7 / 4)
    self.assertAllClose(summary["teacher_pieces_per_word"], 5 / 4)
    self.assertAllClose(summary["student_unk_share"], 1 / 4)
    self.assertAllClose(summary["teacher_unk_share"], 0.0)
    self.assertAllClose(summary["student_in_teacher"], 8 / 10)
    self.assertEqual(summary["student_missing_ascii"],
                     len(vocab.ascii_tokens()) - 4)

  def test_without_teacher_or_heldout_text(self):
    summary = vocab.vocabulary_summary(SPECIALS + ["a"], None, [])
    self.assertNotIn("teacher_size", summary)
    self.assertEqual(summary["heldout_words"], 0)
    self.assertIsNone(summary["student_pieces_per_word"])


class ShippedStudentVocabTest(tf.test.TestCase):
  """The default student vocabulary shipped in mixvocab_tf/data."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tokens = vocab.load_vocab(data.default_student_vocab())

  def test_shape(self):
    self.assertEqual(self.tokens[:5], SPECIALS)
    self.assertBetween(len(self.tokens), 4500, 5000)

  def test_every_printable_ascii_char_whole_and_as_piece(self):
    for c in string.printable:
      if c.isspace() or c.isupper():
        continue
      self.assertIn(c, self.tokens)
      self.assertIn("##" + c, self.tokens)

  def test_no_unk_on_ascii_snips_valid(self):
    with open(os.path.join(data.snips_dir("valid"), "seq.in"),
              encoding="utf-8") as f:
      lines = [l.strip() for l in f if l.strip().isascii()]
    self.assertGreater(len(lines), 600)
    lines.append(ALL_ASCII)
    tokenizer = tf_text.FastBertTokenizer(
        vocab=self.tokens, lower_case_nfd_strip_accents=True)
    ids = tokenizer.tokenize(lines).flat_values.numpy()
    self.assertGreater(ids.size, len(lines))
    self.assertNotIn(self.tokens.index(vocab.UNK), ids.tolist())


if __name__ == "__main__":
  tf.test.main()
