r"""Prints the scaling study's tables and writes its plots from a run directory.

Reads what `projects/scaling/scaling_cpu.gin` leaves in the directory
(finished or not): held-out masked-word curves (`<arm>_b<B>/mlm_curve.json`),
fine-tuning results (`ft_<task>_<arm>_b<B>_seed<S>/best/metrics.json`), step
times (`DONE`) and the distillation arm's TensorBoard scalars
(`stage2_distill_b<B>/train/`). From the repository root:

  python projects/scaling/scaling_table.py runs/scaling
  python projects/scaling/scaling_table.py runs/scaling \
      --output_dir=projects/scaling   # md + PNGs
  # Also keep the small files the tables read (a few hundred KB), so that
  # the tables can be made again without the run directory:
  python projects/scaling/scaling_table.py runs/scaling \
      --output_dir=projects/scaling --archive_dir=projects/scaling/scaling_runs
  # The committed tables, again, from that archive:
  python projects/scaling/scaling_table.py projects/scaling/scaling_runs \
      --output_dir=projects/scaling
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

from projects.scaling import scaling  # pylint: disable=wrong-import-position

_OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Write scaling.md and the PNGs here (default: the "
    "run directory).")

_ARCHIVE_DIR = flags.DEFINE_string(
    "archive_dir", None, "Also copy the files the tables read (DONE, "
    "mlm_curve.json, best/metrics.json, the distillation arm's scalars) "
    "here, in the run directory's layout.")


def main(argv):
  if len(argv) != 2:
    sys.exit("usage: python projects/scaling/scaling_table.py RUN_DIR "
             "[--output_dir=DIR] [--archive_dir=DIR]")
  run_dir = argv[1]
  if not os.path.isdir(run_dir):
    sys.exit(f"No run directory {run_dir}.")
  output_dir = _OUTPUT_DIR.value or run_dir
  os.makedirs(output_dir, exist_ok=True)
  if _ARCHIVE_DIR.value:
    copied = scaling.archive_results(run_dir, _ARCHIVE_DIR.value)
    print(f"archived {len(copied)} files in {_ARCHIVE_DIR.value}")
  table = scaling.results_markdown(run_dir)
  with open(os.path.join(output_dir, scaling.RESULTS_FILE), "w",
            encoding="utf-8") as f:
    f.write(table)
  written = scaling.plot_results(
      run_dir, os.path.join(output_dir, scaling.GAP_PLOT),
      os.path.join(output_dir, scaling.MLM_PLOT))
  print(table, end="")
  print("\nwrote " + ", ".join([os.path.join(output_dir,
                                             scaling.RESULTS_FILE)] + written))


if __name__ == "__main__":
  app.run(main)
