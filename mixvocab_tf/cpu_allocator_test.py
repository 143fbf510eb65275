"""Tests that the package's processes use TensorFlow's pooling CPU allocator."""

import os
import subprocess
import sys

import tensorflow as tf

from mixvocab_tf import cpu_allocator


class CpuAllocatorTest(tf.test.TestCase):

  def _child_value(self, environ):
    return subprocess.run(
        [sys.executable, "-c",
         "import os, mixvocab_tf; print(os.environ['TF_CPU_ALLOCATOR_USE_BFC'])"],
        env=environ, check=True, capture_output=True, text=True).stdout.strip()

  def test_importing_the_package_sets_it_and_keeps_the_users_value(self):
    environ = {k: v for k, v in os.environ.items()
               if k != cpu_allocator.VARIABLE}
    self.assertEqual(self._child_value(environ), "true")
    self.assertEqual(
        self._child_value(dict(environ, TF_CPU_ALLOCATOR_USE_BFC="false")),
        "false")

  def test_use_pool_on_a_mapping(self):
    environ = {}
    cpu_allocator.use_pool(environ)
    self.assertEqual(environ, {"TF_CPU_ALLOCATOR_USE_BFC": "true"})


if __name__ == "__main__":
  tf.test.main()
