r"""Prints the replication's results table from a run directory.

Reads every fine-tuning run `DIR/ft_<task>_<method>_<preset>_seed<N>/best/
metrics.json` that `projects/scaling/replication_cpu.gin` made (finished or not)
and prints one markdown row per method and student size: parameters, fp32
size, and mean ± sample standard deviation over seeds per task metric.

  python projects/scaling/results_table.py runs/quickstart
  python projects/scaling/results_table.py runs/quickstart --output=results.md
  python projects/scaling/results_table.py runs/quickstart --per_seed  # all
"""

import os
import sys

from absl import app
from absl import flags

# Run as a script, the repository root (for `projects`) is not on the path.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if _ROOT not in sys.path:
  sys.path.insert(0, _ROOT)

from projects.scaling import replication  # pylint: disable=wrong-import-position

_OUTPUT = flags.DEFINE_string("output", None, "Also write the table here.")
_PER_SEED = flags.DEFINE_bool(
    "per_seed", False, "Print each run's value (one column per seed) instead "
    "of mean ± std.")


def main(argv):
  if len(argv) != 2:
    sys.exit("usage: python projects/scaling/results_table.py RUN_DIR "
             "[--per_seed] [--output=FILE]")
  if _PER_SEED.value:
    table = replication.per_seed_table(argv[1])
  else:
    table = replication.results_table(argv[1])
  if table.count("\n") <= 2:
    sys.exit(f"No finished fine-tuning runs (ft_*/best/metrics.json) under "
             f"{argv[1]}.")
  print(table, end="")
  if _OUTPUT.value:
    with open(_OUTPUT.value, "w", encoding="utf-8") as f:
      f.write(table)


if __name__ == "__main__":
  app.run(main)
