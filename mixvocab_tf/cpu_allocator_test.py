"""Tests that the package's processes use TensorFlow's pooling CPU allocator."""

import os
import subprocess
import sys

import tensorflow as tf

from mixvocab_tf import cpu_allocator


class CpuAllocatorTest(tf.test.TestCase):

  def test_importing_the_package_sets_it(self):
    # One child process (importing the package loads TensorFlow: seconds);
    # that a user's value is kept is `use_pool`'s, tested below.
    environ = {k: v for k, v in os.environ.items()
               if k != cpu_allocator.VARIABLE}
    value = subprocess.run(
        [sys.executable, "-c", "import os, mixvocab_tf; "
         "print(os.environ['TF_CPU_ALLOCATOR_USE_BFC'])"],
        env=environ, check=True, capture_output=True, text=True).stdout
    self.assertEqual(value.strip(), "true")

  def test_use_pool_sets_it_and_keeps_the_users_value(self):
    environ = {}
    cpu_allocator.use_pool(environ)
    self.assertEqual(environ, {"TF_CPU_ALLOCATOR_USE_BFC": "true"})
    environ = {"TF_CPU_ALLOCATOR_USE_BFC": "false"}
    cpu_allocator.use_pool(environ)
    self.assertEqual(environ, {"TF_CPU_ALLOCATOR_USE_BFC": "false"})


if __name__ == "__main__":
  tf.test.main()
