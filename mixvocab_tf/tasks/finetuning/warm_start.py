"""Starting a fine-tuning run from an earlier run of the same task.

After more labelled data, a model need not learn its task from the start: the
earlier run's encoder and heads already answer most of it. `load` reads such
a run into a freshly built model: every variable is copied but a head's
weights along its labels' axis (the kernel's last axis, the bias), which are
copied label by label, by name (a "row" of the head in the docs); a label
new to this run keeps its fresh weights, one the run no longer has is
dropped.

  heads = {"intent_classifier": (old_intents, new_intents),
           "slot_classifier": (old_tags, new_tags)}
  warm_start.load(model, old_model, checkpoint, heads)

`old_model` is the task's model built for the earlier run's labels (its
variables in the same order as `model`'s), into which `checkpoint` is read.
"""

import os
from typing import Dict, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf
import tf_keras

from mixvocab_tf.core import checkpointing


def run_checkpoint(run: str) -> str:
  """The run's `best/` checkpoint if it has one, else its latest.

  Args:
    run: a fine-tuning run's model_dir, its `best/`, or a checkpoint prefix.

  Raises:
    FileNotFoundError: no checkpoint there.
  """
  run = os.fspath(run)
  best = os.path.join(run, "best")
  if tf.io.gfile.isdir(run) and tf.train.latest_checkpoint(best):
    run = best
  return checkpointing.resolve_checkpoint(run, what="warm-start run")


def run_dir(checkpoint: str) -> str:
  """The run directory of a checkpoint prefix (`<run>/best/ckpt-N` too)."""
  directory = os.path.dirname(checkpoint)
  return (os.path.dirname(directory) if os.path.basename(directory) == "best"
          else directory)


def rows(old: Sequence[str], new: Sequence[str]) -> np.ndarray:
  """For each label of `new`, its position in `old`, or -1 (a new label)."""
  where = {name: i for i, name in enumerate(old)}
  return np.array([where.get(name, -1) for name in new], np.int64)


def changes(heads: Dict[str, Tuple[Sequence[str], Sequence[str]]]) -> str:
  """What the labels gained and lost, head by head ('' if nothing)."""
  parts = []
  for head, (old, new) in heads.items():
    known_old, known_new = set(old), set(new)
    added = [n for n in new if n not in known_old]
    dropped = [n for n in old if n not in known_new]
    for what, names in (("new", added), ("no longer", dropped)):
      if names:
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        parts.append(f"{head}: {len(names)} {what} ({shown})")
  return "; ".join(parts)


def load(model: tf_keras.Model, old_model: tf_keras.Model, checkpoint: str,
         heads: Dict[str, Tuple[Sequence[str], Sequence[str]]]) -> int:
  """Reads `checkpoint` into `old_model` and copies it into `model`.

  Args:
    model: the new run's model, built (its variables exist).
    old_model: the same model class built for the earlier run's labels.
    checkpoint: the earlier run's checkpoint (its `model` item).
    heads: {layer name: (earlier labels, this run's labels)} of each output
      layer whose last axis is labels.

  Returns:
    The number of variables copied.

  Raises:
    ValueError: the two models differ in anything but their heads' labels
      (another encoder size, another architecture).
  """
  status = tf.train.Checkpoint(model=old_model).read(checkpoint)
  status.assert_existing_objects_matched().expect_partial()
  new_vars, old_vars = model.variables, old_model.variables
  if len(new_vars) != len(old_vars):
    raise ValueError(
        f"The warm-start checkpoint {checkpoint} holds a model of "
        f"{len(old_vars)} variables; this run's has {len(new_vars)}: start "
        "from a run of the same task and model size.")
  maps = {head: rows(old, new) for head, (old, new) in heads.items()}
  for new, old in zip(new_vars, old_vars):
    value, shape = old.numpy(), tuple(new.shape)
    head = _head_of(new.name, maps)
    if value.shape[:-1] != shape[:-1] or (head is None and
                                           value.shape != shape):
      raise ValueError(
          f"The warm-start checkpoint {checkpoint} has {old.name} of shape "
          f"{value.shape}, this run's model {shape}: start from a run of the "
          "same task and model size.")
    if head is not None:
      # Rows of the labels both runs have, by name; new labels keep theirs.
      index = maps[head]
      fresh = new.numpy()
      fresh[..., index >= 0] = value[..., index[index >= 0]]
      value = fresh
    new.assign(value)
  return len(new_vars)


def _head_of(name: str, maps) -> Optional[str]:
  parts = name.split("/")
  return next((head for head in maps if head in parts), None)


def log_loaded(checkpoint: str, heads) -> None:
  change = changes(heads)
  logging.info("Warm start from %s%s.", checkpoint,
               f": labels {change}" if change else " (the same labels)")
