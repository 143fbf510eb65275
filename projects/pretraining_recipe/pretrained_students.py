r"""The shipped pretrained students side by side: held-out curves and a table.

  python projects/pretraining_recipe/pretrained_students.py \
      [--plot=projects/pretraining_recipe/results/pretrained_students.png]

Reads each size's archived curve (`results/<folder>/curves.json`: the
stage II run's `mlm_curve.json`, the masked-token loss of every kept
checkpoint on the same held-out batches of the development corpus) and the
packaged student's `metrics.json` in the package. Prints one row per size:
steps, tokens, final held-out loss and accuracy beside the unigram floor of
the same tokens, the float16 weights' loss where the package stores float16,
and the pretraining time the size's `timing` record gives. The plot draws
loss against training tokens, the floor dashed.
"""

import argparse
import json
import os

from mixvocab_tf import assets
from mixvocab_tf.jobs import report

_RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "results")
#: size -> archived folder under results/.
FOLDERS = {"6x96": "pretrained_student_36k",
           "6x192": "pretrained_student_6x192"}


def _read(path):
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def read_sizes(results_dir=_RESULTS):
  """[{size, curve, metrics, timing}] of each size with an archived curve."""
  sizes = []
  for size, folder in FOLDERS.items():
    path = os.path.join(results_dir, folder, "curves.json")
    if not os.path.exists(path):
      continue
    package = assets.pretrained_student_dir(size)
    metrics = (_read(os.path.join(package, "metrics.json"))
               if package else {})
    timing_path = os.path.join(results_dir, folder, "timing.json")
    sizes.append({"size": size, "curve": _read(path)["stage2"],
                  "metrics": metrics,
                  "timing": (_read(timing_path)
                             if os.path.exists(timing_path) else {})})
  return sizes


def table(sizes):
  """Markdown rows, one per size."""
  lines = [
      "| size | steps | tokens | held-out loss | float16 weights | unigram "
      "floor | below the floor | accuracy | floor accuracy | pretraining "
      "time |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
  for entry in sizes:
    last = entry["curve"]["points"][-1]
    half = entry["metrics"].get("heldout_float16")
    half_loss = f"{half['loss']:.3f}" if half else "(stored float32)"
    timing = entry["timing"].get("summary", "")
    lines.append(
        f"| {entry['size']} | {last['step']:,} | {last['tokens'] / 1e6:.1f}M "
        f"| {last['loss']:.3f} | {half_loss} | {last['unigram_loss']:.3f} "
        f"| {last['loss'] - last['unigram_loss']:+.3f} "
        f"| {100 * last['accuracy']:.1f}% "
        f"| {100 * last['unigram_accuracy']:.1f}% | {timing} |")
  return "\n".join(lines)


def plot(sizes, path):
  floor = sizes[0]["curve"]["points"][-1]["unigram_loss"]
  return report.plot_lines(
      {f"{e['size']} stage II": [(p["tokens"] / 1e6, p["loss"])
                                 for p in e["curve"]["points"]]
       for e in sizes},
      path, "training tokens (millions)", "held-out masked-token loss (nats)",
      "The pretrained students on held-out blocks of the corpus",
      hlines={"unigram floor (word frequencies)": floor})


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--plot", default=None, help="PNG to write.")
  args = parser.parse_args()
  sizes = read_sizes()
  print(table(sizes))
  if args.plot:
    print("wrote", plot(sizes, args.plot))


if __name__ == "__main__":
  main()
