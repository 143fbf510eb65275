"""Ownership of a run directory by one process: the `RUN_LOCK` file.

Two trainers writing one model_dir would overwrite each other's checkpoints
and interleave their logs. The first to start writes `RUN_LOCK` (its host, pid
and start time) into the directory; a second one reads it and is refused
while the first lives.

The directory may be on any file system TensorFlow reads (`gs://`, `ram://`,
a local disk); every operation goes through `tf.io.gfile`, so on a bucket the
lock is an object beside the checkpoints, not a local directory named `gs:`.
What differs between file systems:

* Creating the lock: a local disk has an atomic exclusive create
  (`O_CREAT | O_EXCL`), which `tf.io.gfile` does not offer, so local paths
  use it. Elsewhere the record is written to a temporary name and renamed
  onto `RUN_LOCK` without overwriting, then read back; object stores have no
  atomic exclusive create, so two runs started within the same moment could
  both pass, which one person starting runs by hand does not do.
* Whether the holder lives: only a process of this host can be checked (by
  its pid). A lock written on another host (a bucket shared by several VMs)
  is treated as held, and the error says how to delete it once that run is
  known to be over.
"""

import json
import os
import socket
import time
from typing import Any, Dict, Optional

from absl import logging
import tensorflow as tf

#: The lock file of a run directory.
LOCK_FILE = "RUN_LOCK"


class RunDirectoryBusyError(RuntimeError):
  """Another live process owns the run directory."""


def _process_alive(pid: int) -> bool:
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:  # Alive, another user's.
    return True
  return True


def _is_local(path: str) -> bool:
  """Whether `path` is on the local disk (no `scheme://` prefix)."""
  return "://" not in path


def _remove_command(path: str) -> str:
  """A shell command that deletes the file at `path`."""
  if path.startswith("gs://"):
    return f"gsutil rm {path}"
  if _is_local(path):
    return f"rm {path}"
  return (f"python3 -c \"import tensorflow as tf; "
          f"tf.io.gfile.remove('{path}')\"")


class RunLock:
  """Ownership of a run directory by one process, for the length of a run.

  The lock file records the holder's host and pid: a lock left by a process
  of this host that died (SIGKILL, a lost session) is taken over with a
  warning; a live holder's, or one written on another host, is refused.

  Example:
  ```python
  with RunLock(model_dir):
    trainer.train()
  ```

  Args:
    directory: the run directory (created if missing), local or any file
      system `tf.io.gfile` reads.
  """

  def __init__(self, directory: str):
    self.directory = os.fspath(directory)
    self.path = os.path.join(self.directory, LOCK_FILE)
    self._held = False

  def _holder(self) -> Optional[Dict[str, Any]]:
    try:
      with tf.io.gfile.GFile(self.path, "r") as f:
        return json.loads(f.read())
    except (tf.errors.OpError, OSError, ValueError):
      return None

  def _unwritable(self, error: Exception) -> PermissionError:
    return PermissionError(
        f"Cannot write in the run directory {self.directory!r}: {error}. "
        "Give a writable --model_dir.")

  def _create(self, record: Dict[str, Any]) -> bool:
    """Writes the lock file unless one exists; whether it was written."""
    text = json.dumps(record)
    if _is_local(self.path):
      try:
        fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
      except FileExistsError:
        return False
      except OSError as e:
        raise self._unwritable(e) from e
      with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
      return True
    # Not named `RUN_LOCK.*`: ram:// reports a path as existing when a file's
    # name starts with it, so `RUN_LOCK` would seem to exist already.
    temporary = os.path.join(
        self.directory, f".{record['host']}.{record['pid']}.{LOCK_FILE}.tmp")
    try:
      with tf.io.gfile.GFile(temporary, "w") as f:
        f.write(text)
      try:
        tf.io.gfile.rename(temporary, self.path, overwrite=False)
      except tf.errors.AlreadyExistsError:
        tf.io.gfile.remove(temporary)
        return False
    except tf.errors.OpError as e:
      raise self._unwritable(e) from e
    # Two starts racing on an object store may both have renamed; the record
    # read back names the one that won.
    holder = self._holder() or {}
    return (holder.get("host"), holder.get("pid")) == (record["host"],
                                                      record["pid"])

  def _remove(self) -> None:
    try:
      tf.io.gfile.remove(self.path)
    except tf.errors.NotFoundError:
      pass

  def acquire(self) -> "RunLock":
    """Takes the lock (or keeps it, if this process holds it already).

    Raises:
      RunDirectoryBusyError: a live process of this host, or a process of
        another host, holds it.
      PermissionError: the directory cannot be created or written.
    """
    try:
      tf.io.gfile.makedirs(self.directory)
    except (tf.errors.OpError, OSError) as e:
      raise PermissionError(
          f"Cannot create the run directory {self.directory!r}: {e}. Give a "
          "writable --model_dir.") from e
    record = {"host": socket.gethostname(), "pid": os.getpid(),
              "since": time.strftime("%Y-%m-%d %H:%M:%S")}
    for _ in range(2):
      if self._create(record):
        break
      holder = self._holder() or {}
      same_host = holder.get("host") == record["host"]
      pid = holder.get("pid")
      if pid == record["pid"] and same_host:
        break  # Held by this process already (a trainer run twice).
      if same_host and isinstance(pid, int) and _process_alive(pid):
        raise RunDirectoryBusyError(
            f"{self.directory} is in use by process {pid} (since "
            f"{holder.get('since')}): two runs on one model_dir would "
            "overwrite each other's checkpoints. Wait for it to finish, "
            "stop it, or use another --model_dir.")
      if not same_host and holder:
        raise RunDirectoryBusyError(
            f"{self.directory} is locked by process {pid} on host "
            f"{holder.get('host')} (since {holder.get('since')}), which "
            "this machine cannot check: two runs on one model_dir would "
            "overwrite each other's checkpoints. If that run is over, the "
            f"lock is stale: delete the lock file {self.path} (`"
            f"{_remove_command(self.path)}`) and start again; otherwise use "
            "another --model_dir.")
      logging.warning("Taking over %s: its holder (process %s, since %s) "
                      "is no longer running.", self.path, pid,
                      holder.get("since"))
      self._remove()
    else:
      raise RunDirectoryBusyError(
          f"{self.directory} was locked again by another process while this "
          f"one took over a stale {self.path}; use another --model_dir.")
    self._held = True
    return self

  def release(self) -> None:
    """Deletes the lock file if this process holds it."""
    if not self._held:
      return
    holder = self._holder() or {}
    if (holder.get("pid") == os.getpid() and
        holder.get("host") in (None, socket.gethostname())):
      self._remove()
    self._held = False

  def __enter__(self):
    return self.acquire()

  def __exit__(self, *unused):
    self.release()
