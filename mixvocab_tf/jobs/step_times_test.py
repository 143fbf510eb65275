"""Tests for the wall and CPU time records of a job's steps."""

import os
import subprocess
import sys
import time

import gin
import tensorflow as tf

from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import step_times


def _busy(seconds):
  end = time.process_time() + seconds
  while time.process_time() < end:
    pass


class StepTimesTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.output_dir = self.get_temp_dir()

  def test_clock_counts_this_process_and_its_children(self):
    clock = step_times.StepClock().start()
    _busy(0.2)
    own = step_times.StepClock().start()
    subprocess.run([sys.executable, "-c",
                    "import time\nend = time.process_time() + 0.3\n"
                    "while time.process_time() < end: pass"], check=True)
    child = own.stop("train")
    record = clock.stop("vocab")
    self.assertEqual(record["kind"], "vocab")
    self.assertGreaterEqual(record["cpu_seconds"], 0.5)
    self.assertGreaterEqual(record["wall_seconds"], 0.5)
    # The child's CPU time is counted once it has been waited for.
    self.assertGreaterEqual(child["cpu_seconds"], 0.3)

  def test_records_in_finishing_order_and_table(self):
    for name, finished, wall, cpu in (("teacher", 20.0, 30.0, 55.0),
                                      ("vocab", 10.0, 10.0, 5.0)):
      step_dir = os.path.join(self.output_dir, name)
      os.makedirs(step_dir)
      step_times.write(step_dir, {"kind": "train", "wall_seconds": wall,
                                  "cpu_seconds": cpu, "finished": finished})
    os.makedirs(os.path.join(self.output_dir, "unmeasured"))
    self.assertEqual([n for n, _ in step_times.records(self.output_dir)],
                     ["vocab", "teacher"])
    rows = step_times.table_rows(self.output_dir)
    self.assertEqual(rows[0], ["vocab", "train", "10 s", "5 s", "0.50",
                               "25%"])
    self.assertEqual(rows[1][4:], ["1.83", "75%"])
    self.assertEqual(rows[-1][2:], ["40 s", "60 s", "1.50", "100%"])
    section = step_times.section(self.output_dir)
    self.assertEqual(section[0], "## Time")
    self.assertIn("| teacher | train | 30 s | 55 s |", section[2])

  def test_steps_that_ran_beside_others_get_the_jobs_span(self):
    for name, started, finished, cpu in (("teacher", 0.0, 30.0, 55.0),
                                         ("vocab", 2.0, 12.0, 10.0),
                                         ("stage1", 30.0, 50.0, 36.0)):
      step_dir = os.path.join(self.output_dir, name)
      os.makedirs(step_dir)
      step_times.write(step_dir, {
          "kind": "train", "wall_seconds": finished - started,
          "cpu_seconds": cpu, "started": started, "finished": finished})
    rows = step_times.table_rows(self.output_dir)
    self.assertEqual(rows[-2][:4], ["**all steps above**", "", "60 s",
                                    "101 s"])
    # 50 s from the first start to the last finish, not the walls' 60.
    self.assertEqual(rows[-1][2:5], ["50 s", "101 s", "2.02"])

  def test_no_records_no_section(self):
    self.assertEqual(step_times.table_rows(self.output_dir), [])
    self.assertEqual(step_times.section(self.output_dir),
                     [])

  def test_the_pipeline_records_each_step_it_runs(self):
    pipeline.register_step_kind("timed_busy", lambda d, o, b: _busy(0.1))
    self.addCleanup(pipeline._STEP_FUNCTIONS.pop, "timed_busy", None)  # pylint: disable=protected-access
    gin.bind_parameter("pipeline.steps", [("busy", "timed_busy", [], [])])
    pipeline.run(self.output_dir)
    record = step_times.read(os.path.join(self.output_dir, "busy"))
    self.assertEqual(record["kind"], "timed_busy")
    self.assertGreaterEqual(record["cpu_seconds"], 0.1)
    # A rerun skips the finished step and keeps its record.
    pipeline.run(self.output_dir)
    self.assertEqual(step_times.read(os.path.join(self.output_dir, "busy")),
                     record)


if __name__ == "__main__":
  tf.test.main()
