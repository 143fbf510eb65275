"""Tests of the pretrained students' table and plot (the archived curves)."""

import os
import tempfile
import unittest

from projects.pretraining_recipe import pretrained_students


class PretrainedStudentsTest(unittest.TestCase):

  def test_every_archived_size_has_a_row_below_its_floor(self):
    sizes = pretrained_students.read_sizes()
    self.assertIn("6x96", [s["size"] for s in sizes])
    rows = pretrained_students.table(sizes).splitlines()[2:]
    self.assertEqual(len(rows), len(sizes))
    for entry, row in zip(sizes, rows):
      self.assertTrue(row.startswith(f"| {entry['size']} |"))
      last = entry["curve"]["points"][-1]
      self.assertLess(last["loss"], last["unigram_loss"])

  def test_the_plot_is_written(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, "curves.png")
      pretrained_students.plot(pretrained_students.read_sizes(), path)
      self.assertGreater(os.path.getsize(path), 5_000)


if __name__ == "__main__":
  unittest.main()
