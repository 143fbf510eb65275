"""Tests for vocab: loading, fingerprints, the shipped student vocabulary."""

import hashlib
import os
import string

import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf import assets
from mixvocab_tf.text import vocab

SPECIALS = list(vocab.SPECIAL_TOKENS)
# Every printable ASCII character, A-Z included (the tokenizers lower-case).
ALL_ASCII = "".join(chr(c) for c in range(0x21, 0x7F))


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


class ShippedStudentVocabTest(tf.test.TestCase):
  """The default student vocabulary shipped in mixvocab_tf/assets."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tokens = vocab.load_vocab(assets.default_student_vocab())

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
    with open(os.path.join(assets.snips_dir("valid"), "seq.in"),
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
