r"""Tables and plot of the paper's-question job, from its run or its archive.

  # Archive the small files (curves, best metrics) of a run into the repo:
  python projects/pretraining_recipe/paper_question_table.py \
      projects/pretraining_recipe/paper_question_results \
      --archive_from=runs/paper_question --main_run=runs/quickstart \
      --long_run=runs/pretrained_student
  # Tables (held-out, downstream) and the plot, from the archive:
  python projects/pretraining_recipe/paper_question_table.py \
      projects/pretraining_recipe/paper_question_results \
      --plot=projects/pretraining_recipe/paper_question.png

The archive holds `<budget>_<arm>/mlm_curve.json` (+ `DONE`, the run's
training seconds) per student and `ft_<task>_<budget>_<arm>_seed<N>/best/
metrics.json` per fine-tuning run.
"""

import argparse
import glob
import json
import os
import shutil

from projects.pretraining_recipe import paper_question

# Archive name -> (which run, its step directory).
STUDENTS = {
    "main_stage2": ("main", "stage2"),
    "main_nokd": ("main", "nokd"),
    "main_nokd_cm": ("job", "main_nokd_cm"),
    "long_stage2": ("long", "stage2"),
    "long_nokd": ("job", "long_nokd"),
    "long_nokd_cm": ("job", "long_nokd_cm"),
}


def archive(dest, run_dir, main_run, long_run):
  """Copies curves, DONE times and best metrics into `dest`."""
  roots = {"main": main_run, "long": long_run, "job": run_dir}
  for name, (root, step) in STUDENTS.items():
    for file_name in ("mlm_curve.json", "DONE"):
      source = os.path.join(roots[root], step, file_name)
      if os.path.exists(source):
        os.makedirs(os.path.join(dest, name), exist_ok=True)
        shutil.copy(source, os.path.join(dest, name, file_name))
  for source in glob.glob(os.path.join(run_dir, "ft_*", "best",
                                       "metrics.json")):
    run = source.split(os.sep)[-3]
    done = os.path.join(run_dir, run, "DONE")
    if not os.path.exists(done):  # Still training, or interrupted.
      continue
    os.makedirs(os.path.join(dest, run, "best"), exist_ok=True)
    shutil.copy(source, os.path.join(dest, run, "best", "metrics.json"))
    shutil.copy(done, os.path.join(dest, run, "DONE"))


def read_curves(directory):
  """{archive name: [points]} of the students with a held-out curve."""
  curves = {}
  for name in STUDENTS:
    path = os.path.join(directory, name, "mlm_curve.json")
    if os.path.exists(path):
      with open(path, encoding="utf-8") as f:
        curves[name] = json.load(f)["points"]
  return curves


def _seconds(directory, name):
  path = os.path.join(directory, name, "DONE")
  if not os.path.exists(path):
    return ""
  with open(path, encoding="utf-8") as f:
    return f"{float(f.read().split()[0]):.0f}"


def held_out_table(directory):
  """Markdown: each student's last point beside the floor of its tokens."""
  lines = ["| budget | student | steps | held-out loss | floor | - floor | "
           "accuracy | floor accuracy | train s |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
  for name, points in read_curves(directory).items():
    budget, arm = name.split("_", 1)
    last = points[-1]
    lines.append(
        f"| {budget} | {paper_question.ARM_TITLES[arm]} | {last['step']} | "
        f"{last['loss']:.3f} | {last['unigram_loss']:.3f} | "
        f"{last['loss'] - last['unigram_loss']:+.3f} | "
        f"{100 * last['accuracy']:.1f}% | "
        f"{100 * last['unigram_accuracy']:.1f}% | "
        f"{_seconds(directory, name)} |")
  return "\n".join(lines) + "\n"


def plot(directory, path):
  """Held-out loss against step, one panel per budget, floor dashed."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  curves = read_curves(directory)
  fig, axes = plt.subplots(1, 2, figsize=(11, 4))
  for axis, budget, title in zip(
      axes, ("main", "long"),
      ("Main job's budget (built-in corpus)",
       "Longer run's budget (15 MB corpus)")):
    floor = None
    for name, points in curves.items():
      if not name.startswith(budget + "_"):
        continue
      arm = name.split("_", 1)[1]
      axis.plot([p["step"] for p in points], [p["loss"] for p in points],
                marker="o", markersize=3,
                label=paper_question.ARM_TITLES[arm])
      floor = points[-1]["unigram_loss"]
    if floor is not None:
      axis.axhline(floor, color="gray", linestyle="--", label="unigram floor")
    axis.set_title(title)
    axis.set_xlabel("training step (32 x 64 tokens)")
    axis.set_ylabel("held-out masked-token loss (nats)")
    axis.legend()
  fig.suptitle("Stage II against NoKD, 6 x 96, tuned recipe")
  fig.tight_layout()
  fig.savefig(path, dpi=100)
  plt.close(fig)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("directory", help="the archive (or a run directory)")
  parser.add_argument("--archive_from", default=None,
                      help="the job's run directory to archive from")
  parser.add_argument("--main_run", default=None)
  parser.add_argument("--long_run", default=None)
  parser.add_argument("--plot", default=None, help="also draw the curves")
  args = parser.parse_args()
  if args.archive_from:
    if not (args.main_run and args.long_run):
      parser.error("--archive_from needs --main_run and --long_run.")
    archive(args.directory, args.archive_from, args.main_run, args.long_run)
  print("Held-out masked-token loss (last checkpoint):\n")
  print(held_out_table(args.directory))
  print("Downstream (best validation score of each fine-tuning run, %):\n")
  print(paper_question.results_table(args.directory))
  if args.plot:
    plot(args.directory, args.plot)


if __name__ == "__main__":
  main()
