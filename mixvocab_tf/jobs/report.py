"""The quickstart's report: training curves, size against accuracy, report.md.

Reads only what the runs wrote (TensorBoard event files under each trainer
`model_dir/train`, metrics JSON files, exported files on disk), so every number
in the report comes from an artefact next to it. Runs, plots and exports may
be on any file system TensorFlow reads (`gs://`): files go through
`tf.io.gfile`.
"""

import io
import json
import math
import os

import numpy as np
import tensorflow as tf

from mixvocab_tf.core import run_files

#: Published SNIPS rows (Zhao et al., EACL 2021, Table 3): label,
#: parameters, intent accuracy, slot F1 (test set; ours are on valid).
PAPER_SNIPS_ROWS = (
    ("paper: mixed-vocab 6x96", 1.2e6, 0.989, 0.928),
    ("paper: BERT-base", 109e6, 0.986, 0.970),
)


def read_scalars(log_dir):
  """TensorBoard scalars of a run: {tag: [(step, value), ...]} sorted by step."""
  scalars = {}
  for path in sorted(tf.io.gfile.glob(
      os.path.join(log_dir, "events.out.tfevents.*"))):
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


def read_history(model_dir):
  """[(step, metrics)] of a run's evaluations (`eval/history.jsonl`)."""
  path = os.path.join(model_dir, "eval", "history.jsonl")
  if not run_files.is_file(path):
    return []
  records = [json.loads(line) for line in run_files.read_text(path).split("\n")
             if line.strip()]
  # A resumed run appends again from its checkpoint: the last record of a
  # step wins.
  by_step = {r["step"]: r["metrics"] for r in records}
  return sorted(by_step.items())


def _pyplot():
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  return plt


def _save(fig, path):
  """Writes a figure to `path` (any file system) in its extension's format."""
  buffer = io.BytesIO()
  fig.savefig(buffer, format=os.path.splitext(path)[1][1:] or None, dpi=110)
  run_files.write_atomically(path, buffer.getvalue())


def plot_lines(series, path, xlabel, ylabel, title, percent=False,
               hlines=None):
  """Several runs' curves on one axis, so they compare at a glance.

  Args:
    series: {label: [(x, y), ...]}; empty series are left out.
    path: PNG to write.
    xlabel, ylabel, title: the axis labels and the title.
    percent: y values are fractions in [0, 1], drawn as percentages.
    hlines: {label: y} drawn as dashed horizontal lines (a floor or a
      ceiling beside the curves).

  Returns:
    `path`, or None when no series has a point.
  """
  series = {k: v for k, v in series.items() if v}
  if not series:
    return None
  plt = _pyplot()
  fig, ax = plt.subplots(figsize=(6.4, 3.8))
  for label, points in series.items():
    xs, ys = zip(*points)
    ys = [100 * y for y in ys] if percent else ys
    ax.plot(xs, ys, marker="o" if len(xs) < 30 else None, markersize=3,
            label=label)
  for index, (label, y) in enumerate(sorted((hlines or {}).items())):
    ax.axhline(100 * y if percent else y, linestyle="--", linewidth=1,
               color=f"C{len(series) + index}", label=label)
  ax.set_xlabel(xlabel)
  ax.set_ylabel(ylabel)
  ax.set_title(title, fontsize=10)
  ax.grid(alpha=0.3)
  ax.legend(fontsize=8)
  fig.tight_layout()
  _save(fig, path)
  plt.close(fig)
  return path


def _honest_limits(values):
  """A y range ending at 100 and starting at a round value below the data.

  Accuracies cluster near the top, so the axis does not start at 0 (the
  points would merge); it starts at the multiple of 10 at least 5 points
  below the lowest value, and the axis label says where it starts.
  """
  low = min(values) - 5
  return max(0.0, 10 * math.floor(low / 10)), 100.0


def plot_size_vs_accuracy_panels(points, path, title):
  """Size against intent accuracy and slot F1, one marker and legend entry each.

  Labels are in the legend (with the values), not on the points: several
  points share a size or a score, and labels there would overlap.

  Args:
    points: list of dicts with `label`, `size_bytes`, `intent_accuracy` and
      `slot_f1` (fractions; None leaves the point out of that panel) and an
      optional `kind` ('ours', 'paper', 'teacher') that picks the marker.
    path: PNG to write.
    title: the figure's title (say which split).
  """
  plt = _pyplot()
  markers = {"ours": "o", "tflite": "s", "teacher": "^", "paper": "*"}
  fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
  cmap = plt.get_cmap("tab10")
  for ax, metric, name in ((axes[0], "intent_accuracy", "intent accuracy"),
                           (axes[1], "slot_f1", "slot F1")):
    values = []
    for i, point in enumerate(points):
      value = point.get(metric)
      if value is None:
        continue
      values.append(100 * value)
      ax.scatter([point["size_bytes"] / 1e6], [100 * value], s=60,
                 marker=markers.get(point.get("kind"), "o"),
                 color=cmap(i % 10), edgecolor="black", linewidth=0.5,
                 label=f"{point['label']}: {100 * value:.1f}",
                 zorder=3)
    if values:
      low, high = _honest_limits(values)
      ax.set_ylim(low, high + 1)
      ax.set_ylabel(f"{name} (%, axis from {low:.0f})")
    ax.set_xscale("log")
    ax.set_xlabel("model file size (MB, log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
  fig.suptitle(title, fontsize=10)
  fig.tight_layout()
  _save(fig, path)
  plt.close(fig)
  return path


def format_mb(size_bytes):
  return f"{size_bytes / 1e6:.2f} MB"


def markdown_table(header, rows):
  lines = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
  lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
  return "\n".join(lines)


def percentile_ms(latencies_s, q):
  return float(np.percentile(np.asarray(latencies_s) * 1000.0, q))
