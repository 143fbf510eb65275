r"""Prints the scaling study's tables and writes its plots from a run directory.

Reads what `gin_configs/scaling_cpu.gin` leaves in the directory (finished or
not): held-out masked-word curves (`<arm>_b<B>/mlm_curve.json`), fine-tuning
results (`ft_<task>_<arm>_b<B>_seed<S>/best/metrics.json`) and step times
(`DONE`).

  python tools/scaling_table.py runs/scaling
  python tools/scaling_table.py runs/scaling --output_dir=docs   # md + PNGs
"""

import os
import sys

from absl import app
from absl import flags

from mixvocab_tf.jobs import scaling

_OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", None, "Write scaling.md and the PNGs here (default: the "
    "run directory).")


def main(argv):
  if len(argv) != 2:
    sys.exit("usage: python tools/scaling_table.py RUN_DIR [--output_dir=DIR]")
  run_dir = argv[1]
  if not os.path.isdir(run_dir):
    sys.exit(f"No run directory {run_dir}.")
  output_dir = _OUTPUT_DIR.value or run_dir
  os.makedirs(output_dir, exist_ok=True)
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
