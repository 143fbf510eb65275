"""Where a job's time goes: wall and CPU time of each step.

The pipeline measures every step it runs (`StepClock`) and writes the
record into the step's directory (`time.json`): wall seconds, and CPU
seconds of the job's own process (an in-process step: vocabulary, held-out
scores, export, report) plus those of the child processes it waited for (a
trainer step), with the step's kind and when it finished. The reports read
the records back into a table (`section`), and the job's last log line
lists them, so a user sees which step to shorten and whether a step used
both cores (CPU / wall near the number of cores) or waited on one.

A resumed job records the time of the steps it ran; a step it skipped as
done keeps the record of the run that finished it.
"""

import dataclasses
import os
import resource
import time
from typing import Dict, List, Optional

import tensorflow as tf

from mixvocab_tf.core import run_files
from mixvocab_tf.jobs import report

FILE = "time.json"


def children_cpu() -> float:
  """CPU seconds of this process's children it has waited for."""
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


@dataclasses.dataclass
class StepClock:
  """Measures one step: `start()` before it, `stop()` after it."""
  wall_start: float = 0.0
  cpu_start: float = 0.0
  children_start: float = 0.0

  def start(self) -> "StepClock":
    self.wall_start = time.time()
    self.cpu_start = time.process_time()
    self.children_start = children_cpu()
    return self

  def cpu_seconds(self) -> float:
    """CPU time since `start()`: this process's and its waited-for
    children's."""
    own = time.process_time() - self.cpu_start
    return own + children_cpu() - self.children_start

  def stop(self, kind: str,
           cpu_seconds: Optional[float] = None) -> Dict[str, float]:
    """The record of the step since `start()`; `cpu_seconds` replaces
    `cpu_seconds()` when the caller knows the step's own share (a step
    that ran beside another)."""
    if cpu_seconds is None:
      cpu_seconds = self.cpu_seconds()
    return {"kind": kind,
            "wall_seconds": round(time.time() - self.wall_start, 2),
            "cpu_seconds": round(cpu_seconds, 2),
            "started": round(self.wall_start, 3),
            "finished": round(time.time(), 3)}


def write(step_dir: str, record: Dict[str, float]) -> None:
  run_files.write_json(os.path.join(step_dir, FILE), record, indent=2)


def read(step_dir: str) -> Optional[Dict[str, float]]:
  path = os.path.join(step_dir, FILE)
  if not tf.io.gfile.exists(path):
    return None
  return run_files.read_json(path)


def records(output_dir: str) -> List[tuple]:
  """(step name, record) of every measured step under `output_dir`, in the
  order the steps finished."""
  found = []
  for name in sorted(tf.io.gfile.listdir(output_dir)):
    name = name.rstrip("/")
    step_dir = os.path.join(output_dir, name)
    if tf.io.gfile.isdir(step_dir):
      record = read(step_dir)
      if record is not None:
        found.append((name, record))
  return sorted(found, key=lambda item: item[1].get("finished", 0.0))


def _duration(seconds: float) -> str:
  return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def table_rows(output_dir: str) -> List[List[str]]:
  """Rows of step, kind, wall, CPU, CPU / wall and share of the job's wall
  time, then a total row; [] when no step was measured."""
  found = records(output_dir)
  if not found:
    return []
  wall = sum(r["wall_seconds"] for _, r in found)
  cpu = sum(r["cpu_seconds"] for _, r in found)
  rows = []
  for name, record in found:
    step_wall = record["wall_seconds"]
    rows.append([name, record.get("kind", ""), _duration(step_wall),
                 _duration(record["cpu_seconds"]),
                 f"{record['cpu_seconds'] / max(step_wall, 1e-9):.2f}",
                 f"{100 * step_wall / max(wall, 1e-9):.0f}%"])
  rows.append(["**all steps above**", "", _duration(wall), _duration(cpu),
               f"{cpu / max(wall, 1e-9):.2f}", "100%"])
  span = _span(found)
  if span is not None and span < wall - 1:
    rows.append(["**first start to last finish** (steps ran beside "
                 "others)", "", _duration(span), _duration(cpu),
                 f"{cpu / max(span, 1e-9):.2f}", ""])
  return rows


def _span(found) -> Optional[float]:
  """Seconds from the first step's start to the last one's finish, when
  every record has its start (records before 2026-12-03 do not)."""
  if not all("started" in record for _, record in found):
    return None
  return (max(r["finished"] for _, r in found) -
          min(r["started"] for _, r in found))


HEADER = ["step", "kind", "wall", "CPU", "CPU / wall", "share of wall"]


def section(output_dir: str) -> List[str]:
  """The reports' "Time" section (markdown lines), or [] without records."""
  rows = table_rows(output_dir)
  if not rows:
    return []
  return [
      "## Time", "",
      report.markdown_table(HEADER, rows), "",
      f"Wall and CPU time of each step, in the order they finished, on "
      f"this machine ({os.cpu_count()} cores seen); CPU counts the job's "
      "process and the trainer processes it started. Steps that ran beside "
      "others overlap, so their wall times add up to more than the job's. "
      "A step that a rerun "
      "skipped as done keeps the time of the run that did it. This report "
      "itself is not in the table.", ""]


def log_summary(output_dir: str) -> str:
  """One line per measured step, for the job's last log lines."""
  return "\n".join(
      f"  {name:<24} {record['wall_seconds']:>8.0f} s wall "
      f"{record['cpu_seconds']:>8.0f} s CPU"
      for name, record in records(output_dir))
