"""Summarises SNIPS fine-tuning / distillation runs: best valid metrics, curve, time.

  python tools/snips_runs_table.py RUN_DIR [RUN_DIR ...] [--curve]

Reads each run's eval/history.jsonl and its log (RUN_DIR.log or RUN_DIR/log.txt):
best slot F1 (and the intent accuracy there), the step of the best, the
training wall time ("Trained steps a-b in H:MM:SS", evaluations included) and
the median seconds per step over the logged windows (evaluations excluded).
"""

import json
import os
import re
import statistics
import sys


def _log_text(run):
  for path in (run.rstrip("/") + ".log", os.path.join(run, "log.txt")):
    if os.path.exists(path):
      with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()
  return ""


def summarize(run):
  history = os.path.join(run, "eval", "history.jsonl")
  evals = []
  if os.path.exists(history):
    with open(history, encoding="utf-8") as f:
      for line in f:
        record = json.loads(line)
        m = record["metrics"]
        evals.append((record["step"], m.get("intent_accuracy"),
                      m.get("slot_f1")))
  text = _log_text(run)
  batch = re.search(r"global batch (\d+)", text)
  batch = int(batch.group(1)) if batch else 64
  rates = [float(x) for x in re.findall(r"\| ([\d.]+) ex/s", text)]
  seconds_per_step = (batch / statistics.median(rates[1:] or rates)
                      if rates else float("nan"))
  trained = re.findall(r"Trained steps (\d+)-(\d+) in (\d+):(\d+):(\d+)", text)
  wall = (sum(int(h) * 3600 + int(m) * 60 + int(s) for _, _, h, m, s in trained)
          if trained else None)
  cache = re.search(r"Computed the teacher outputs of \d+ queries in ([\d.]+) s",
                    text)
  best = max(evals, key=lambda e: (e[2], e[0])) if evals else None
  return dict(run=os.path.basename(run.rstrip("/")), evals=evals, best=best,
              last_step=evals[-1][0] if evals else None,
              seconds_per_step=seconds_per_step, wall=wall,
              cache_seconds=float(cache.group(1)) if cache else None)


def main(argv):
  curve = "--curve" in argv
  runs = [a for a in argv if not a.startswith("--")]
  print("| run | steps | s/step (median) | train wall s | best intent | best slot F1 | at step |")
  print("|---|---|---|---|---|---|---|")
  for run in runs:
    s = summarize(run)
    b = s["best"]
    print(f"| {s['run']} | {s['last_step']} | {s['seconds_per_step']:.3f} | "
          f"{s['wall']} | {100 * b[1]:.2f} | {100 * b[2]:.2f} | {b[0]} |"
          if b else f"| {s['run']} | - | {s['seconds_per_step']:.3f} | "
          f"{s['wall']} | - | - | - |")
  if curve:
    for run in runs:
      s = summarize(run)
      print(f"\n{s['run']}: " + ", ".join(
          f"{st}: {100 * i:.1f}/{100 * f:.1f}" for st, i, f in s["evals"]))
      if s["cache_seconds"]:
        print(f"  teacher cache built in {s['cache_seconds']} s")


if __name__ == "__main__":
  main(sys.argv[1:])
