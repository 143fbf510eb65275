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


def _report(job):
  """Runs the report step on the job's directory; returns report.md's text."""
  step_dir = os.path.join(job, "report")
  os.makedirs(step_dir)
  quickstart.report_step(step_dir, job, {})
  with open(os.path.join(job, "report.md")) as f:
    return f.read()


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
  report = _report(job)
  assert "| student 6x96 | 1.20M | 4.80 MB | 90.0 | 80.0 | 79.0 | 200 | 300 |" \
      in report
  assert "| teacher |" in report
  for png in ("pretraining_curves.png", "snips_slot_f1.png",
              "size_vs_accuracy.png"):
    assert os.path.getsize(os.path.join(job, png)) > 10_000
    assert f"({png})" in report
  summary = json.load(open(os.path.join(job, "report", "summary.json")))
  assert set(summary["snips"]) == {"distill_stage2", "teacher_snips"}


def _write_curve(directory, losses, floor=6.5):
  os.makedirs(directory, exist_ok=True)
  points = [{"step": 100 * (i + 1), "tokens": 204_800 * (i + 1),
             "loss": loss, "accuracy": 0.05 * (i + 1), "masked_tokens": 900,
             "unigram_loss": floor, "unigram_accuracy": 0.04}
            for i, loss in enumerate(losses)]
  with open(os.path.join(directory, "mlm_curve.json"), "w") as f:
    json.dump({"floor": {"loss": floor, "accuracy": 0.04},
               "points": points}, f)
  with open(os.path.join(directory, "DONE"), "w"):
    pass


def test_report_shows_held_out_pretraining_beside_the_floor(tmp_path):
  job = str(tmp_path)
  _write_curve(os.path.join(job, "stage2"), [7.5, 6.4, 5.9])
  _write_curve(os.path.join(job, "nokd"), [7.9, 6.9, 6.2])
  _write_snips_run(os.path.join(job, "distill_stage2"), "student 6x96",
                   [0.5, 0.8], "distill_snips: student stage2")
  report = _report(job)
  assert "## Pretraining on held-out text" in report
  # Last point: loss, floor, their difference, accuracy and floor accuracy.
  assert "| stage2 | 300 | 0.61M | 5.900 | 6.500 | -0.600 | 15.0 | 4.0 |" \
      in report
  assert "| nokd | 300 | 0.61M | 6.200 | 6.500 | -0.300 | 15.0 | 4.0 |" \
      in report
  assert os.path.getsize(os.path.join(job, "pretraining_curves.png")) > 10_000


def test_report_of_the_main_job_without_its_nokd_baseline(tmp_path):
  job = str(tmp_path)
  _write_curve(os.path.join(job, "stage2"), [7.5, 6.4, 5.9])
  _write_snips_run(os.path.join(job, "snips_stage2"), "stage2 6x96",
                   [0.5, 0.8], "distill_snips: student stage2")
  report = _report(job)
  assert "| stage2 | 300 | 0.61M | 5.900 | 6.500 | -0.600 | 15.0 | 4.0 |" \
      in report
  assert "nokd" not in report.lower()
  assert "| stage2 6x96 | 1.20M | 4.80 MB | 90.0 | 80.0 | 79.0 | 200 | 200 |" \
      in report
