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
  assert 3 < (student_size.encoder_train_flops_per_token("6x192") /
              student_size.encoder_train_flops_per_token("6x96")) < 4.5
  ratio = student_size.time_ratio("6x192", "6x96")
  assert ratio == student_size.MEASURED_TIME_RATIO["6x192"]
  # Not measured: the multiply-adds.
  assert 1.2 < student_size.time_ratio("6x256", "6x192") < 2.5
  run, _ = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                           600 * (1 + ratio) + 1)
  assert run
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                600 * (1 + ratio) - 1)
  assert not run and "student budget" in reason
  assert "own_data_steps.size_budget_minutes" in reason


def test_next_size_counts_the_whole_step_budget_after_an_early_stop(
    tmp_path):
  out = str(tmp_path)
  _best(os.path.join(out, "teacher"), "accuracy", 0.937)
  _best(os.path.join(out, "student"), "accuracy", 0.881)
  _done(os.path.join(out, "student"), 600)
  ratio = student_size.time_ratio("6x192", "6x96")
  # Stopped at 4,000 of 6,000 steps: the 6x192 may run all 6,000.
  with open(os.path.join(out, "student", "early_stopping.json"), "w") as f:
    json.dump({"step": 4000, "train_steps": 6000}, f)
  whole = 600 * ratio * 1.5
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                600 + whole + 1)
  assert run and "up to about" in reason and "step 4,000 of 6,000" in reason
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                600 + whole - 1)
  assert not run and "whole step budget" in reason
  # A run that reached its budget (the record of a ceiling at the last
  # step) is not scaled.
  with open(os.path.join(out, "student", "early_stopping.json"), "w") as f:
    json.dump({"step": 6000, "train_steps": 6000}, f)
  run, reason = student_size.next_size_decision(out, ["6x96"], "6x192", 1.5,
                                                600 * (1 + ratio) + 1)
  assert run and "up to" not in reason


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


def _student_dir(root, size):
  """A pretrained student's folder as the package ships it (no weights)."""
  path = os.path.join(root, f"pretrained_{size}")
  os.makedirs(path)
  layers, hidden = size.split("x")
  with open(os.path.join(path, "encoder_config.json"), "w") as f:
    json.dump({"student_encoder": {"num_layers": int(layers),
                                   "hidden_size": int(hidden)}}, f)
  with open(os.path.join(path, "student_vocab.txt"), "w") as f:
    f.write("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nplay\n")
  return path


def _intent_slot_data(root):
  for split in ("train", "valid"):
    os.makedirs(os.path.join(root, split))
    for name, line in (("seq.in", "play some jazz"),
                       ("seq.out", "O O B-genre"), ("label", "PlayMusic")):
      with open(os.path.join(root, split, name), "w") as f:
        f.write("".join(f"{line}\n" for _ in range(30)))
  return root


def test_auto_adds_each_larger_size_behind_its_condition(tmp_path,
                                                         monkeypatch):
  from mixvocab_tf import assets  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.jobs import own_data  # pylint: disable=g-import-not-at-top
  shipped = {s: _student_dir(str(tmp_path), s) for s in ("6x96", "6x192")}
  monkeypatch.setattr(assets, "pretrained_student_dir",
                      lambda size="6x96": shipped.get(size))
  data = _intent_slot_data(str(tmp_path / "data"))
  steps = own_data.own_data_steps(data, student_size="auto")
  names = [s.name for s in steps]
  assert names == ["data", "teacher", "student", "export", "student_6x192",
                   "export_6x192", "report"]
  by_name = {s.name: s for s in steps}
  assert by_name["student"].options("/j")["INIT_CHECKPOINT"] == (
      shipped["6x96"])
  larger = by_name["student_6x192"]
  assert larger.options("/j")["INIT_CHECKPOINT"] == shipped["6x192"]
  assert larger.options("/j")["IntentSlotTask.vocab"].startswith(
      shipped["6x192"])
  assert by_name["export_6x192"].options("/j")["run"] == "/j/student_6x192"
  # The 6x192 runs only once the 6x96 finished more than 1.5 points below.
  out = str(tmp_path / "job")
  assert not larger.when.test(out)
  _best(os.path.join(out, "teacher"), "slot_f1", 0.95)
  _best(os.path.join(out, "student"), "slot_f1", 0.94)
  _done(os.path.join(out, "student"), 60)
  assert not larger.when.test(out)
  _best(os.path.join(out, "student"), "slot_f1", 0.90)
  assert larger.when.test(out)
  # A fixed size, and the errors.
  steps = own_data.own_data_steps(data, student_size="6x192")
  assert [s.name for s in steps][2:4] == ["student", "export"]
  assert steps[2].options("/j")["INIT_CHECKPOINT"] == shipped["6x192"]
  with pytest.raises(ValueError, match="no pretrained 6x256 student"):
    own_data.own_data_steps(data, student_size="6x256")
  with pytest.raises(ValueError, match="Give one of the two"):
    own_data.own_data_steps(data, student=shipped["6x96"],
                            student_size="auto")


def test_size_table_has_a_row_per_size_and_exports_the_chosen(tmp_path):
  out = str(tmp_path)
  _best(os.path.join(out, "teacher"), "accuracy", 0.892)
  for step, score, seconds, mb in (("student", 0.813, 600, 1.9),
                                   ("student_6x192", 0.870, 1800, 4.4)):
    _best(os.path.join(out, step), "accuracy", score)
    _done(os.path.join(out, step), seconds)
    export = os.path.join(out, step.replace("student", "export"))
    os.makedirs(export)
    with open(os.path.join(export, "summary.json"), "w") as f:
      json.dump({"tflite": {"dynamic": {"size_bytes": mb * 1e6,
                                        "p50_ms": 2.0}}}, f)
  rows, chosen, notes = student_size.size_table(
      out, ["6x96", "6x192", "6x256"], 1.5, None)
  assert chosen == "6x192"  # Not within 1.5 points, but the best.
  assert rows == [["6x96", "81.3", "1.90", "2.00", "10.0", ""],
                  ["6x192", "87.0", "4.40", "2.00", "30.0", "exported"]]
  assert "trying 6x192" in notes[0]
  assert "trying 6x256" in notes[1]  # Its condition holds: it is next.


def test_size_table_of_one_size_exports_it_whatever_its_size(tmp_path):
  # A user's own student (STUDENT) may be of a size `choose` does not know.
  out = str(tmp_path)
  _best(os.path.join(out, "teacher"), "slot_f1", 0.95)
  _best(os.path.join(out, "student"), "slot_f1", 0.50)
  _done(os.path.join(out, "student"), 60)
  rows, chosen, notes = student_size.size_table(out, ["2x32"], 1.5, None)
  assert chosen == "2x32" and notes == []
  assert rows == [["2x32", "50.0", "", "", "1.0", "exported"]]
