"""Checkpoints stored in float16, read back as float32.

The package ships its larger pretrained students with float16 weights: half
the bytes in the wheel, and a fine-tuning start that differs from the float32
weights by at most one part in 2,048 of each value (`package_student.py`
records the held-out masked-word loss of both). TensorFlow restores a tensor
only into a variable of its own dtype, so a float16 checkpoint is first
written out again in float32 (`float32_copy`), once, into a cache directory
keyed by the checkpoint's contents; `checkpointing.resolve_checkpoint` does this for every
caller, so fine-tuning, distillation, evaluation and export read a float16
student as they read any run.

Both conversions keep every key of the checkpoint, the object graph and the
string metadata (task, vocabulary fingerprints) included, so the result
restores object by object like the original; only float tensors change.
"""

import hashlib
import os
import tempfile
from typing import Optional

import numpy as np
import tensorflow as tf

from mixvocab_tf.core import run_files

#: Files beside a packaged student's checkpoint that readers look for next
#: to it (`encoder_config_from_run`, the vocabulary, its record).
SIDE_FILES = ("encoder_config.json", "student_vocab.txt", "metrics.json")
#: Where float32 copies go: `$MIXVOCAB_CACHE_DIR`, else the system's temp dir.
CACHE_ENV = "MIXVOCAB_CACHE_DIR"


def float_dtypes(prefix: str) -> set:
  """The dtypes of the checkpoint's float tensors ({tf.float32}, ...)."""
  dtypes = tf.train.load_checkpoint(prefix).get_variable_to_dtype_map()
  return {d for d in dtypes.values() if d.is_floating}


def is_half(prefix: str) -> bool:
  """Whether the checkpoint stores float16 tensors (a packaged student).

  False for a checkpoint whose index cannot be read: what restores it
  (`damaged_checkpoints`) names the damage.
  """
  try:
    return tf.float16 in float_dtypes(prefix)
  except (tf.errors.OpError, ValueError):
    return False


def cast_checkpoint(prefix: str, destination: str, dtype: tf.DType) -> str:
  """Writes `prefix` to `destination` (a prefix) with float tensors in `dtype`.

  Every other tensor (the object graph, string metadata, integer step
  counters) is copied as it is.

  Returns:
    `destination`.
  """
  reader = tf.train.load_checkpoint(prefix)
  names = sorted(reader.get_variable_to_dtype_map())
  tensors = []
  for name in names:
    value = reader.get_tensor(name)
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype,
                                                       np.floating):
      value = value.astype(dtype.as_numpy_dtype)
    tensors.append(tf.constant(value))
  tf.io.gfile.makedirs(os.path.dirname(destination) or ".")
  tf.raw_ops.SaveV2(prefix=destination, tensor_names=names,
                    shape_and_slices=[""] * len(names), tensors=tensors)
  return destination


def _cache_root() -> str:
  return os.environ.get(CACHE_ENV) or os.path.join(tempfile.gettempdir(),
                                                   "mixvocab_tf_cache")


def float32_copy(prefix: str, cache_dir: Optional[str] = None) -> str:
  """A float32 copy of the float16 checkpoint `prefix`, made once.

  The copy is a run directory of its own (`<cache>/float32-<sha>/ckpt-N`
  with a `checkpoint` state file and the side files found beside `prefix`),
  keyed by the sha256 of the checkpoint's index, so a changed checkpoint
  gets a new copy. It is written to a temporary directory and renamed into
  place, so concurrent readers see it whole or not at all.

  Returns:
    The copy's checkpoint prefix.
  """
  with tf.io.gfile.GFile(prefix + ".index", "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()[:16]
  root = cache_dir or _cache_root()
  directory = os.path.join(root, f"float32-{digest}")
  copy = os.path.join(directory, os.path.basename(prefix))
  if tf.io.gfile.exists(copy + ".index"):
    return copy
  tf.io.gfile.makedirs(root)
  staging = tempfile.mkdtemp(prefix=f"float32-{digest}-", dir=root)
  cast_checkpoint(prefix, os.path.join(staging, os.path.basename(prefix)),
                  tf.float32)
  run_files.write_text(
      os.path.join(staging, "checkpoint"),
      f'model_checkpoint_path: "{os.path.basename(prefix)}"\n'
      f'all_model_checkpoint_paths: "{os.path.basename(prefix)}"\n')
  source_dir = os.path.dirname(prefix)
  for name in SIDE_FILES:
    if tf.io.gfile.exists(os.path.join(source_dir, name)):
      run_files.copy(os.path.join(source_dir, name),
                     os.path.join(staging, name))
  try:
    os.rename(staging, directory)
  except OSError:
    # Another process put its copy there first: use that one.
    tf.io.gfile.rmtree(staging)
  return copy
