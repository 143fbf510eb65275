"""Tests of the own-data job's student-size decisions."""

import json
import os

import pytest

from mixvocab_tf.jobs import student_size


def _best(run_dir, metric, value):
  os.makedirs(os.path.join(run_dir, "best"), exist_ok=True)
  with open(os.path.join(run_dir, "best", "metrics.json"), "w") as f:
    json.dump({"best_metric": metric, "metrics": {metric: value}}, f)


def _done(step_dir, seconds):
  os.makedirs(step_dir, exist_ok=True)
  with open(os.path.join(step_dir, "DONE"), "w") as f:
    f.write(f"{seconds:.1f} seconds\n")


def test_check_size_accepts_sizes_and_auto_and_names_them_otherwise():
  assert student_size.check_size("6X192") == "6x192"
  assert student_size.check_size(" auto ") == "auto"
  with pytest.raises(ValueError, match="'6x96', '6x192', '6x256' or 'auto'"):
    student_size.check_size("6x128")


def test_sizes_to_try_keeps_the_available_ones_smallest_first():
  assert student_size.sizes_to_try("auto", ["6x256", "6x96"]) == [
      "6x96", "6x256"]
  assert student_size.sizes_to_try("6x96", ["6x96"]) == ["6x96"]
  with pytest.raises(ValueError, match="no pretrained 6x192 student"):
    student_size.sizes_to_try("6x192", ["6x96"])


def test_next_size_runs_only_while_the_gap_is_larger_than_allowed(tmp_path):
  out = str(tmp_path)
  _best(os.path.join(out, "teacher"), "accuracy", 0.892)
  _best(os.path.join(out, "student"), "accuracy", 0.813)
  _done(os.path.join(out, "student"), 600)
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                None)
  assert run and "7.90 points below" in reason and "trying 6x192" in reason
  _best(os.path.join(out, "student"), "accuracy", 0.880)
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                None)
  assert not run and "within 1.5" in reason


def test_next_size_respects_the_time_budget(tmp_path):
  out = str(tmp_path)
  _best(os.path.join(out, "teacher"), "slot_f1", 0.947)
  _best(os.path.join(out, "student"), "slot_f1", 0.90)
  _done(os.path.join(out, "student"), 600)
  ratio = (student_size.encoder_train_flops_per_token("6x192") /
           student_size.encoder_train_flops_per_token("6x96"))
  assert 3 < ratio < 4.5
  run, _ = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                           600 * (1 + ratio) + 1)
  assert run
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                600 * (1 + ratio) - 1)
  assert not run and "student budget" in reason


def test_next_size_without_the_runs_scores_is_an_error(tmp_path):
  with pytest.raises(ValueError, match="best/metrics.json"):
    student_size.next_size_decision(str(tmp_path), ["6x96"], "6x192", 1.5,
                                    None)


def test_choose_takes_the_smallest_within_the_gap_else_the_best():
  scores = {"6x96": 81.3, "6x192": 86.0, "6x256": 87.9}
  assert student_size.choose(scores, 89.2, 1.5) == "6x256"
  assert student_size.choose(scores, 87.0, 1.5) == "6x192"
  assert student_size.choose(scores, 95.0, 1.5) == "6x256"
  assert student_size.choose({"6x96": 80.0, "6x192": 80.0}, 95.0, 1.5) == (
      "6x96")
  with pytest.raises(ValueError):
    student_size.choose({}, 90.0, 1.5)
