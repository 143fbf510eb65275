"""Tests of the paper's-question job: its steps and its results table."""

import json
import os
import tempfile
import unittest

from projects.pretraining_recipe import paper_question
from projects.pretraining_recipe import paper_question_table


class PaperQuestionTest(unittest.TestCase):

  def setUp(self):
    super().setUp()
    self.main_run = self.enterContext(tempfile.TemporaryDirectory())
    os.makedirs(os.path.join(self.main_run, "nokd"))
    open(os.path.join(self.main_run, "nokd", "DONE"), "w").close()

  def _steps(self, **kwargs):
    args = dict(main_run=self.main_run, long_run="/runs/ps", corpus="c.txt",
                glue_dir="/glue", main_cm_steps=2060, long_cm_steps=10364)
    args.update(kwargs)
    return paper_question.paper_question_steps(**args)

  def test_a_main_run_without_nokd_is_refused_before_any_step(self):
    os.remove(os.path.join(self.main_run, "nokd", "DONE"))
    with self.assertRaisesRegex(ValueError, "quickstart_nokd.gin"):
      self._steps()

  def test_order_and_students(self):
    steps = self._steps()
    names = [s[0] for s in steps]
    self.assertEqual(names[:3], ["split_long", "split_main", "long_nokd"])
    self.assertEqual(names[-1], "results")
    # Seed 0 of SNIPS for every student before any other seed or SST-2.
    first_seed1 = names.index("ft_snips_main_stage2_seed1")
    self.assertEqual(
        sorted(n for n in names[:first_seed1] if n.startswith("ft_")),
        sorted(f"ft_snips_{b}_{a}_seed0" for b, a in [
            ("main", "stage2"), ("main", "nokd"), ("main", "nokd_cm"),
            ("long", "stage2"), ("long", "nokd")]))
    # The longer compute-matched arm is pretrained after every other SNIPS
    # run and before its own SNIPS runs; SST-2 comes after all of SNIPS, seed
    # 0 of every student (the longer compute-matched arm included) first.
    self.assertLess(names.index("ft_snips_long_nokd_seed2"),
                    names.index("long_nokd_cm"))
    self.assertLess(names.index("long_nokd_cm"),
                    names.index("ft_snips_long_nokd_cm_seed0"))
    self.assertLess(names.index("ft_snips_long_nokd_cm_seed2"),
                    names.index("ft_sst2_main_stage2_seed0"))
    first_sst2_seed1 = names.index("ft_sst2_main_stage2_seed1")
    self.assertEqual(
        len([n for n in names[:first_sst2_seed1] if n.startswith("ft_sst2")]),
        6)
    self.assertEqual(len(names), len(set(names)))
    by_name = {s[0]: s for s in steps}
    nokd = by_name["long_nokd"]
    self.assertEqual(nokd[2], ["nokd_small.gin"])
    self.assertIn("Trainer.train_steps = 9000", nokd[3])
    self.assertIn("MlmInputs.input_files = '{output_dir}/split_long/train.txt'",
                  nokd[3])
    self.assertIn("split = 'split_long'", by_name["eval_long_nokd"][3])
    snips = by_name["ft_snips_long_stage2_seed1"]
    self.assertEqual(snips[2], ["finetune_snips_small.gin"])
    self.assertIn("INIT_CHECKPOINT = '/runs/ps/stage2'", snips[3])
    self.assertIn("Trainer.seed = 1", snips[3])
    self.assertIn("IntentSlotTask.vocab = "
                  "'/runs/ps/package/pretrained_student/student_vocab.txt'",
                  snips[3])
    sst2 = by_name["ft_sst2_main_nokd_cm_seed0"]
    self.assertIn("DATASET = 'glue/sst2'", sst2[3])
    self.assertIn("DATA_DIR = '/glue'", sst2[3])
    self.assertIn("INIT_CHECKPOINT = '{output_dir}/main_nokd_cm'", sst2[3])
    self.assertIn("TextClassificationTask.vocab = "
                  f"'{self.main_run}/student_vocab.txt'", sst2[3])

  def test_without_compute_matched_arms_and_sst2(self):
    names = [s[0] for s in self._steps(main_cm_steps=None, long_cm_steps=None,
                                       tasks=["snips"], seeds=[0])]
    self.assertNotIn("main_nokd_cm", names)
    self.assertNotIn("long_nokd_cm", names)
    self.assertEqual(len([n for n in names if n.startswith("ft_")]), 4)

  def test_one_task_pretrains_the_compute_matched_arm_once(self):
    for tasks in (["snips"], ["sst2"]):
      names = [s[0] for s in self._steps(tasks=tasks, seeds=[0])]
      self.assertEqual(names.count("long_nokd_cm"), 1)
      self.assertLess(names.index("long_nokd_cm"),
                      names.index(f"ft_{tasks[0]}_long_nokd_cm_seed0"))
      self.assertEqual(len([n for n in names if n.startswith("ft_")]), 6)

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "glue_dir is required"):
      self._steps(glue_dir=None)
    with self.assertRaisesRegex(ValueError, "mrpc"):
      self._steps(tasks=["snips", "mrpc"])

  def test_results_table(self):
    with tempfile.TemporaryDirectory() as d:
      for name, metrics in [
          ("ft_snips_main_stage2_seed0", {"intent_accuracy": 0.98,
                                          "slot_f1": 0.90}),
          ("ft_snips_main_stage2_seed1", {"intent_accuracy": 0.96,
                                          "slot_f1": 0.88}),
          ("ft_sst2_long_nokd_cm_seed0", {"accuracy": 0.80,
                                          "majority_accuracy": 0.509}),
      ]:
        os.makedirs(os.path.join(d, name, "best"))
        with open(os.path.join(d, name, "best", "metrics.json"), "w") as f:
          json.dump({"metrics": metrics}, f)
        with open(os.path.join(d, name, "DONE"), "w") as f:
          f.write("done\n")
      # A run still training has a best/ but no DONE: left out.
      os.makedirs(os.path.join(d, "ft_snips_main_stage2_seed2", "best"))
      with open(os.path.join(d, "ft_snips_main_stage2_seed2", "best",
                             "metrics.json"), "w") as f:
        json.dump({"metrics": {"intent_accuracy": 0.5, "slot_f1": 0.5}}, f)
      table = paper_question.results_table(d)
    self.assertIn("| snips | main | stage II | SNIPS intent | 97.00 ± 1.41 "
                  "(n=2) | 0: 98.00, 1: 96.00 |", table)
    self.assertIn("| sst2 | long | NoKD, compute-matched | SST-2 acc. | "
                  "80.00 (n=1) | 0: 80.00 | 50.90 |", table)

  def test_archive_and_held_out_table(self):
    point = {"step": 100, "loss": 5.5, "accuracy": 0.1,
             "unigram_loss": 6.4, "unigram_accuracy": 0.05}
    with tempfile.TemporaryDirectory() as d:
      main, long, job, dest = (os.path.join(d, n) for n in
                               ("main", "long", "job", "archive"))
      for root, step in ((main, "stage2"), (long, "stage2"),
                         (job, "long_nokd")):
        os.makedirs(os.path.join(root, step))
        with open(os.path.join(root, step, "mlm_curve.json"), "w") as f:
          json.dump({"points": [point]}, f)
      for run in ("ft_snips_long_nokd_seed0", "ft_snips_long_nokd_seed1"):
        os.makedirs(os.path.join(job, run, "best"))
        with open(os.path.join(job, run, "best", "metrics.json"), "w") as f:
          json.dump({"metrics": {"intent_accuracy": 0.9, "slot_f1": 0.8}}, f)
      with open(os.path.join(job, "ft_snips_long_nokd_seed0", "DONE"),
                "w") as f:  # seed 1 is still training
        f.write("done\n")
      paper_question_table.archive(dest, job, main, long)
      table = paper_question_table.held_out_table(dest)
      downstream = paper_question.results_table(dest)
    self.assertIn("| main | stage II | 100 | 5.500 | 6.400 | -0.900 | 10.0% "
                  "| 5.0% |  |", table)
    self.assertIn("| long | NoKD, step-matched |", table)
    self.assertNotIn("compute-matched", table)
    self.assertIn("| snips | long | NoKD, step-matched | SNIPS slot F1 | "
                  "80.00 (n=1) |", downstream)


if __name__ == "__main__":
  unittest.main()
