"""Tests for metrics_io: markdown rows and metrics.json files."""

import os

import numpy as np
import tensorflow as tf

from mixvocab_tf.core import metrics_io


class MetricsIoTest(tf.test.TestCase):

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


if __name__ == "__main__":
  tf.test.main()
