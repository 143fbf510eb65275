r"""The sweep's table: each arm's held-out loss and accuracy beside the floor.

  python projects/pretraining_recipe/table.py runs/sweep [--plot=curves.png]

Reads `<arm>/mlm_curve.json` (the `heldout_mlm` step's output) and
`<arm>/DONE` (the arm's training wall time; an arm resumed after an
interruption records only its last part) of every arm in the directory: a
sweep's run directory, or `projects/pretraining_recipe/results`, where the
finished arms' small files are archived.
"""

import argparse
import json
import os


def read_arms(sweep_dir):
  """[{name, steps, tokens, loss, accuracy, floor, floor_accuracy, best_loss,
  seconds}] of every arm with a held-out curve, best final loss first."""
  arms = []
  for name in sorted(os.listdir(sweep_dir)):
    path = os.path.join(sweep_dir, name, "mlm_curve.json")
    if not os.path.exists(path):
      continue
    with open(path, encoding="utf-8") as f:
      curve = json.load(f)
    last = curve["points"][-1]
    seconds = None
    done = os.path.join(sweep_dir, name, "DONE")
    if os.path.exists(done):
      with open(done, encoding="utf-8") as f:
        seconds = float(f.read().split()[0])
    arms.append(dict(
        name=name, steps=last["step"], tokens=last["tokens"],
        loss=last["loss"], accuracy=last["accuracy"],
        floor=last["unigram_loss"], floor_accuracy=last["unigram_accuracy"],
        best_loss=min(p["loss"] for p in curve["points"]), seconds=seconds,
        curve=[(p["step"], p["loss"]) for p in curve["points"]]))
  return sorted(arms, key=lambda a: a["loss"])


def markdown(arms):
  lines = ["| arm | steps | tokens | held-out loss | - floor | accuracy | "
           "floor accuracy | train s |", "|---|---:|---:|---:|---:|---:|---:|"
           "---:|"]
  for a in arms:
    seconds = f"{a['seconds']:.0f}" if a["seconds"] else ""
    lines.append(
        f"| {a['name']} | {a['steps']} | {a['tokens'] / 1e6:.1f}M | "
        f"{a['loss']:.3f} | {a['loss'] - a['floor']:+.3f} | "
        f"{100 * a['accuracy']:.1f}% | {100 * a['floor_accuracy']:.1f}% | "
        f"{seconds} |")
  return "\n".join(lines)


def plot(arms, path):
  """Held-out loss against training step, one line per student arm."""
  from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
  students = [a for a in arms if not a["name"].startswith("s1_")]
  return report.plot_lines(
      {a["name"]: a["curve"] for a in students}, path, "training step",
      "held-out masked-token loss (nats)",
      "Recipe sweep, 6 x 96 students, beside the unigram floor",
      hlines={"unigram floor": students[0]["floor"]} if students else None)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("sweep_dir")
  parser.add_argument("--plot", default=None, help="Also draw the curves.")
  args = parser.parse_args()
  arms = read_arms(args.sweep_dir)
  print(markdown(arms))
  if args.plot:
    plot(arms, args.plot)


if __name__ == "__main__":
  main()
