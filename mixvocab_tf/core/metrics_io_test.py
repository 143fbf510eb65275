"""Tests for metrics_io: markdown rows and metrics.json files."""

import os
from unittest import mock
import uuid

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

from mixvocab_tf.core import metrics_io


class MetricsIoTest(tf.test.TestCase, parameterized.TestCase):

  def _directory(self, on_ram):
    if on_ram:
      return f"ram://{uuid.uuid4().hex}/run"
    return os.path.join(self.get_temp_dir(), uuid.uuid4().hex, "run")

  def test_markdown_row(self):
    row = metrics_io.markdown_row("6x256", 6.2e6, 24.8e6, {
        "accuracy": np.float32(0.8842),
        "f1": None
    })
    self.assertEqual(row, "| 6x256 | 6.20M | 24.8 MB | 88.42 | - |")
    header = metrics_io.markdown_header(["accuracy", "f1"])
    self.assertEqual(header.splitlines()[0].count("|"), row.count("|"))

  def test_write_metrics_json(self):
    path = os.path.join(self.get_temp_dir(), "eval", "metrics_io.json")
    written = metrics_io.write_metrics_json(path, {
        "accuracy": np.float64(0.5),
        "count": np.int64(3)
    },
                                         task="sst2")
    self.assertEqual(metrics_io.read_metrics_json(path), written)
    self.assertEqual(written, {
        "task": "sst2",
        "metrics": {
            "accuracy": 0.5,
            "count": 3
        }
    })

  @parameterized.named_parameters(("local", False), ("ram", True))
  def test_a_rewrite_replaces_the_file(self, on_ram):
    # ram:// appends to a file opened again for writing; the rename through a
    # temporary name replaces it on every file system.
    path = os.path.join(self._directory(on_ram), "metrics.json")
    metrics_io.write_metrics_json(path, {"accuracy": 0.25}, step=1)
    metrics_io.write_metrics_json(path, {"accuracy": 0.5}, step=2)
    self.assertEqual(metrics_io.read_metrics_json(path),
                     {"step": 2, "metrics": {"accuracy": 0.5}})
    self.assertEqual(tf.io.gfile.listdir(os.path.dirname(path)),
                     ["metrics.json"])

  @parameterized.named_parameters(("local", False), ("ram", True))
  def test_a_killed_write_leaves_the_previous_file(self, on_ram):
    path = os.path.join(self._directory(on_ram), "metrics.json")
    metrics_io.write_metrics_json(path, {"accuracy": 0.25}, step=1)
    # Killed after writing the temporary file, before the rename.
    with mock.patch.object(tf.io.gfile, "rename",
                           side_effect=KeyboardInterrupt):
      with self.assertRaises(KeyboardInterrupt):
        metrics_io.write_metrics_json(path, {"accuracy": 0.5}, step=2)
    self.assertEqual(metrics_io.read_metrics_json(path)["step"], 1)
    # The next write replaces the leftover temporary, not appends to it.
    metrics_io.write_metrics_json(path, {"accuracy": 0.75}, step=3)
    self.assertEqual(metrics_io.read_metrics_json(path)["step"], 3)
    self.assertEqual(tf.io.gfile.listdir(os.path.dirname(path)),
                     ["metrics.json"])

  def test_bytes_are_written_as_they_are(self):
    path = os.path.join(self._directory(True), "model.tflite")
    metrics_io.write_atomically(path, b"\x00\xff")
    with tf.io.gfile.GFile(path, "rb") as f:
      self.assertEqual(f.read(), b"\x00\xff")


if __name__ == "__main__":
  tf.test.main()
