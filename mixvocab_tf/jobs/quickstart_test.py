"""Tests for the quickstart's report step on a small fake job directory."""

import json
import os

import tensorflow as tf

from mixvocab_tf.core import metrics_io
from mixvocab_tf.jobs import quickstart


def _write_scalars(directory, tag, values):
  writer = tf.summary.create_file_writer(os.path.join(directory, "train"))
  with writer.as_default():
    for step, value in enumerate(values, 1):
      tf.summary.scalar(tag, value, step=10 * step)
  writer.flush()


def _write_snips_run(directory, name, f1s, description):
  best = max(range(len(f1s)), key=lambda i: f1s[i])
  metrics = {"intent_accuracy": 0.9, "slot_f1": f1s[best],
             "slot_f1_argmax": f1s[best] - 0.01}
  metrics_io.write_metrics_json(
      os.path.join(directory, "best", "metrics.json"), metrics,
      parameters=1_200_000, size_bytes=4_800_000, step=100 * (best + 1),
      markdown_row=f"| {name} | 1.20M | 4.8 MB | 90.00 |",
      description=description)
  os.makedirs(os.path.join(directory, "eval"), exist_ok=True)
  with open(os.path.join(directory, "eval", "history.jsonl"), "w") as f:
    for i, f1 in enumerate(f1s):
      f.write(json.dumps({"step": 100 * (i + 1),
                          "metrics": {"slot_f1": f1}}) + "\n")


def test_report_finds_the_runs_and_draws_the_plots(tmp_path):
  job = str(tmp_path)
  _write_scalars(os.path.join(job, "stage2"), "student_mlm/loss", [8, 7, 6])
  _write_scalars(os.path.join(job, "nokd"), "student_mlm/loss", [8.5, 7.5, 7])
  _write_snips_run(os.path.join(job, "distill_stage2"), "student 6x96",
                   [0.5, 0.8, 0.7], "distill_snips: student stage2")
  _write_snips_run(os.path.join(job, "teacher_snips"), "teacher",
                   [0.9, 0.95], "finetune_snips: teacher all-MiniLM-L6-v2")
  with open(os.path.join(job, "stage2", "DONE"), "w"):
    pass
  step_dir = os.path.join(job, "report")
  os.makedirs(step_dir)
  quickstart.report_step(step_dir, job, [])
  report = open(os.path.join(job, "report.md")).read()
  assert "| student 6x96 | 1.20M | 4.80 MB | 90.0 | 80.0 | 79.0 | 200 | 300 |" \
      in report
  assert "| teacher |" in report
  for png in ("pretraining_curves.png", "snips_slot_f1.png",
              "size_vs_accuracy.png"):
    assert os.path.getsize(os.path.join(job, png)) > 10_000
    assert f"({png})" in report
  summary = json.load(open(os.path.join(step_dir, "summary.json")))
  assert set(summary["snips"]) == {"distill_stage2", "teacher_snips"}
