"""The quickstart's report: training curves, size against accuracy, report.md.

Reads only what the runs wrote (TensorBoard event files under each trainer
`model_dir/train`, metrics JSON files, exported files on disk), so every number
in the report comes from an artefact next to it.
"""

import glob
import os

import numpy as np


def read_scalars(log_dir):
  """TensorBoard scalars of a run: {tag: [(step, value), ...]} sorted by step."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  scalars = {}
  for path in sorted(glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        if value.HasField("simple_value"):
          number = value.simple_value
        elif value.HasField("tensor"):
          number = float(tf.make_ndarray(value.tensor))
        else:
          continue
        scalars.setdefault(value.tag, {})[event.step] = number
  return {tag: sorted(points.items()) for tag, points in scalars.items()}


def curve_summary(scalars, tags=None):
  """{tag: (first value, last value)} of the given (default: all) tags."""
  tags = tags or sorted(scalars)
  return {t: (scalars[t][0][1], scalars[t][-1][1]) for t in tags
          if scalars.get(t)}


def plot_training_curves(runs, path, tag_filter=("loss",)):
  """One panel per run: every scalar whose name contains a filter word.

  Args:
    runs: {run name: trainer model_dir}.
    path: PNG to write.
    tag_filter: substrings of the tags to draw.
  """
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  runs = {name: d for name, d in runs.items()
          if glob.glob(os.path.join(d, "train", "events.out.tfevents.*"))}
  if not runs:
    raise FileNotFoundError("No TensorBoard logs to plot.")
  fig, axes = plt.subplots(1, len(runs), figsize=(4.5 * len(runs), 3.4),
                           squeeze=False)
  for ax, (name, model_dir) in zip(axes[0], runs.items()):
    scalars = read_scalars(os.path.join(model_dir, "train"))
    for tag, points in sorted(scalars.items()):
      if any(word in tag for word in tag_filter):
        steps, values = zip(*points)
        ax.plot(steps, values, label=tag)
    ax.set_title(name)
    ax.set_xlabel("step")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=110)
  plt.close(fig)
  return path


def plot_size_vs_accuracy(points, path, metric_name):
  """Scatter of (file size in MB, metric) with a label per point.

  Args:
    points: list of (label, size_bytes, metric value in [0, 1]).
    path: PNG to write.
    metric_name: axis label.
  """
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, ax = plt.subplots(figsize=(5, 3.6))
  for label, size, value in points:
    ax.scatter([size / 1e6], [100 * value])
    ax.annotate(label, (size / 1e6, 100 * value), fontsize=8,
                textcoords="offset points", xytext=(4, 4))
  ax.set_xscale("log")
  ax.set_xlabel("model size (MB, log scale)")
  ax.set_ylabel(metric_name)
  ax.grid(alpha=0.3)
  fig.tight_layout()
  fig.savefig(path, dpi=110)
  plt.close(fig)
  return path


def file_size(path):
  """Bytes of a file, or of all files under a directory."""
  if os.path.isfile(path):
    return os.path.getsize(path)
  return sum(os.path.getsize(os.path.join(root, f))
             for root, _, files in os.walk(path) for f in files)


def format_mb(size_bytes):
  return f"{size_bytes / 1e6:.2f} MB"


def markdown_table(header, rows):
  lines = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
  lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
  return "\n".join(lines)


def percentile_ms(latencies_s, q):
  return float(np.percentile(np.asarray(latencies_s) * 1000.0, q))
