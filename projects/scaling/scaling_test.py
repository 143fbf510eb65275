"""Tests for the scaling study's steps, split and results (scaling.py)."""

import json
import os

import gin
import pytest

from mixvocab_tf.core import gin_utils
from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import steps as steps_lib
from projects.scaling import scaling

_HERE = os.path.dirname(os.path.abspath(__file__))


def test_compute_matched_nokd_gets_stage1_flops_as_steps():
  flops = scaling.step_flops()
  # The 6 x 384 teacher with its 30K softmax at 16 x 64 against the 6 x 96
  # student at 32 x 64: about 8 student steps per stage I step.
  assert 8.0 < flops["stage1"] / flops["student"] < 8.7
  assert scaling.matched_nokd_steps(200, 300) == 300 + round(
      200 * flops["stage1"] / flops["student"])
  assert scaling.matched_nokd_steps(0, 300) == 300


def test_steps_in_budget_order_with_their_step_counts():
  steps = scaling.scaling_steps(corpus="/data/c.txt", budgets=[1, 4],
                                seeds=[0, 1], glue_dir="/glue",
                                glue_tasks=["mrpc"], distill_arm=False)
  names = [s[0] for s in steps]
  assert names[:4] == ["split", "vocab", "stage1_b1", "stage2_b1"]
  # The whole 1x budget (pretraining, curves, SNIPS) before any 4x step.
  last_1x = max(i for i, n in enumerate(names) if n.endswith("b1") or
                "_b1_" in n)
  first_4x = min(i for i, n in enumerate(names) if "b4" in n)
  assert last_1x < first_4x
  assert names[-1] == "results" and steps[-1][1] == "scaling_results"
  by_name = {s[0]: s for s in steps}

  def train_steps(name):
    (value,) = [b.split("=")[1] for b in by_name[name][3]
                if b.startswith("Trainer.train_steps")]
    return int(value)

  assert train_steps("stage1_b4") == 800
  assert train_steps("stage2_b4") == train_steps("nokd_b4") == 1200
  assert train_steps("nokd_matched_b4") == scaling.matched_nokd_steps(800,
                                                                      1200)
  for name in ("stage1_b4", "stage2_b4", "nokd_b4", "nokd_matched_b4"):
    assert ("MlmInputs.input_files = '{output_dir}/split/train.txt'"
            in by_name[name][3])
  assert "STAGE1_DIR = '{output_dir}/stage1_b4'" in by_name["stage2_b4"][3]
  snips = [n for n in names if n.startswith("ft_snips_")]
  assert len(snips) == 2 * 3 * 2  # budgets x arms x seeds
  # GLUE at the largest budget only, with the MRPC bindings.
  glue = [n for n in names if n.startswith("ft_mrpc_")]
  assert sorted(glue) == sorted(
      f"ft_mrpc_{a}_b4_seed{s}" for a in scaling.ARMS for s in (0, 1))
  assert "LR = 2e-3" in by_name["ft_mrpc_nokd_b4_seed1"][3]
  assert ("INIT_CHECKPOINT = '{output_dir}/nokd_matched_b4'"
          in by_name["ft_mrpc_nokd_matched_b4_seed0"][3])
  # Known kinds, unique names, and each step reading only earlier ones.
  steps_lib.check(steps_lib.from_specs(steps), pipeline.step_kinds())


def test_distillation_arm_at_the_largest_budget_with_balanced_weights():
  steps = scaling.scaling_steps(corpus="/c.txt", budgets=[1, 4], seeds=[0],
                                distill_weights={"attention_weight": 0.05})
  by_name = {s[0]: s for s in steps}
  assert "stage2_distill_b1" not in by_name
  _, kind, gin_files, bindings = by_name["stage2_distill_b4"]
  assert kind == "train" and gin_files == ["stage2_distill_small.gin"]
  assert "STAGE1_DIR = '{output_dir}/stage1_b4'" in bindings
  assert "Stage2DistillTask.attention_weight = 0.05" in bindings
  assert "Stage2DistillTask.soft_target_weight = 3.0" in bindings
  assert "Trainer.train_steps = 1200" in bindings
  assert "ft_snips_stage2_distill_b4_seed0" in by_name
  assert by_name["mlm_distill_b4"][3][0] == "runs = ['stage2_distill_b4']"


def test_the_study_registers_its_step_kinds():
  kinds = pipeline.step_kinds()
  for kind in ("split", "mlm_eval", "scaling_results", "results"):
    assert kind in kinds
  # The held-out curves are the library's step under the study's name.
  assert scaling.mlm_eval_step is pipeline._STEP_FUNCTIONS["heldout_mlm"]  # pylint: disable=protected-access


def test_scaling_config_parses():
  gin.clear_config()
  try:
    gin_utils.parse([os.path.join(_HERE, "scaling_cpu.gin")], [])
    steps = pipeline.pipeline()[0]
    # 3 budgets x 3 arms x 3 seeds, and the distillation arm's 3 seeds.
    assert len([s for s in steps if s[0].startswith("ft_snips_")]) == 30
  finally:
    gin.clear_config()


def test_split_holds_out_whole_documents(tmp_path):
  corpus = tmp_path / "corpus.txt"
  documents = [[f"doc {d} line {i}" for i in range(3)] for d in range(25)]
  corpus.write_text("\n\n".join("\n".join(d) for d in documents) + "\n")
  train, heldout = scaling.split_documents(str(corpus), 10)
  assert heldout == [documents[0], documents[10], documents[20]]
  assert len(train) == 22 and not any(d in train for d in heldout)
  step_dir = tmp_path / "split"
  step_dir.mkdir()
  scaling.split_step(str(step_dir), str(tmp_path),
                     {"corpus": str(corpus), "heldout_every": 10})
  text = (step_dir / "heldout.txt").read_text()
  assert "doc 10 line 2" in text and "doc 11" not in text
  # The library's split, of whole documents: each is one block.
  assert json.loads((step_dir / "split.json").read_text())[
      "heldout_blocks"] == 3
  with pytest.raises(ValueError, match="at least 2"):
    scaling.split_documents(str(corpus), 1)


def _write(path, content):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write(content if isinstance(content, str) else json.dumps(content))


def _fake_run_dir(root):
  """What a 2-budget, 2-seed study leaves, with chosen numbers."""
  slot = {("stage2", 1): (0.80, 0.82), ("nokd", 1): (0.79, 0.80),
          ("nokd_matched", 1): (0.81, 0.83), ("stage2", 4): (0.88, 0.90),
          ("nokd", 4): (0.85, 0.86), ("nokd_matched", 4): (0.87, 0.88)}
  for (arm, budget), values in slot.items():
    for seed, value in enumerate(values):
      name = f"ft_snips_{arm}_b{budget}_seed{seed}"
      _write(os.path.join(root, name, "best", "metrics.json"),
             {"metrics": {"intent_accuracy": 0.95, "slot_f1": value}})
      _write(os.path.join(root, name, "DONE"), "360.0 seconds\n")
    _write(os.path.join(root, f"{arm}_b{budget}", scaling.MLM_CURVE_FILE),
           {"points": [{"step": 100 * budget, "tokens": 204800 * budget,
                        "accuracy": 0.1 * budget, "loss": 6.0 / budget,
                        "masked_tokens": 1000}]})
    _write(os.path.join(root, f"{arm}_b{budget}", "DONE"), "720.0 seconds\n")


def test_results_tables_and_plots_from_a_run_directory(tmp_path):
  root = str(tmp_path / "run")
  _fake_run_dir(root)
  _write(os.path.join(root, "stage2_distill_b4", "log.txt"),
         "I1124 trainer.py:676] step 25/1200 (2%) | loss 9.1 | distill/kl "
         "0.006 | distill/attention_mse 335 | lr 0.0001 | 9 ex/s | ETA 1:00\n"
         "noise\n"
         "I1124 trainer.py:676] step 1200/1200 (100%) | loss 6.2 | "
         "distill/kl 0.004 | distill/attention_mse 120 | lr 0 | 9 ex/s\n")
  table = scaling.results_markdown(root)
  # Mean ± sample std over the two seeds, in points.
  assert "| 4x | mixed-vocab (stage I + II) | 2 | 95.0 ± 0.0 | 89.0 ± 1.4 |" \
      in table
  # Paired gaps: 4x stage II - NoKD = (3, 4) -> +3.5 ± 0.7, 2 wins of 2.
  assert ("| 4x | mixed-vocab (stage I + II) | NoKD, same student steps | "
          "+0.0 ± 0.0 (0/2) | +3.5 ± 0.7 (2/2) |") in table
  assert ("| 1x | mixed-vocab (stage I + II) | NoKD, + stage I FLOPs | "
          "+0.0 ± 0.0 (0/2) | -1.0 ± 0.0 (0/2) |") in table
  # The cross-vocabulary arm gets its own paired rows: (0.91, 0.87) against
  # NoKD's 4x (0.85, 0.86) -> (6, 1) -> +3.5 ± 3.5, 2 wins of 2.
  assert "stage II + distillation from stage I | NoKD, same" not in table
  for seed, value in enumerate((0.91, 0.87)):
    name = f"ft_snips_stage2_distill_b4_seed{seed}"
    _write(os.path.join(root, name, "best", "metrics.json"),
           {"metrics": {"intent_accuracy": 0.95, "slot_f1": value}})
    _write(os.path.join(root, name, "DONE"), "360.0 seconds\n")
  table = scaling.results_markdown(root)
  assert ("| 4x | stage II + distillation from stage I | NoKD, same student "
          "steps | +0.0 ± 0.0 (0/2) | +3.5 ± 3.5 (2/2) |") in table
  assert "| 4x | NoKD, same student steps | 400 | 819,200 | 40.00 | 1.500 |" \
         in table
  assert "| distill/attention_mse | 335 | 120 |" in table
  assert "| step 25 | step 1200 |" in table
  # 1x: 3 pretraining runs x 720 s + 6 fine-tunings x 360 s = 1.2 hours.
  assert "| 1x | 1.20 |" in table
  scaling.results_step(None, root)
  for name in (scaling.RESULTS_FILE, scaling.GAP_PLOT, scaling.MLM_PLOT):
    path = os.path.join(root, name)
    assert os.path.getsize(path) > 1000, name
  with open(os.path.join(root, scaling.GAP_PLOT), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def _write_scalars(train_dir, records):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  writer = tf.summary.create_file_writer(train_dir)
  with writer.as_default():
    for step, scalars in records:
      for name, value in scalars.items():
        tf.summary.scalar(name, value, step=step)
  writer.flush()
  writer.close()


def test_distillation_terms_come_from_the_runs_scalars(tmp_path):
  root = str(tmp_path / "run")
  _fake_run_dir(root)
  run_dir = os.path.join(root, "stage2_distill_b4")
  _write_scalars(os.path.join(run_dir, "train"), [
      (25, {"loss": 9.1, "distill/attention_mse": 335.0,
            "learning_rate": 1e-4, "examples_per_second": 9.0}),
      (1200, {"loss": 6.2, "distill/attention_mse": 120.25,
              "learning_rate": 0.0, "examples_per_second": 9.0})])
  # A console line saying otherwise is not read when there are scalars.
  _write(os.path.join(run_dir, "log.txt"),
         "step 25/1200 (2%) | loss 1 | distill/attention_mse 1 | lr 0 |\n")
  table = scaling.results_markdown(root)
  assert "| step 25 | step 1200 |" in table
  assert "| distill/attention_mse | 335 | 120.2 |" in table
  assert "| loss | 9.1 | 6.2 |" in table
  assert "learning_rate" not in table and "examples_per_second" not in table
  # The archive keeps the scalars, not the log, and gives the same tables.
  archive = str(tmp_path / "archive")
  copied = scaling.archive_results(root, archive)
  assert not any(c.endswith("log.txt") for c in copied)
  assert any(c.startswith(os.path.join("stage2_distill_b4", "train",
                                       "events.out.tfevents."))
             for c in copied)
  assert (scaling.results_markdown(archive).split("\n", 3)[3] ==
          table.split("\n", 3)[3])


def test_the_committed_archive_gives_the_committed_tables():
  # scaling_table.py scaling_runs --output_dir=. makes scaling.md again.
  archive = os.path.join(_HERE, "scaling_runs")
  with open(os.path.join(_HERE, scaling.RESULTS_FILE), encoding="utf-8") as f:
    committed = f.read()
  assert (scaling.results_markdown(archive).split("\n", 3)[3] ==
          committed.split("\n", 3)[3])


def test_empty_run_directory_gives_headers_only(tmp_path):
  table = scaling.results_markdown(str(tmp_path))
  assert "SNIPS" not in table
  assert scaling.plot_results(str(tmp_path), str(tmp_path / "a.png"),
                              str(tmp_path / "b.png")) == []


def test_an_archive_of_the_result_files_gives_the_same_tables(tmp_path):
  root = str(tmp_path / "run")
  _fake_run_dir(root)
  _write(os.path.join(root, "stage2_b4", "ckpt-1200.index"), "big")
  _write(os.path.join(root, "stage2_distill_b4", "log.txt"),
         "I1124 trainer.py:676] step 25/1200 (2%) | loss 9.1 | lr 0 | 9 ex/s\n")
  archive = str(tmp_path / "archive")
  copied = scaling.archive_results(root, archive)
  assert os.path.join("stage2_b4", scaling.MLM_CURVE_FILE) in copied
  assert os.path.join("stage2_distill_b4", "log.txt") in copied
  assert not os.path.exists(os.path.join(archive, "stage2_b4",
                                         "ckpt-1200.index"))
  def body(directory):
    return scaling.results_markdown(directory).split("\n", 3)[3]
  assert body(archive) == body(root)
  assert "SNIPS" in body(archive)


def test_a_fine_tuning_run_without_done_is_not_a_result(tmp_path):
  root = str(tmp_path / "run")
  _fake_run_dir(root)
  before = scaling.results_markdown(root)
  # Still training: a best checkpoint so far, no DONE marker.
  _write(os.path.join(root, "ft_snips_stage2_b4_seed2", "best",
                      "metrics.json"),
         {"metrics": {"intent_accuracy": 0.5, "slot_f1": 0.1}})
  assert scaling.results_markdown(root) == before
