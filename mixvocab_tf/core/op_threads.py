"""How many TensorFlow operations run at once, and on how many cores each.

TensorFlow's default gives every operation all the cores (its intra-op
pool) and runs ready operations side by side (its inter-op pool). A small
model's operations are too small to split well: the 6 x 96 student's matmuls
on a batch of 64 short queries take microseconds, and splitting each across
the cores costs about what it saves. `Trainer.concurrent_ops = 2` runs two
independent operations at once instead, each on half the cores (on 2 cores:
one core each), which the student's backward pass has plenty of: on a 2-core
AVX-512 CPU its distillation step ran at about 2,000 examples/s against
1,500 with the default, with the same weights bit for bit after 4,906 steps
(docs/PERFORMANCE.md).

A single large operation chain (a teacher's forward pass over a batch)
gains nothing from it and loses its second core, so the code that runs one
(`teacher_forward`) asks `concurrent_ops()` and runs that many batches side
by side.

TensorFlow fixes its thread pools when it runs its first operation, so the
setting must come before it: the trainer binary sets it right after parsing
the gin files (gin may run operations while it builds the Trainer's
arguments); a `Trainer` built in a process whose runtime already started
keeps that process's pools (a warning says so).
"""

import collections
from concurrent import futures
import os
from typing import Callable, Iterable, Iterator, Optional, TypeVar

from absl import logging
import tensorflow as tf

_concurrent_ops = None
_T = TypeVar("_T")
_R = TypeVar("_R")


def cores() -> int:
  """The CPU cores this process may run on (its affinity, else all)."""
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # Not Linux.
    return os.cpu_count() or 1


def set_concurrent_ops(concurrent_ops: Optional[int]) -> bool:
  """Runs up to `concurrent_ops` operations at once, each on cores / that.

  Args:
    concurrent_ops: a positive integer; None: TensorFlow's default (nothing
      is changed).

  Returns:
    Whether the setting is in effect (False: None, or TensorFlow's runtime
    had already started in this process with other pools; a warning says
    so).

  Raises:
    ValueError: `concurrent_ops` is not a positive integer or None.
  """
  global _concurrent_ops
  if concurrent_ops is None:
    return False
  if (isinstance(concurrent_ops, bool) or not isinstance(concurrent_ops, int)
      or concurrent_ops <= 0):
    raise ValueError("concurrent_ops must be a positive integer or None; "
                     f"received {concurrent_ops!r}.")
  if concurrent_ops == _concurrent_ops:
    return True
  intra = max(1, cores() // concurrent_ops)
  try:
    tf.config.threading.set_inter_op_parallelism_threads(concurrent_ops)
    tf.config.threading.set_intra_op_parallelism_threads(intra)
  except RuntimeError:
    logging.warning(
        "concurrent_ops=%d is not applied: TensorFlow's runtime already "
        "runs in this process with its thread pools fixed (inter-op %d, "
        "intra-op %d; 0 is its default). It applies when set before the "
        "first operation, as the trainer binary does.", concurrent_ops,
        tf.config.threading.get_inter_op_parallelism_threads(),
        tf.config.threading.get_intra_op_parallelism_threads())
    return False
  _concurrent_ops = concurrent_ops
  logging.info("%d operations at once, each on %d of %d cores "
               "(Trainer.concurrent_ops).", concurrent_ops, intra, cores())
  return True


def concurrent_ops() -> int:
  """How many operations run at once (1: TensorFlow's default pools)."""
  return _concurrent_ops or 1


def map_side_by_side(fn: Callable[[_T], _R],
                     items: Iterable[_T]) -> Iterator[_R]:
  """`map(fn, items)` with `concurrent_ops()` calls at a time, in order.

  For calls that each run one chain of operations (a model's forward pass
  over a batch): with `concurrent_ops()` above 1 each chain gets only its
  share of the cores, so that many run side by side, in threads (TensorFlow
  releases Python's lock while it computes). At most twice that many
  results wait to be read. With 1, a plain `map`.
  """
  workers = concurrent_ops()
  if workers == 1:
    yield from map(fn, items)
    return
  with futures.ThreadPoolExecutor(workers) as pool:
    pending = collections.deque()
    for item in items:
      pending.append(pool.submit(fn, item))
      if len(pending) > 2 * workers:
        yield pending.popleft().result()
    while pending:
      yield pending.popleft().result()
