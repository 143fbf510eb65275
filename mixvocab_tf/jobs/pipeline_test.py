"""Tests for the step runner of `python -m mixvocab_tf.train` jobs."""

import os
import subprocess
import sys
import threading
import time
from unittest import mock

import gin
import tensorflow as tf

from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import step_times
from mixvocab_tf.jobs import steps as steps_lib


class PipelineTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.output_dir = self.get_temp_dir()

  def _record_report_steps(self):
    """Makes "report" steps record (step_dir, options) instead of running."""
    seen = []
    saved = pipeline._STEP_FUNCTIONS["report"]  # pylint: disable=protected-access
    pipeline._STEP_FUNCTIONS["report"] = (  # pylint: disable=protected-access
        lambda step_dir, output_dir, options: seen.append(
            (step_dir, options)))
    self.addCleanup(pipeline._STEP_FUNCTIONS.__setitem__, "report", saved)  # pylint: disable=protected-access
    return seen

  def _register(self, name, fn, rerun=False):
    """Registers a step kind for one test (a study's module does it)."""
    def forget():
      pipeline._STEP_FUNCTIONS.pop(name, None)  # pylint: disable=protected-access
      pipeline._RERUN_KINDS.discard(name)  # pylint: disable=protected-access
    self.addCleanup(forget)
    pipeline.register_step_kind(name, fn, rerun=rerun)

  def test_registered_step_kinds_run_and_rerun_kinds_run_every_time(self):
    # A study outside the library registers its kinds when its module is
    # imported (after this module): the kinds are checked when the job
    # runs, not when the pipeline is imported.
    seen = []
    self._register("study_count", lambda d, o, b: seen.append(
        ("count", os.path.basename(d), b)))
    self._register("study_summary", lambda d, o, b: seen.append(
        ("summary", os.path.basename(d), b)), rerun=True)
    self.assertIn("study_summary", pipeline.step_kinds())
    gin.bind_parameter("pipeline.steps", [
        ("count", "study_count", [], ["n = 1"]),
        ("summary", "study_summary", [], [])])
    pipeline.run(self.output_dir)
    pipeline.run(self.output_dir)
    # The ordinary kind is done after the first run; the summary reruns.
    self.assertEqual(seen, [("count", "count", {"n": 1}),
                            ("summary", "summary", {}),
                            ("summary", "summary", {})])

  def test_a_kind_cannot_be_taken_twice(self):
    with self.assertRaisesRegex(ValueError, "'train' is registered already"):
      pipeline.register_step_kind("train", lambda d, o, b: None)
    with self.assertRaisesRegex(ValueError, "'report' is registered already"):
      pipeline.register_step_kind("report", lambda d, o, b: None)

  def test_the_trainer_does_not_import_the_studies(self):
    # Studies live in projects/ and register their kinds themselves; the
    # trainer knows only the library's kinds.
    code = ("import sys; import mixvocab_tf.train; "
            "from mixvocab_tf.jobs import pipeline; "
            "print(sorted(m for m in sys.modules if m.startswith('projects')),"
            " [k for k in ('split', 'mlm_eval', 'scaling_results', 'results')"
            " if k in pipeline.step_kinds()])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, check=True)
    self.assertEqual(result.stdout.strip().splitlines()[-1], "[] []")

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
    self.assertEqual(seen[0][1], {
        "V": f"{os.path.abspath('runs/job')}/student_vocab.txt"})

  def test_bad_steps(self):
    gin.bind_parameter("pipeline.steps", [("x", "train_stage1", [], [])])
    with self.assertRaisesRegex(ValueError, "has kind 'train_stage1'"):
      pipeline.run(self.output_dir)
    gin.bind_parameter("pipeline.steps", [("x", "report", [], []),
                                          ("x", "report", [], [])])
    with self.assertRaisesRegex(ValueError, "appears twice"):
      pipeline.run(self.output_dir)
    # A step that reads a later one is refused before anything runs.
    seen = self._record_report_steps()
    gin.bind_parameter("pipeline.steps", [
        ("a", "report", [], ["run = '{output_dir}/b'"]),
        ("b", "report", [], [])])
    with self.assertRaisesRegex(ValueError, "reads step 'b', which comes "
                                "after it"):
      pipeline.run(self.output_dir)
    self.assertEqual(seen, [])

  def test_typed_steps_conditions_and_written_files(self):
    seen = []

    def write(step_dir, output_dir, options):
      del output_dir
      seen.append(os.path.basename(step_dir))
      for name in options.get("files", []):
        with open(os.path.join(step_dir, name), "w", encoding="utf-8") as f:
          f.write("x\n")

    self._register("study_write", write)
    gin.bind_parameter("pipeline.steps", [
        steps_lib.Step("a", "study_write", config={"files": ["out.txt"]},
                       writes=("out.txt",)),
        steps_lib.Step("b", "study_write", reads=("a",), when=steps_lib.Condition(
            lambda d: os.path.exists(os.path.join(d, "go")), "go exists")),
        steps_lib.Step("c", "study_write", writes=("missing.txt",))])
    with self.assertLogs("absl", level="INFO") as logs:
      with self.assertRaisesRegex(pipeline.PipelineError,
                                  r"'c' finished without writing "
                                  r"\['missing.txt'\]"):
        pipeline.run(self.output_dir)
    self.assertEqual(seen, ["a", "c"])
    self.assertTrue([l for l in logs.output
                     if "b: skipped; it runs only when go exists" in l])
    self.assertFalse(os.path.exists(os.path.join(self.output_dir, "c",
                                                 pipeline.DONE)))
    # Once its condition holds, the skipped step runs; the done one does not.
    open(os.path.join(self.output_dir, "go"), "w").close()
    with self.assertRaises(pipeline.PipelineError):
      pipeline.run(self.output_dir)
    self.assertEqual(seen, ["a", "c", "b", "c"])


  def test_a_step_run_beside_overlaps_the_steps_after_it(self):
    events = []
    note_done = threading.Event()

    def trainer(step, step_dir, output_dir):
      del step_dir, output_dir
      events.append(f"{step.name} started")
      if step.name == "teacher":
        # Finishes only once the in-process step after it has run.
        self.assertTrue(note_done.wait(timeout=30))
      events.append(f"{step.name} done")
      return 0.0

    def note(step_dir, output_dir, options):
      del output_dir, options
      events.append(os.path.basename(step_dir))
      note_done.set()

    self._register("study_note", note)
    self.enter_context(mock.patch.object(pipeline, "_run_train", trainer))
    gin.bind_parameter("pipeline.steps", [
        steps_lib.Step("teacher", "train", ("t.gin",)),
        steps_lib.Step("vocab_like", "study_note"),
        steps_lib.Step("stage1", "train", ("s.gin",)),
        steps_lib.Step("student", "train", ("d.gin",), reads=("teacher",))])
    gin.bind_parameter("pipeline.run_beside", ["teacher"])
    pipeline.run(self.output_dir)
    # The in-process step ran while the teacher did; the next trainer
    # waited for it (one trainer at a time).
    self.assertEqual(events, ["teacher started", "vocab_like",
                              "teacher done", "stage1 started",
                              "stage1 done", "student started",
                              "student done"])
    for name in ("teacher", "vocab_like", "stage1", "student"):
      self.assertTrue(os.path.exists(os.path.join(self.output_dir, name,
                                                  pipeline.DONE)))

  def test_a_step_that_fails_beside_others_fails_the_job(self):
    def trainer(step, step_dir, output_dir):
      del step_dir, output_dir
      raise pipeline.PipelineError(f"Step {step.name!r} failed")

    seen = []
    self._register("study_note", lambda d, o, b: seen.append(
        os.path.basename(d)))
    self.enter_context(mock.patch.object(pipeline, "_run_train", trainer))
    gin.bind_parameter("pipeline.steps", [
        steps_lib.Step("teacher", "train", ("t.gin",)),
        steps_lib.Step("note", "study_note"),
        steps_lib.Step("reader", "study_note", reads=("teacher",))])
    gin.bind_parameter("pipeline.run_beside", ["teacher"])
    with self.assertRaisesRegex(pipeline.PipelineError, "'teacher' failed"):
      pipeline.run(self.output_dir)
    # The step beside it ran; the one reading it did not.
    self.assertEqual(seen, ["note"])
    self.assertFalse(os.path.exists(os.path.join(self.output_dir, "teacher",
                                                 pipeline.DONE)))

  def test_run_beside_must_name_steps_of_the_job(self):
    self._register("study_note", lambda d, o, b: None)
    gin.bind_parameter("pipeline.steps", [("a", "study_note", [], [])])
    gin.bind_parameter("pipeline.run_beside", ["heldout"])
    with self.assertRaisesRegex(ValueError, r"run_beside names \['heldout'\]"):
      pipeline.run(self.output_dir)
    self.assertFalse(os.path.exists(os.path.join(self.output_dir, "a")))

  def test_a_trainer_beside_a_step_keeps_its_cpu_time_apart(self):
    # A real child process stands for the trainer: it burns 0.6 s of CPU
    # while the in-process step beside it burns 0.3 s of its own, then
    # waits for the trainer to end.
    real_popen = subprocess.Popen

    def child(command, **kwargs):
      del command
      return real_popen([sys.executable, "-c",
                         "import time\nend = time.process_time() + 0.6\n"
                         "while time.process_time() < end: pass"], **kwargs)

    def busy(step_dir, output_dir, options):
      del step_dir, options
      end = time.process_time() + 0.3
      while time.process_time() < end:
        pass
      done = os.path.join(output_dir, "trainer", pipeline.DONE)
      deadline = time.time() + 30
      while not os.path.exists(done) and time.time() < deadline:
        time.sleep(0.05)

    self._register("study_busy", busy)
    self.enter_context(mock.patch.object(subprocess, "Popen", child))
    gin.bind_parameter("pipeline.steps", [
        steps_lib.Step("trainer", "train", ("t.gin",)),
        steps_lib.Step("busy", "study_busy")])
    gin.bind_parameter("pipeline.run_beside", ["trainer"])
    pipeline.run(self.output_dir)
    trainer = step_times.read(os.path.join(self.output_dir, "trainer"))
    busy_record = step_times.read(os.path.join(self.output_dir, "busy"))
    # Each its own: the trainer's time is not the in-process step's, though
    # the job waited for the trainer's process while that step ran.
    self.assertBetween(trainer["cpu_seconds"], 0.6, 3.0)
    self.assertBetween(busy_record["cpu_seconds"], 0.3, 0.6)
    self.assertLess(busy_record["started"], trainer["finished"])
    self.assertGreater(busy_record["finished"], trainer["finished"])

  def test_a_done_step_runs_again_after_a_step_it_reads_ran(self):
    # A report finished before a larger student's steps could run (their
    # condition, e.g. a time budget, did not hold); once they run, it is
    # written again instead of describing the earlier outputs.
    seen = []
    self._register("study_note", lambda d, o, b: seen.append(
        os.path.basename(d)))
    gin.bind_parameter("pipeline.steps", [
        steps_lib.Step("first", "study_note"),
        steps_lib.Step("larger", "study_note", when=steps_lib.Condition(
            lambda d: os.path.exists(os.path.join(d, "go")), "go exists")),
        steps_lib.Step("report", "study_note", reads=("first", "larger"))])
    pipeline.run(self.output_dir)
    open(os.path.join(self.output_dir, "go"), "w").close()
    with self.assertLogs("absl", level="INFO") as logs:
      pipeline.run(self.output_dir)
    pipeline.run(self.output_dir)
    self.assertEqual(seen, ["first", "report", "larger", "report"])
    self.assertTrue([l for l in logs.output if "report: done before, but "
                     "larger ran since; running it again" in l])
    self.assertTrue(os.path.exists(os.path.join(self.output_dir, "report",
                                                pipeline.DONE)))

  def test_a_step_run_again_does_not_find_its_earlier_outputs(self):
    # An export resumes from the files it finds (a SavedModel, a .tflite):
    # run again because its student was trained again (its directory
    # removed), it must not find the earlier student's.
    found = []

    def export(step_dir, output_dir, options):
      del output_dir, options
      path = os.path.join(step_dir, "model.tflite")
      found.append(os.path.exists(path))
      with open(path, "w", encoding="utf-8") as f:
        f.write("x")

    self._register("study_export", export)
    self._register("study_student", lambda d, o, b: None)
    gin.bind_parameter("pipeline.steps", [
        steps_lib.Step("student", "study_student"),
        steps_lib.Step("export", "study_export", reads=("student",))])
    pipeline.run(self.output_dir)
    pipeline.run(self.output_dir)  # Both done: nothing runs.
    tf.io.gfile.rmtree(os.path.join(self.output_dir, "student"))
    pipeline.run(self.output_dir)
    self.assertEqual(found, [False, False])
    self.assertTrue(os.path.exists(os.path.join(self.output_dir, "export",
                                                pipeline.DONE)))

  def test_a_rerun_with_other_settings_is_refused_before_anything_runs(self):
    # Rerun in the same directory with another budget (or student size), a
    # finished step would be skipped and its outputs reported as the new
    # command's; a started one would resume with the new settings.
    seen = []

    def student(step_dir, output_dir, options):
      del output_dir
      seen.append((os.path.basename(step_dir), options["steps"]))
      if options["steps"] == 3:
        raise RuntimeError("stopped")

    self._register("study_student", student)
    self._register("study_export", lambda d, o, b: seen.append("export"))
    def job(steps):
      gin.bind_parameter("pipeline.steps", [
          steps_lib.Step("student", "study_student",
                         config={"steps": steps,
                                 "teacher": steps_lib.JobPath("teacher")}),
          steps_lib.Step("export", "study_export", reads=("student",))])
    job(1)
    pipeline.run(self.output_dir)
    job(2)
    with self.assertRaisesRegex(
        pipeline.PipelineError,
        r"other settings.*\n- student \(done\): steps: 1 -> 2\n"
        r"Give a new --model_dir.*Nothing has run"):
      pipeline.run(self.output_dir)
    self.assertEqual(seen, [("student", 1), "export"])
    # The same command skips the finished steps; the student's directory
    # removed, the new settings run, and so does the export that reads it.
    job(1)
    pipeline.run(self.output_dir)
    tf.io.gfile.rmtree(os.path.join(self.output_dir, "student"))
    job(2)
    pipeline.run(self.output_dir)
    self.assertEqual(seen, [("student", 1), "export", ("student", 2),
                            "export"])
    # A step that started (and stopped) with one setting does not resume
    # with another.
    tf.io.gfile.rmtree(os.path.join(self.output_dir, "student"))
    job(3)
    with self.assertRaises(RuntimeError):
      pipeline.run(self.output_dir)
    job(4)
    with self.assertRaisesRegex(pipeline.PipelineError,
                                r"- student \(started\): steps: 3 -> 4"):
      pipeline.run(self.output_dir)

  def test_a_rerun_after_its_input_files_changed_is_refused(self):
    # A label corrected in train, the same number of examples: the settings
    # are the same, but a step done on the old file is not the new one's.
    data = os.path.join(self.output_dir, "data")
    os.makedirs(data)
    train = os.path.join(data, "train.csv")
    with open(train, "w") as f:
      f.write("text,label\na b,x\n")
    seen = []
    self._register("study_fit", lambda d, o, b: seen.append("fit"))
    job_dir = os.path.join(self.output_dir, "job")
    def job(inputs=True):
      gin.bind_parameter("pipeline.steps", [steps_lib.Step(
          "fit", "study_fit", config={"data": data},
          inputs=steps_lib.files_fingerprint({"train": train})
          if inputs else {})])
    job()
    pipeline.run(job_dir)
    pipeline.run(job_dir)
    self.assertEqual(seen, ["fit"])
    before = steps_lib.files_fingerprint({"train": train})["train"]
    with open(train, "w") as f:
      f.write("text,label\na b,y\n")
    after = steps_lib.files_fingerprint({"train": train})["train"]
    job()
    with self.assertRaisesRegex(
        pipeline.PipelineError,
        rf"- fit \(done\): files changed since it ran: train \({before} -> "
        rf"{after}\)\nGive a new --model_dir.*Nothing has run"):
      pipeline.run(job_dir)
    # A step recorded without inputs (an earlier version) is not checked.
    other = os.path.join(self.output_dir, "other")
    job(inputs=False)
    pipeline.run(other)
    job()
    pipeline.run(other)
    self.assertEqual(seen, ["fit", "fit"])

  def test_recorded_settings_hold_when_the_job_or_package_moves(self):
    package = os.path.dirname(os.path.dirname(os.path.abspath(
        steps_lib.__file__)))
    step = steps_lib.Step(
        "student", "train", ("distill.gin",),
        {"TEACHER_RUN": steps_lib.JobPath("teacher"),
         "INIT_CHECKPOINT": os.path.join(package, "assets", "student"),
         "EPOCHS": 40.0, "BINDINGS": ["a = 1"]})
    self.assertEqual(step.recipe(), {
        "kind": "train", "gin_files": ["'distill.gin'"],
        "config": {"TEACHER_RUN": "'{output_dir}/teacher'",
                   "INIT_CHECKPOINT": "'{mixvocab_tf}/assets/student'",
                   "EPOCHS": "40.0", "BINDINGS": "['a = 1']"}})
    # A finished job copied elsewhere is still done there.
    seen = []
    self._register("study_note", lambda d, o, b: seen.append(b))
    gin.bind_parameter("pipeline.steps", [steps_lib.Step(
        "a", "study_note", config={"run": steps_lib.JobPath("b")})])
    first = os.path.join(self.output_dir, "first")
    pipeline.run(first)
    moved = os.path.join(self.output_dir, "moved")
    os.rename(first, moved)
    pipeline.run(moved)
    self.assertLen(seen, 1)

  def test_the_step_list_is_evaluated_once_per_run(self):
    # own_data_steps reads the user's whole dataset each time gin evaluates
    # it: a run evaluates the job's step list once.
    calls = []

    @gin.configurable("counted_steps", module="pipeline_test")
    def counted_steps():
      calls.append(1)
      return [("r", "report", [], [])]

    self._record_report_steps()
    gin.parse_config("pipeline.steps = @pipeline_test.counted_steps()")
    pipeline.run(self.output_dir)
    self.assertLen(calls, 1)
    job = pipeline.configured_job()
    pipeline.run(self.output_dir, job)
    self.assertLen(calls, 2)


if __name__ == "__main__":
  tf.test.main()
