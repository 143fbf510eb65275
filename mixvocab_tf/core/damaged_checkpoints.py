"""Checkpoints a run must not resume from: failed saves, damaged, diverged.

A run killed or starved of disk at the wrong moment leaves files that a
resumed run has to get past without losing more than the steps since the
last good checkpoint (docs/RELIABILITY.md):

* a save that failed (full disk, a kill) leaves the `ckpt-N_temp` directory
  TensorFlow writes the shards into; the next start removes it;
* a checkpoint whose files were truncated or corrupted is named, moved to
  `damaged/`, and the newest intact one before it is restored instead;
* checkpoints whose weights gave a NaN or a loss spike are moved to
  `diverged/` by the trainer, so a rerun resumes from a good one.

Checkpoints are set aside rather than deleted so that they can be inspected.
Every operation goes through `tf.io.gfile`, so this works on any file system
TensorFlow reads (`gs://`, `ram://`, a local disk).
"""

import os
from typing import Callable, List, Sequence, Tuple

from absl import logging
import tensorflow as tf

#: Where damaged checkpoints are moved (kept for inspection, never resumed).
DAMAGED_DIR = "damaged"

#: What reading a truncated or corrupted checkpoint raises: TensorFlow's data
#: loss and out-of-range errors, or Python's IndexError ("Read less bytes than
#: requested") from the checkpoint reader.
DAMAGE_ERRORS = (tf.errors.DataLossError, tf.errors.OutOfRangeError,
                 tf.errors.InternalError, IndexError)


def remove_failed_saves(directory: str, checkpoint_name: str) -> List[str]:
  """Removes the `<checkpoint_name>-N_temp*` leftovers of unfinished saves.

  TensorFlow writes a checkpoint's shards into a temporary directory and
  renames them when complete; a save that failed (full disk, a kill) leaves
  the directory behind.

  Args:
    directory: the checkpoints' directory.
    checkpoint_name: the prefix of their names (`CheckpointManager`'s
      `checkpoint_name`).

  Returns:
    The paths removed.
  """
  if not tf.io.gfile.isdir(directory):
    return []
  removed = []
  for path in tf.io.gfile.glob(os.path.join(directory,
                                            f"{checkpoint_name}-*_temp*")):
    if tf.io.gfile.isdir(path):
      try:
        tf.io.gfile.rmtree(path)
      except tf.errors.OpError as e:
        # What is left is retried at the next start; the run can go on.
        logging.warning("Could not remove all of %s: %s", path, e)
    else:
      tf.io.gfile.remove(path)
    logging.warning("Removed %s, left by a checkpoint save that did not "
                    "finish.", path)
    removed.append(path)
  return removed


def set_aside(directory: str, path: str, subdir: str) -> None:
  """Moves the files of checkpoint `path` into `directory/subdir`.

  Kept for inspection; the state file still names the checkpoint until
  `forget_missing` rewrites it.
  """
  target = os.path.join(directory, subdir)
  tf.io.gfile.makedirs(target)
  for name in tf.io.gfile.glob(path + ".*"):
    tf.io.gfile.rename(name, os.path.join(target, os.path.basename(name)),
                       overwrite=True)


def forget_missing(directory: str) -> None:
  """Drops checkpoints set aside from `directory`'s `checkpoint` state file.

  The newest one left becomes the latest; with none left the state file is
  removed, so the directory reads as holding no checkpoint. A
  `CheckpointManager` made before this call still holds the old list and
  must be made again.
  """
  state = tf.train.get_checkpoint_state(directory)
  kept = [p for p in (state.all_model_checkpoint_paths if state else [])
          if tf.io.gfile.exists(p + ".index")]
  state_file = os.path.join(directory, "checkpoint")
  if kept:
    tf.compat.v1.train.update_checkpoint_state(
        directory, kept[-1], all_model_checkpoint_paths=kept)
  elif tf.io.gfile.exists(state_file):
    tf.io.gfile.remove(state_file)


def restore_newest_intact(
    directory: str, paths: Sequence[str],
    restore: Callable[[str], None]) -> Tuple[str, List[str]]:
  """Restores the newest of `paths` whose files read; sets the others aside.

  A checkpoint whose files cannot be read is moved to `damaged/` and named in
  a warning, and the one before it is tried, down to the oldest.

  Args:
    directory: the checkpoints' directory (`damaged/` is made in it).
    paths: checkpoint prefixes, newest first.
    restore: reads one checkpoint. The `DAMAGE_ERRORS` it raises mark the
      checkpoint damaged; any other error (another model, another
      vocabulary) propagates, as trying an older checkpoint would not help.

  Returns:
    The path restored, and the paths moved to `damaged/` (the caller drops
    them from the state file with `forget_missing`).

  Raises:
    FileNotFoundError: none of `paths` can be read (all were moved).
  """
  damaged, moved = [], []
  for path in paths:
    try:
      restore(path)
    except DAMAGE_ERRORS as e:
      # The reader's IndexError may carry no message at all.
      reason = (str(getattr(e, "message", e)).splitlines() or
                ["no message"])[0][:200]
      damaged.append(f"{path} ({type(e).__name__}: {reason})")
      set_aside(directory, path, DAMAGED_DIR)
      moved.append(path)
      continue
    if damaged:
      logging.warning(
          "Damaged checkpoint(s), moved to %s: %s. Resumed from the newest "
          "intact one, %s; the steps after it are trained again.",
          os.path.join(directory, DAMAGED_DIR), "; ".join(damaged), path)
    return path, moved
  raise FileNotFoundError(
      f"No checkpoint of {directory} can be read: " + "; ".join(damaged) +
      f". They were moved to {os.path.join(directory, DAMAGED_DIR)}; rerun "
      "to start over.")
