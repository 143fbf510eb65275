r"""Step-by-step time of two runs of a job, and their ratio.

Every job (the main job, the own-data job) writes each step's wall and CPU
time in `<step>/time.json` (`mixvocab_tf/jobs/step_times.py`). This prints,
for two output directories of the same job (before and after a change, run
back to back on the same machine), each step's wall time in both, after /
before, and the same for the whole job:

  python bench/job_times.py --before=runs/intents_before \
      --after=runs/intents_after

Target (issue 44): the own-data job's total after / before <= 0.50 with the
same validation scores (within +-0.3, read from the reports).
"""

import json

from absl import app
from absl import flags

from mixvocab_tf.jobs import step_times

_BEFORE = flags.DEFINE_string("before", None, "The job's output directory "
                              "before the change.")
_AFTER = flags.DEFINE_string("after", None, "The same job after it.")
flags.mark_flags_as_required(["before", "after"])


def ratios(before_dir: str, after_dir: str):
  """Rows (step, before s, after s, after / before) and the totals' row."""
  before = dict(step_times.records(before_dir))
  after = dict(step_times.records(after_dir))
  rows = []
  for name in list(before) + [n for n in after if n not in before]:
    b = before.get(name, {}).get("wall_seconds")
    a = after.get(name, {}).get("wall_seconds")
    rows.append([name, b, a, round(a / b, 3) if a and b else None])
  total_b = sum(r[1] for r in rows if r[1])
  total_a = sum(r[2] for r in rows if r[2])
  return rows, ["job", round(total_b, 1), round(total_a, 1),
                round(total_a / total_b, 3) if total_b else None]


def main(argv):
  del argv
  rows, total = ratios(_BEFORE.value, _AFTER.value)
  print("| step | before s | after s | after / before |\n|---|---:|---:|---:|")
  for row in rows + [total]:
    print("| " + " | ".join("" if v is None else str(v) for v in row) + " |")
  print(json.dumps({"before": _BEFORE.value, "after": _AFTER.value,
                    "job_ratio": total[3]}))


if __name__ == "__main__":
  app.run(main)
