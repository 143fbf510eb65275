"""Tests of building the strategy from the binary's flags."""

import os
from unittest import mock

import tensorflow as tf

from mixvocab_tf.core import distribute


class DistributeTest(tf.test.TestCase):

  def test_default_is_one_worker(self):
    strategy = distribute.build_strategy("default")
    self.assertEqual(strategy.num_replicas_in_sync, 1)
    self.assertEqual(distribute.worker_info(strategy), (0, 1))
    self.assertFalse(distribute.is_tpu(strategy))

  def test_bad_choices_say_what_is_expected(self):
    with self.assertRaisesRegex(ValueError, "strategy must be one of .*'gpu'"):
      distribute.build_strategy("gpu")
    with self.assertRaisesRegex(ValueError, "needs --tpu=ADDRESS"):
      distribute.build_strategy("tpu")
    with mock.patch.dict(os.environ, {}, clear=False):
      os.environ.pop("TF_CONFIG", None)
      with self.assertRaisesRegex(ValueError, "TF_CONFIG .* is not set"):
        distribute.build_strategy("multi_worker")
    with mock.patch.dict(os.environ, {"TF_CONFIG": "{not json"}):
      with self.assertRaisesRegex(ValueError, "TF_CONFIG is not valid JSON"):
        distribute.build_strategy("multi_worker")


if __name__ == "__main__":
  tf.test.main()
