"""Tests of snips: the built-in SNIPS copy, and SNIPS-layout directories."""

import os

import tensorflow as tf

from mixvocab_tf.datasets import catalog
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import snips
from mixvocab_tf.datasets import user_dataset
from mixvocab_testing.datasets_testing import write_goo

# The package's own copy of SNIPS (the Goo et al. split).
_SNIPS = snips.builtin_dir()


class ReadSnipsTest(tf.test.TestCase):

  def test_reads_and_splits_double_spaces(self):
    path = write_goo(os.path.join(self.get_temp_dir(), "ok"),
                     ["play  some jazz", "rate this book"],
                     ["O O B-genre", "O B-object_select B-object_type"],
                     ["PlayMusic", "RateBook"])
    examples = intent_slot_files.read_intent_slot(path)
    self.assertEqual(examples.words[0], ["play", "some", "jazz"])
    self.assertEqual(examples.tags[1],
                     ["O", "B-object_select", "B-object_type"])
    self.assertEqual(examples.intents, ["PlayMusic", "RateBook"])

  def test_word_tag_mismatch_names_file_and_line(self):
    path = write_goo(os.path.join(self.get_temp_dir(), "misaligned"),
                     ["play jazz", "rate this book"],
                     ["O B-genre", "O B-object_select"],
                     ["PlayMusic", "RateBook"])
    with self.assertRaisesRegex(
        errors.DataError, r"misaligned/seq.out, line 2: there are 2 slot "
        r"tags .* but .*seq.in, line 2, has 3 words"):
      intent_slot_files.read_intent_slot(path)

  def test_line_count_mismatch(self):
    path = write_goo(os.path.join(self.get_temp_dir(), "short"),
                     ["play jazz", "rate this"], ["O B-genre", "O O"],
                     ["PlayMusic"])
    with self.assertRaisesRegex(
        errors.DataError,
        "different numbers of lines: seq.in has 2, seq.out has 2, label has "
        "1"):
      intent_slot_files.read_intent_slot(path)

  def test_bad_tag_empty_query_and_missing_file(self):
    path = write_goo(os.path.join(self.get_temp_dir(), "swapped"),
                     ["play jazz"], ["play jazz"], ["PlayMusic"])
    with self.assertRaisesRegex(
        errors.DataError,
        "seq.out, line 1: slot tag 1 is 'play', which is not an IOB tag"):
      intent_slot_files.read_intent_slot(path)
    path = write_goo(os.path.join(self.get_temp_dir(), "empty"),
                     ["play jazz", "  "], ["O B-genre", ""],
                     ["PlayMusic", "PlayMusic"])
    with self.assertRaisesRegex(errors.DataError,
                                "empty/seq.in, line 2: the query is empty"):
      intent_slot_files.read_intent_slot(path)
    os.remove(os.path.join(path, "label"))
    with self.assertRaisesRegex(errors.DataError,
                                "empty: the directory has no label"):
      intent_slot_files.read_intent_slot(path)

  def test_real_splits(self):
    train = intent_slot_files.read_intent_slot(os.path.join(_SNIPS, "train"))
    valid = intent_slot_files.read_intent_slot(os.path.join(_SNIPS, "valid"))
    self.assertLen(train.intents, 13084)
    self.assertLen(valid.intents, 700)
    self.assertEqual(max(len(w) for w in train.words + valid.words), 35)


class SnipsDatasetTest(tf.test.TestCase):

  def test_built_in_copy_by_name(self):
    dataset = catalog.intent_slot("snips")
    self.assertIs(dataset, catalog.intent_slot("snips", None))
    self.assertEqual(dataset.describe(), "SNIPS from the built-in copy")
    train = dataset.examples("train")
    self.assertLen(train.intents, 13084)
    self.assertLen(dataset.examples("valid").intents, 700)
    self.assertEqual(train.words, user_dataset.load_dataset(
        _SNIPS).splits["train"].words)
    with self.assertRaisesRegex(FileNotFoundError,
                                "built-in SNIPS copy has no test split"):
      dataset.examples("test")

  def test_a_directory_of_snips_and_a_users_files(self):
    root = self.get_temp_dir()
    for split in ("train", "dev", "test"):
      write_goo(os.path.join(root, split), ["play jazz", "book it"],
                ["O B-genre", "O O"], ["PlayMusic", "Book"])
    dataset = catalog.intent_slot("snips", root)
    self.assertEqual(dataset.describe(), f"SNIPS from {root}")
    self.assertEqual(dataset.examples("test").intents, ["PlayMusic", "Book"])
    files = catalog.intent_slot("files", root)
    self.assertEqual(files.examples("valid").words,
                     [["play", "jazz"], ["book", "it"]])
    with self.assertRaisesRegex(ValueError, "data_dir must name"):
      catalog.intent_slot("files")
    with self.assertRaisesRegex(ValueError, "Unknown intent-and-slot"):
      catalog.intent_slot("atis")


if __name__ == "__main__":
  tf.test.main()
