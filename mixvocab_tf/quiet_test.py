"""Tests of `quiet`'s logging filter (its environment part: tests/)."""

import logging
import os
import unittest

from mixvocab_tf import quiet


def _record(name, level, pathname, message):
  return logging.LogRecord(name, level, pathname, 1, message, None, None)


class TensorflowInfoHiddenTest(unittest.TestCase):

  def setUp(self):
    super().setUp()
    self.seen = []
    self.handlers = {}
    for name in (quiet.TENSORFLOW_LOGGER, quiet.ABSL_LOGGER):
      handler = logging.Handler(logging.DEBUG)
      handler.emit = lambda record: self.seen.append(record.getMessage())
      logging.getLogger(name).addHandler(handler)
      self.handlers[name] = handler
    tensorflow_dir = quiet._package_dirs(["tensorflow"])[0]
    self.tf_file = os.path.join(tensorflow_dir, "python", "saved_model",
                                "save.py")
    self.own_file = os.path.abspath(quiet.__file__)

  def tearDown(self):
    for name, handler in self.handlers.items():
      logging.getLogger(name).removeHandler(handler)
    super().tearDown()

  def _log_all(self):
    for name in (quiet.TENSORFLOW_LOGGER, quiet.ABSL_LOGGER):
      logger = logging.getLogger(name)
      logger.handle(_record(name, logging.INFO, self.tf_file, f"{name} info"))
      logger.handle(_record(name, logging.WARNING, self.tf_file,
                            f"{name} warning"))
      logger.handle(_record(name, logging.INFO, self.own_file,
                            f"{name} package info"))

  def test_hides_tensorflow_info_keeps_its_warnings_and_the_package(self):
    with quiet.tensorflow_info_hidden(verbose=False):
      self._log_all()
    self.assertEqual(self.seen, [
        "tensorflow warning", "tensorflow package info", "absl warning",
        "absl package info"])
    # Removed on exit.
    self.seen.clear()
    self._log_all()
    self.assertLen(self.seen, 6)

  def test_removed_when_the_block_raises(self):
    with self.assertRaises(ValueError):
      with quiet.tensorflow_info_hidden(verbose=False):
        raise ValueError("the step failed")
    self._log_all()
    self.assertLen(self.seen, 6)

  def test_verbose_keeps_every_line(self):
    with quiet.tensorflow_info_hidden(verbose=True):
      self._log_all()
    self.assertLen(self.seen, 6)

  def assertLen(self, sequence, length):  # pylint: disable=invalid-name
    self.assertEqual(len(sequence), length, sequence)


if __name__ == "__main__":
  unittest.main()
