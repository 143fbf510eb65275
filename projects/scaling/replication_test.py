"""Tests for the replication job's steps, results table and results step."""

import os

import gin
import tensorflow as tf

from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import metrics_io
from mixvocab_tf.jobs import pipeline
from projects.scaling import replication


class ReplicationStepsTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()

  def test_grid_and_order(self):
    glue = self.get_temp_dir()
    steps = replication.replication_steps(glue_dir=glue)
    names = [s[0] for s in steps]
    self.assertLen(set(names), len(names))
    # 4 methods at 6 x 96 + 2 at each wider size, 4 tasks, 3 seeds.
    self.assertLen([n for n in names if n.startswith("ft_")], (4 + 2 + 2) * 12)
    self.assertEqual(names[-1], "results")
    # Every 6 x 96 fine-tuning run comes before any wider pretraining run.
    last_96 = max(i for i, n in enumerate(names) if n.endswith("H96_seed2"))
    self.assertLess(last_96, names.index("stage1_L6-H192"))
    # Each fine-tuning run starts from a pretraining step that runs before it.
    for index, (name, kind, _, bindings) in enumerate(steps):
      if name.startswith("ft_"):
        init = [b for b in bindings if b.startswith("INIT_CHECKPOINT")][0]
        source = init.split("{output_dir}/")[1].rstrip("'")
        self.assertIn(source, names[:index])
        self.assertEqual(kind, "train")
    wide = [s for s in steps if s[0] == "stage2_L6-H256"][0]
    self.assertIn("STUDENT_PRESET = 'L6-H256'", wide[3])
    self.assertIn("STAGE1_DIR = '{output_dir}/stage1_L6-H256'", wide[3])

  def test_fine_tuning_uses_the_configs_budget_unless_steps_are_given(self):
    default = [s for s in replication.replication_steps(
        tasks=["snips"], seeds=[0]) if s[0].startswith("ft_")]
    self.assertNotEmpty(default)
    for _, _, gin_files, bindings in default:
      self.assertEqual(gin_files, ["finetune_snips_small.gin"])
      self.assertFalse([b for b in bindings if b.startswith("Trainer.train")])
    fixed = [s for s in replication.replication_steps(
        tasks=["snips"], seeds=[0], snips_steps=7) if s[0].startswith("ft_")]
    for _, _, _, bindings in fixed:
      self.assertIn("Trainer.train_steps = 7", bindings)
      self.assertIn("Trainer.early_stopping_patience = None", bindings)

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, "glue_dir is required"):
      replication.replication_steps(tasks=["sst2"])
    with self.assertRaisesRegex(ValueError, "Unknown methods"):
      replication.replication_steps(methods=["mixd"], tasks=["snips"])
    with self.assertRaisesRegex(ValueError, "Unknown tasks"):
      replication.replication_steps(tasks=["cola"])
    with self.assertRaisesRegex(FileNotFoundError, "no directory"):
      replication.replication_steps(glue_dir="/nonexistent/glue")

  def test_results_table(self):
    run_dir = os.path.join(self.get_temp_dir(), "results_run")
    def write(name, metrics, parameters=1_202_976):
      metrics_io.write_metrics_json(
          os.path.join(run_dir, name, "best", "metrics.json"), metrics,
          parameters=parameters, size_bytes=4 * parameters, step=200)
    for seed, (intent, slot) in enumerate([(0.9, 0.5), (0.8, 0.6),
                                           (0.7, 0.7)]):
      write(f"ft_snips_mixed_L6-H96_seed{seed}",
            {"intent_accuracy": intent, "slot_f1": slot,
             "sentence_accuracy": 0.1})
    write("ft_sst2_nokd_L6-H192_seed0", {"accuracy": 0.75},
          parameters=3_751_488)
    os.makedirs(os.path.join(run_dir, "ft_mrpc_nokd_L6-H96_seed0"))  # unfinished
    table = replication.results_table(run_dir).splitlines()
    self.assertLen(table, 4)
    mixed = table[2].split(" | ")
    self.assertEqual(mixed[1:6], ["6x96", "1.20M", "4.81", "80.0 ± 10.0",
                                  "60.0 ± 10.0"])
    self.assertIn("not run", mixed[6])
    nokd = table[3].split(" | ")
    self.assertEqual(nokd[:2], ["| NoKD", "6x192"])
    self.assertEqual(nokd[6], "75.0 (n=1)")
    per_seed = replication.per_seed_table(run_dir).splitlines()
    self.assertEqual(per_seed[0], "| model | size | metric | seed 0 | seed 1 "
                     "| seed 2 |")
    self.assertEqual(per_seed[2:], [
        "| mixed-vocab (stage I + II) | 6x96 | SNIPS intent | 90.0 | 80.0 "
        "| 70.0 |",
        "| mixed-vocab (stage I + II) | 6x96 | SNIPS slot F1 | 50.0 | 60.0 "
        "| 70.0 |",
        "| NoKD | 6x192 | SST-2 acc. | 75.0 |  |  |",
    ])


class ResultsStepTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)
    self.output_dir = self.get_temp_dir()

  def _finish_run(self, name, accuracy):
    metrics_io.write_metrics_json(
        os.path.join(self.output_dir, name, "best", "metrics.json"),
        {"accuracy": accuracy}, parameters=1_000, size_bytes=4_000, step=500)
    with open(os.path.join(self.output_dir, name, pipeline.DONE), "w",
              encoding="utf-8") as f:
      f.write("1 seconds\n")

  def test_results_kind_is_registered_by_this_module(self):
    self.assertIn("results", pipeline.step_kinds())

  def test_results_step_reruns_and_sees_runs_added_since(self):
    # Two jobs sharing one directory (as docs/RESULTS.md's grid is run): the
    # summary must cover what the other job finished after this one's last
    # run, not stay as it was when the step first ran.
    gin.bind_parameter("pipeline.steps", [("results", "results", [], [])])
    results = os.path.join(self.output_dir, replication.RESULTS_FILE)
    self._finish_run("ft_sst2_nokd_L6-H96_seed0", 0.75)
    pipeline.run(self.output_dir)
    with open(results, encoding="utf-8") as f:
      self.assertIn("75.0 (n=1)", f.read())
    self._finish_run("ft_sst2_nokd_L6-H96_seed1", 0.85)
    pipeline.run(self.output_dir)
    with open(results, encoding="utf-8") as f:
      self.assertIn("80.0 ± 7.1 (n=2)", f.read())

  def test_config_parses(self):
    # GLUE_DIR's default is the development machine's data; any directory
    # will do to parse the config (a user's checkout has none there).
    gin_utils.parse(["projects/scaling/replication_cpu.gin"],
                    [f"GLUE_DIR = {self.get_temp_dir()!r}"])
    steps = pipeline.pipeline()[0]
    self.assertEqual(steps[-1][:2], ("results", "results"))


if __name__ == "__main__":
  tf.test.main()
