"""Tests for the step runner of `python -m mixvocab_tf.train` jobs."""

import os

import gin
import tensorflow as tf

from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import replication
from mixvocab_tf.core import metrics_io


class PipelineTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.output_dir = self.get_temp_dir()

  def _finish_run(self, name, accuracy):
    metrics_io.write_metrics_json(
        os.path.join(self.output_dir, name, "best", "metrics.json"),
        {"accuracy": accuracy}, parameters=1_000, size_bytes=4_000, step=500)
    with open(os.path.join(self.output_dir, name, pipeline.DONE), "w",
              encoding="utf-8") as f:
      f.write("1 seconds\n")

  def _record_report_steps(self):
    """Makes "report" steps record (step_dir, bindings) instead of running."""
    seen = []
    saved = pipeline._STEP_FUNCTIONS["report"]  # pylint: disable=protected-access
    pipeline._STEP_FUNCTIONS["report"] = (  # pylint: disable=protected-access
        lambda step_dir, output_dir, bindings: seen.append(
            (step_dir, bindings)))
    self.addCleanup(pipeline._STEP_FUNCTIONS.__setitem__, "report", saved)  # pylint: disable=protected-access
    return seen

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

  def test_done_steps_are_skipped(self):
    # A finished vocabulary step is not redone (it would need the corpus and
    # minutes of work; here it would fail on the missing summary).
    os.makedirs(os.path.join(self.output_dir, "vocab"))
    with open(os.path.join(self.output_dir, "vocab", pipeline.DONE), "w",
              encoding="utf-8") as f:
      f.write("1 seconds\n")
    gin.bind_parameter("pipeline.steps", [("vocab", "vocab", [], [])])
    pipeline.run(self.output_dir)
    self.assertEqual(os.listdir(os.path.join(self.output_dir, "vocab")),
                     [pipeline.DONE])

  def test_step_selection_runs_only_the_matching_steps(self):
    # A second process given a part of the job (step_selection.only) must
    # leave the other steps alone for the first process.
    seen = self._record_report_steps()
    gin.bind_parameter("pipeline.steps", [
        (name, "report", [], []) for name in
        ("ft_snips_a_seed0", "ft_sst2_a_seed0", "ft_sst2_b_seed1", "results")])
    gin.bind_parameter("step_selection.only", ["ft_sst2_*"])
    pipeline.run(self.output_dir)
    self.assertEqual([os.path.basename(d) for d, _ in seen],
                     ["ft_sst2_a_seed0", "ft_sst2_b_seed1"])
    self.assertFalse(os.path.exists(os.path.join(self.output_dir,
                                                 "ft_snips_a_seed0")))
    gin.bind_parameter("step_selection.only", "ft_mnli_*")
    with self.assertRaisesRegex(ValueError, "matches none of the 4 steps"):
      pipeline.run(self.output_dir)

  def test_output_dir_in_bindings_is_absolute(self):
    # Runs record their bindings in operative_config.gin; tools read them
    # from any directory, so `{output_dir}` must not stay relative.
    self.addCleanup(os.chdir, os.getcwd())
    os.chdir(self.output_dir)
    seen = self._record_report_steps()
    gin.bind_parameter("pipeline.steps", [
        ("r", "report", [], ["V = '{output_dir}/student_vocab.txt'"])])
    pipeline.run("runs/job")
    self.assertEqual(seen[0][1], [f"V = '{os.path.abspath('runs/job')}"
                                  "/student_vocab.txt'"])

  def test_bad_steps(self):
    gin.bind_parameter("pipeline.steps", [("x", "train_stage1", [], [])])
    with self.assertRaisesRegex(ValueError, "has kind 'train_stage1'"):
      pipeline.run(self.output_dir)
    gin.bind_parameter("pipeline.steps", [("x", "results", [], []),
                                          ("x", "results", [], [])])
    with self.assertRaisesRegex(ValueError, "appears twice"):
      pipeline.run(self.output_dir)


if __name__ == "__main__":
  tf.test.main()
