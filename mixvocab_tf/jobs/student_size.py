"""`STUDENT_SIZE`: the student sizes the own-data job distils into.

The paper's answer to a hard task is a larger student (Zhao et al., EACL
2021, Table 2: 6 x 96, 6 x 192, 6 x 256). The own-data job takes one size
(`'6x96'`, the default, `'6x192'`, `'6x256'`) or `'auto'`: distil the
smallest size first, and go up one size while the student is more than
`gap` points below its teacher on validation and the next size's estimated
time still fits the budget. The export is the smallest size within `gap`
points of the teacher, else the best one; the report has one row per size
tried, so the user can pick another.

A size is offered when a pretrained student of that size is at hand: the
one the package ships (`assets.pretrained_student_dir(size)`), or a run
directory the user gives (`STUDENT`, which then fixes the size).

In the job, each size after the first is a pair of steps (`student_<size>`,
`export_<size>`) with a condition (`should_try`); the report step reads
`size_table` for one row per size and the size it exports.

This module holds the decisions, as functions of what the job's earlier
steps wrote (`best/metrics.json` of each run, the pipeline's `DONE` files),
so that a resumed job decides the same way.
"""

import os
from typing import Dict, List, Optional, Sequence, Tuple

import tensorflow as tf

from mixvocab_tf.core import actions
from mixvocab_tf.core import run_files

#: The paper's 6-layer students, smallest first: size -> encoder preset.
PRESETS = {"6x96": "L6-H96", "6x192": "L6-H192", "6x256": "L6-H256"}
SIZES = tuple(PRESETS)
#: The size the package always ships and the job distils by default.
DEFAULT_SIZE = "6x96"
AUTO = "auto"
#: Default largest gap (points of the validation score) to the teacher that
#: `'auto'` accepts before it tries the next size.
DEFAULT_GAP = 1.5


def hidden_size(size: str) -> int:
  """The hidden size of '6x192' (192)."""
  return int(size.split("x")[1])


def check_size(student_size: str) -> str:
  """`student_size` normalised ('6X192' -> '6x192'), or a ValueError."""
  value = str(student_size).strip().lower()
  if value != AUTO and value not in PRESETS:
    raise ValueError(
        f"STUDENT_SIZE = {student_size!r} is not a size; expected one of "
        f"{', '.join(repr(s) for s in SIZES)} or 'auto' (distil the "
        "smallest first, and go up one size while the student is more than "
        f"{DEFAULT_GAP} points below its teacher).")
  return value


def sizes_to_try(student_size: str, available: Sequence[str]) -> List[str]:
  """The sizes the job may distil, in the order it tries them.

  Args:
    student_size: a size or 'auto' (checked with `check_size`).
    available: sizes with a pretrained student at hand.

  Raises:
    ValueError: the size asked for has no pretrained student.
  """
  value = check_size(student_size)
  if value == AUTO:
    sizes = [s for s in SIZES if s in available]
    if not sizes:
      raise ValueError("STUDENT_SIZE = 'auto' found no pretrained student "
                       "of any size.")
    return sizes
  if value not in available:
    raise ValueError(
        f"STUDENT_SIZE = {value!r}: no pretrained {value} student is at hand "
        f"(offered: {', '.join(available) or 'none'}). Give one with STUDENT "
        "= '<run directory>' or pick an offered size.")
  return [value]


def student_step_name(size: str, first: bool) -> str:
  """The pipeline step of a size: 'student' for the first one tried."""
  return "student" if first else f"student_{size}"


def export_step_name(size: str, first: bool) -> str:
  """The export step of a size: 'export' for the first one tried."""
  return "export" if first else f"export_{size}"


def size_of_run(run_dir: str, default: str) -> str:
  """'<layers>x<hidden>' of a pretrained student run (its
  encoder_config.json), or `default` when it does not say."""
  path = os.path.join(run_dir, "encoder_config.json")
  if not tf.io.gfile.exists(path):
    return default
  config = run_files.read_json(path).get("student_encoder", {})
  if "num_layers" not in config or "hidden_size" not in config:
    return default
  return f"{config['num_layers']}x{config['hidden_size']}"


def should_try(output_dir: str, tried: Sequence[str], size: str, gap: float,
               budget_seconds: Optional[float]) -> bool:
  """The condition of `size`'s steps: every size before it finished (none
  was skipped) and `next_size_decision` says go."""
  for i, earlier in enumerate(tried):
    if step_seconds(os.path.join(
        output_dir, student_step_name(earlier, i == 0))) is None:
      return False
  return next_size_decision(output_dir, tried, size, gap, budget_seconds)[0]


def encoder_train_flops_per_token(size: str, seq_length: int = 32) -> int:
  """Multiply-adds per token of the size's encoder layers (the part that
  grows with the size; embeddings and heads are a small share)."""
  preset = PRESETS[size]
  layers, hidden = (int(p[1:]) for p in preset.split("-"))
  inner = 4 * hidden
  return layers * (4 * hidden * hidden + 2 * hidden * inner +
                   2 * seq_length * hidden)


#: Distillation time of a size relative to the 6x96's, measured by the
#: own-data job on 2 CPU cores (a 13K-query, 128-label set: 6x96 18.8 min /
#: 1,604 CPU-s, 6x192 34.5 min / 3,311 CPU-s; the CPU ratio, 2.06, is
#: taken). The encoder's multiply-adds (3.9x for the 6x192) overstate it:
#: on short texts per-operator costs, the input pipeline and evaluation take
#: a large share. A size not measured scales the largest measured one by
#: the multiply-adds.
MEASURED_TIME_RATIO = {"6x96": 1.0, "6x192": 2.06}


def time_ratio(size: str, last: str) -> float:
  """Estimated distillation time of `size` over that of `last`."""
  def relative(s):
    if s in MEASURED_TIME_RATIO:
      return MEASURED_TIME_RATIO[s]
    # From the largest measured size, by multiply-adds.
    ref = max(MEASURED_TIME_RATIO, key=hidden_size)
    return MEASURED_TIME_RATIO[ref] * (encoder_train_flops_per_token(s) /
                                       encoder_train_flops_per_token(ref))
  return relative(size) / relative(last)


def best_score(run_dir: str) -> Optional[Tuple[str, float]]:
  """(metric, value in points) of a run's best checkpoint, or None."""
  path = os.path.join(run_dir, "best", "metrics.json")
  if not tf.io.gfile.exists(path):
    return None
  record = run_files.read_json(path)
  metric = record["best_metric"]
  return metric, 100.0 * float(record["metrics"][metric])


def step_seconds(step_dir: str) -> Optional[float]:
  """Seconds a finished pipeline step took (its DONE file), or None."""
  path = os.path.join(step_dir, "DONE")
  if not tf.io.gfile.exists(path):
    return None
  return float(run_files.read_text(path).split()[0])


def stopped_early(run_dir: str) -> Optional[Tuple[int, int]]:
  """(step it stopped at, its step budget) of a run its early stop ended
  before its budget (`early_stopping.json`), else None."""
  path = os.path.join(run_dir, actions.EARLY_STOPPING_JSON)
  if not tf.io.gfile.exists(path):
    return None
  record = run_files.read_json(path)
  step, budget = int(record["step"]), int(record["train_steps"])
  return (step, budget) if 0 < step < budget else None


def next_size_decision(output_dir: str, tried: Sequence[str], size: str,
                       gap: float, budget_seconds: Optional[float]
                       ) -> Tuple[bool, str]:
  """Whether 'auto' distils `size` after the sizes `tried` (all finished).

  Returns:
    (run it, the reason, for the log and the report).
  """
  teacher = best_score(os.path.join(output_dir, "teacher"))
  last = tried[-1]
  last_dir = os.path.join(output_dir,
                          student_step_name(last, len(tried) == 1))
  student = best_score(last_dir)
  if teacher is None or student is None:
    raise ValueError(f"'auto' needs the teacher's and the {last} student's "
                     f"best/metrics.json in {output_dir}; run the job again "
                     "to finish those steps first.")
  metric, teacher_value = teacher
  below = teacher_value - student[1]
  if below <= gap:
    return False, (f"the {last} student is {below:.2f} points below the "
                   f"teacher on validation {metric} (within {gap}): {size} "
                   "not tried")
  spent = sum(step_seconds(os.path.join(
      output_dir, student_step_name(s, i == 0))) or 0.0
              for i, s in enumerate(tried))
  last_seconds = step_seconds(last_dir) or 0.0
  estimate = last_seconds * time_ratio(size, last)
  # A student its early stop ended took less than its step budget; the next
  # size may run all of it (a larger student tends to peak later), so the
  # budget is checked against the whole step budget's time.
  stopped = stopped_early(last_dir)
  if stopped:
    estimate *= stopped[1] / stopped[0]
  about = (f"up to about {estimate / 60:.0f} min (its whole step budget; the "
           f"{last} student's early stop ended it at step {stopped[0]:,} of "
           f"{stopped[1]:,})" if stopped else
           f"about {estimate / 60:.0f} min")
  if budget_seconds is not None and spent + estimate > budget_seconds:
    return False, (f"the {last} student is {below:.2f} points below the "
                   f"teacher, but {size} would take {about} more "
                   f"({spent / 60:.0f} of the {budget_seconds / 60:.0f}"
                   " min student budget spent): not tried. To try it, run the "
                   "job again with a larger own_data_steps.size_budget_minutes"
                   " (None: no limit); the finished steps are kept")
  return True, (f"the {last} student is {below:.2f} points below the teacher "
                f"on validation {metric} (more than {gap}): trying {size}, "
                f"{about}")


def choose(scores: Dict[str, float], teacher: float, gap: float) -> str:
  """The size to export: the smallest within `gap` points of the teacher,
  else the best one (the smallest of those tied).

  Args:
    scores: size -> validation score (points) of each size tried.
    teacher: the teacher's validation score (points).
    gap: points.
  """
  ordered = [s for s in SIZES if s in scores]
  if not ordered:
    raise ValueError("No student size was distilled.")
  for size in ordered:
    if teacher - scores[size] <= gap:
      return size
  return max(ordered, key=lambda s: (scores[s], -ordered.index(s)))


def size_table(output_dir: str, sizes: Sequence[str], gap: float,
               budget_seconds: Optional[float]):
  """The report's rows, one per size, and the size to export.

  Returns:
    (rows, chosen, notes): rows of [size, validation score, .tflite MB, p50
    ms, minutes of distillation, 'exported' or ''], the size whose export
    ships (`choose`), and one line per size after the first saying why it
    was or was not tried.
  """
  teacher = best_score(os.path.join(output_dir, "teacher"))
  scores, rows, notes = {}, [], []
  for i, size in enumerate(sizes):
    run_dir = os.path.join(output_dir, student_step_name(size, i == 0))
    seconds = step_seconds(run_dir)
    if i:
      notes.append(next_size_decision_reason(output_dir, sizes[:i], size, gap,
                                             budget_seconds))
    best = best_score(run_dir)
    if seconds is None or best is None:
      continue
    scores[size] = best[1]
    export = run_files.read_json_if_any(os.path.join(
        output_dir, export_step_name(size, i == 0), "summary.json")) or {}
    dynamic = export.get("tflite", {}).get("dynamic", {})
    rows.append([size, f"{best[1]:.1f}",
                 f"{dynamic['size_bytes'] / 1e6:.2f}" if dynamic else "",
                 f"{dynamic['p50_ms']:.2f}" if dynamic else "",
                 f"{seconds / 60:.1f}"])
  # One size (also a user's own student, of a size `choose` does not know):
  # that one.
  chosen = (choose(scores, teacher[1], gap)
            if len(sizes) > 1 and scores and teacher else sizes[0])
  for row in rows:
    row.append("exported" if row[0] == chosen else "")
  return rows, chosen, notes


def next_size_decision_reason(output_dir, tried, size, gap, budget_seconds):
  """`next_size_decision`'s reason, or why it cannot be given yet."""
  try:
    return next_size_decision(output_dir, tried, size, gap,
                              budget_seconds)[1]
  except ValueError:
    return f"the {tried[-1]} student did not run: {size} not tried"
