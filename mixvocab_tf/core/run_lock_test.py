"""Tests of the run lock, on the local disk and on TensorFlow's ram:// file system.

ram:// stands for the remote file systems (gs://) that have no exclusive
create and no local path: the lock must live in the run directory itself.
"""

import json
import os
import re
import socket
import subprocess
from unittest import mock
import uuid

from absl.testing import parameterized
import tensorflow as tf

from mixvocab_tf.core import run_lock

_FILE_SYSTEMS = (("local", False), ("ram", True))


def _write_holder(directory, **record):
  tf.io.gfile.makedirs(directory)
  with tf.io.gfile.GFile(os.path.join(directory, run_lock.LOCK_FILE),
                         "w") as f:
    f.write(json.dumps(dict({"since": "earlier"}, **record)))


class RunLockTest(tf.test.TestCase, parameterized.TestCase):

  def _directory(self, on_ram):
    if on_ram:
      return f"ram://{uuid.uuid4().hex}/run"
    return os.path.join(self.get_temp_dir(), uuid.uuid4().hex, "run")

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_a_second_live_process_is_refused_until_release(self, on_ram):
    directory = self._directory(on_ram)
    lock = run_lock.RunLock(directory).acquire()
    self.assertTrue(tf.io.gfile.exists(lock.path))
    lock.acquire()  # This process again (a trainer run twice): allowed.
    # Another live process of this host: the parent of this one.
    holder = os.getpid()
    with mock.patch.object(run_lock.os, "getpid", return_value=os.getppid()):
      with self.assertRaisesRegex(run_lock.RunDirectoryBusyError,
                                  rf"in use by process {holder} "):
        run_lock.RunLock(directory).acquire()
    self.assertEqual(tf.io.gfile.listdir(directory), [run_lock.LOCK_FILE])
    lock.release()
    self.assertFalse(tf.io.gfile.exists(lock.path))
    with run_lock.RunLock(directory) as again:
      self.assertTrue(tf.io.gfile.exists(again.path))
    self.assertFalse(tf.io.gfile.exists(again.path))

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_the_lock_of_a_dead_process_is_taken_over(self, on_ram):
    directory = self._directory(on_ram)
    dead = subprocess.Popen(["true"])
    dead.wait()
    _write_holder(directory, host=socket.gethostname(), pid=dead.pid)
    with self.assertLogs(level="WARNING") as logs:
      lock = run_lock.RunLock(directory).acquire()
    self.assertRegex("\n".join(logs.output),
                     rf"Taking over .*RUN_LOCK.*process {dead.pid}")
    with tf.io.gfile.GFile(lock.path) as f:
      self.assertEqual(json.load(f)["pid"], os.getpid())
    lock.release()
    self.assertFalse(tf.io.gfile.exists(lock.path))

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_another_hosts_lock_is_held_and_says_how_to_delete_it(self, on_ram):
    directory = self._directory(on_ram)
    _write_holder(directory, host="other-vm", pid=os.getpid())
    path = os.path.join(directory, run_lock.LOCK_FILE)
    command = (f"tf.io.gfile.remove('{path}')" if on_ram else f"rm {path}")
    with self.assertRaisesRegex(
        run_lock.RunDirectoryBusyError,
        r"locked by process \d+ on host other-vm .*cannot check.*stale: "
        rf"delete the lock file {re.escape(path)} .*{re.escape(command)}"):
      run_lock.RunLock(directory).acquire()
    with tf.io.gfile.GFile(path) as f:
      self.assertEqual(json.load(f)["host"], "other-vm")

  @parameterized.named_parameters(*_FILE_SYSTEMS)
  def test_release_keeps_a_lock_that_another_process_took(self, on_ram):
    directory = self._directory(on_ram)
    lock = run_lock.RunLock(directory).acquire()
    _write_holder(directory, host="other-vm", pid=os.getpid())
    lock.release()
    self.assertTrue(tf.io.gfile.exists(lock.path))

  def test_bucket_locks_are_deleted_with_gsutil(self):
    self.assertEqual(
        run_lock._remove_command("gs://b/run/RUN_LOCK"),  # pylint: disable=protected-access
        "gsutil rm gs://b/run/RUN_LOCK")

  def test_an_uncreatable_directory_is_a_permission_error(self):
    blocker = os.path.join(self.get_temp_dir(), "a_file")
    open(blocker, "w").close()
    with self.assertRaisesRegex(PermissionError,
                                r"Cannot create the run directory .*a_file/run"
                                r".*writable --model_dir"):
      run_lock.RunLock(os.path.join(blocker, "run")).acquire()


if __name__ == "__main__":
  tf.test.main()
