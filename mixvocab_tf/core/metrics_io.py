"""Metric files and table rows: `metrics.json` and markdown report rows.

What the evaluation plumbing writes beside checkpoints (`evaluation.Evaluator`,
`tools/evaluate.py`) and what reports read back: one JSON record per
evaluation, and a markdown row per model (parameters, size, metrics as
percentages).

Files rewritten in place (`metrics.json` after every evaluation) are replaced
in one step (`write_atomically`): a run killed mid-write leaves the previous
file, not a truncated one that the resumed run would fail to read.
"""

import json
import math
import os

import numpy as np
import tensorflow as tf


def _format_count(value):
  if value >= 1e9:
    return f"{value / 1e9:.2f}B"
  if value >= 1e6:
    return f"{value / 1e6:.2f}M"
  if value >= 1e3:
    return f"{value / 1e3:.1f}K"
  return str(int(value))


def _format_size(num_bytes):
  # Decimal megabytes, as model sizes are usually quoted (the paper's "MB").
  if num_bytes >= 1e6:
    return f"{num_bytes / 1e6:.1f} MB"
  return f"{num_bytes / 1e3:.1f} KB"


def markdown_header(metric_names):
  """Header and separator lines matching `markdown_row` for `metric_names`."""
  names = ["model", "params", "size"] + list(metric_names)
  header = "| " + " | ".join(names) + " |"
  # Right-aligned numeric columns.
  separator = "|" + "|".join(["---"] + ["---:"] * (len(names) - 1)) + "|"
  return header + "\n" + separator


def markdown_row(model, params, size_bytes, metrics):
  """One markdown table row: model, parameter count, size, then each metric.

  Metrics are fractions in [0, 1] and are written as percentages with two
  decimals, in the dict's order; a missing value (None or NaN) is written as
  '-'.

  Example: `markdown_row('6x256', 6.2e6, 24.8e6, {'accuracy': 0.8842})` is
  `'| 6x256 | 6.20M | 24.8 MB | 88.42 |'`.
  """
  cells = [str(model), _format_count(params), _format_size(size_bytes)]
  for value in metrics.values():
    if value is None or (isinstance(value, float) and math.isnan(value)):
      cells.append("-")
    else:
      cells.append(f"{100.0 * float(value):.2f}")
  return "| " + " | ".join(cells) + " |"


def _jsonable(value):
  if isinstance(value, dict):
    return {str(k): _jsonable(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [_jsonable(v) for v in value]
  if isinstance(value, np.generic):
    return value.item()
  if isinstance(value, np.ndarray):
    return value.tolist()
  return value


def write_atomically(path, content):
  """Replaces the file at `path` by `content` (str or bytes) in one step.

  The content goes to a temporary file in the same directory, renamed over
  `path` once complete, so readers see the previous file or the new one,
  never a part. The rename is atomic on a local disk; an object store
  (`gs://`) copies then deletes, and an object appears only once complete.
  The parent directory is created. Uses tf.io.gfile so `path` may be on any
  file system TensorFlow reads.

  The temporary name is `.<name>.tmp`, not `<name>.tmp`: ram:// reports a
  path as existing when another file's name starts with it. A temporary left
  by a killed write is removed first, as ram:// would append to it.
  """
  directory, name = os.path.split(path)
  if directory:
    tf.io.gfile.makedirs(directory)
  temporary = os.path.join(directory, f".{name}.tmp")
  try:
    tf.io.gfile.remove(temporary)
  except tf.errors.NotFoundError:
    pass
  with tf.io.gfile.GFile(temporary, "wb" if isinstance(content, bytes)
                         else "w") as f:
    f.write(content)
  tf.io.gfile.rename(temporary, path, overwrite=True)


def write_metrics_json(path, metrics, **extra):
  """Writes `metrics` (and any `extra` fields, e.g. task, step) as sorted JSON.

  NumPy scalars and arrays are converted; the parent directory is created.
  The file is replaced in one step (`write_atomically`): it is rewritten
  after every evaluation, and a kill mid-write must not leave it truncated.
  Returns the dict written.
  """
  if "metrics" in extra:
    raise ValueError(
        "extra fields may not be named 'metrics'; it holds `metrics`.")
  record = _jsonable(dict(extra))
  record["metrics"] = _jsonable(dict(metrics))
  write_atomically(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
  return record


def read_metrics_json(path):
  """Reads what `write_metrics_json` wrote."""
  with tf.io.gfile.GFile(path, "r") as f:
    return json.load(f)
