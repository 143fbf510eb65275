"""The tf.distribute strategy of a run, built once from the binary's flags.

`default` is one device (CPU, or one GPU); `mirrored` all local GPUs (or CPUs
named in `devices`); `multi_worker` reads the cluster from `TF_CONFIG`;
`tpu` connects to a TPU by address (a name, `grpc://host:port`, or "local").
Only `train.py` calls this; tasks and the trainer receive the strategy.
"""

import json
import os
from typing import Optional, Sequence

from absl import logging
import tensorflow as tf

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")


def build_strategy(name: str = "default",
                   tpu_address: Optional[str] = None,
                   devices: Optional[Sequence[str]] = None
                  ) -> tf.distribute.Strategy:
  """Builds the strategy `name`; call once per process, before any model.

  Args:
    name: one of `STRATEGIES`.
    tpu_address: the TPU for "tpu" (required there).
    devices: devices for "mirrored" (default: all GPUs, else the CPU).

  Returns:
    The strategy.
  """
  if name not in STRATEGIES:
    raise ValueError(f"strategy must be one of {STRATEGIES}; received "
                     f"{name!r}.")
  if name == "default":
    return tf.distribute.get_strategy()
  if name == "mirrored":
    return tf.distribute.MirroredStrategy(devices=devices)
  if name == "multi_worker":
    if "TF_CONFIG" not in os.environ:
      raise ValueError(
          "strategy 'multi_worker' reads the cluster from the TF_CONFIG "
          "environment variable, which is not set; e.g. TF_CONFIG='{\"cluster\":"
          " {\"worker\": [\"host1:2222\", \"host2:2222\"]}, \"task\": "
          "{\"type\": \"worker\", \"index\": 0}}'.")
    try:
      json.loads(os.environ["TF_CONFIG"])
    except json.JSONDecodeError as e:
      raise ValueError(f"TF_CONFIG is not valid JSON: {e}") from e
    return tf.distribute.MultiWorkerMirroredStrategy()
  if not tpu_address:
    raise ValueError("strategy 'tpu' needs --tpu=ADDRESS (a TPU name, "
                     "grpc://host:port, or 'local').")
  resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
      tpu="" if tpu_address == "local" else tpu_address)
  if tpu_address != "local":
    tf.config.experimental_connect_to_cluster(resolver)
  tf.tpu.experimental.initialize_tpu_system(resolver)
  logging.info("TPU devices: %s", tf.config.list_logical_devices("TPU"))
  return tf.distribute.TPUStrategy(resolver)


def worker_info(strategy: tf.distribute.Strategy):
  """(worker_index, num_workers) of this process in `strategy`'s cluster."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or (
      resolver is None or not resolver.cluster_spec().as_dict()):
    return 0, 1
  spec = resolver.cluster_spec().as_dict()
  chiefs, workers = len(spec.get("chief", [])), len(spec.get("worker", []))
  if resolver.task_type == "chief":
    return 0, chiefs + workers
  # With a chief, the chief is worker 0 and the "worker" tasks follow it.
  return (resolver.task_id or 0) + chiefs, chiefs + workers


def is_tpu(strategy: tf.distribute.Strategy) -> bool:
  return isinstance(strategy, (tf.distribute.TPUStrategy,
                               tf.distribute.experimental.TPUStrategy))
