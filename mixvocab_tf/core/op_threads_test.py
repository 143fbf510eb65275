"""Tests for how many operations run at once (`Trainer.concurrent_ops`)."""

import json
import os
import subprocess
import sys
import threading
from unittest import mock

import tensorflow as tf

from mixvocab_tf.core import op_threads

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# A fresh process: TensorFlow fixes its pools at its first operation.
_SCRIPT = r"""
import json
import tensorflow as tf
from mixvocab_tf.core import op_threads
applied = op_threads.set_concurrent_ops(2)
pools = [tf.config.threading.get_inter_op_parallelism_threads(),
         tf.config.threading.get_intra_op_parallelism_threads()]
product = float(tf.reduce_sum(tf.matmul(tf.ones([64, 64]), tf.ones([64, 64]))))
# The runtime runs now: other pools cannot be set, the first ones stay.
again = op_threads.set_concurrent_ops(2)
later = op_threads.set_concurrent_ops(1)
print(json.dumps({"applied": applied, "pools": pools, "product": product,
                  "again": again, "later": later,
                  "concurrent": op_threads.concurrent_ops(),
                  "cores": op_threads.cores()}))
"""


class OpThreadsTest(tf.test.TestCase):

  def test_two_ops_at_once_each_on_half_the_cores_before_the_runtime(self):
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=_REPO), timeout=300, check=True)
    out = json.loads(result.stdout.strip().splitlines()[-1])
    self.assertTrue(out["applied"])
    self.assertEqual(out["pools"], [2, max(1, out["cores"] // 2)])
    self.assertEqual(out["product"], 64.0 ** 3)
    self.assertTrue(out["again"])  # The same setting: nothing to change.
    self.assertFalse(out["later"])
    self.assertEqual(out["concurrent"], 2)
    self.assertIn("concurrent_ops=1 is not applied", result.stderr)

  def test_none_leaves_tensorflows_default(self):
    with mock.patch.object(op_threads, "_concurrent_ops", None):
      self.assertFalse(op_threads.set_concurrent_ops(None))
      self.assertEqual(op_threads.concurrent_ops(), 1)

  def test_bad_values_are_clear_errors(self):
    for bad in (0, -2, 1.5, True, "2"):
      with self.assertRaisesRegex(ValueError, "positive integer or None"):
        op_threads.set_concurrent_ops(bad)

  def test_map_side_by_side_runs_that_many_calls_at_once_in_order(self):
    barrier = threading.Barrier(2, timeout=30)
    def both_waiting(x):
      # Returns only when a second call is running at the same time.
      barrier.wait()
      return x * x
    with mock.patch.object(op_threads, "_concurrent_ops", 2):
      self.assertEqual(list(op_threads.map_side_by_side(both_waiting,
                                                        range(10))),
                       [x * x for x in range(10)])
    threads = []
    def record(x):
      threads.append(threading.get_ident())
      return -x
    with mock.patch.object(op_threads, "_concurrent_ops", None):
      self.assertEqual(list(op_threads.map_side_by_side(record, range(5))),
                       [0, -1, -2, -3, -4])
    self.assertEqual(set(threads), {threading.get_ident()})


if __name__ == "__main__":
  tf.test.main()
