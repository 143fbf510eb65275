"""A pipeline job whose directory is on TensorFlow's ram:// file system.

ram:// stands for the remote file systems (gs://) a job's directory may be
on: step directories, `DONE` markers, summaries, logs and the report must go
through `tf.io.gfile`, and nothing may land in a local directory named
`ram:`. A "train" step's trainer runs in a child process, which cannot see
the parent's ram:// file system (it lives in the parent's memory), so no
trainer runs here: the in-process steps run for real, and a train step's
child is replaced by one that only prints, to test what the parent writes
for it (its log and its marker).
"""

import json
import os
from unittest import mock
import uuid

import gin
import tensorflow as tf

from mixvocab_tf.core import metrics_io
from mixvocab_tf.jobs import pipeline
from mixvocab_tf.text import heldout


def _read(path):
  with tf.io.gfile.GFile(path) as f:
    return f.read()


def _write(path, text):
  tf.io.gfile.makedirs(os.path.dirname(path))
  with tf.io.gfile.GFile(path, "w") as f:
    f.write(text)


class _FakeTrainer:
  """Stands for the trainer's child process: prints, writes nothing."""

  started = []

  def __init__(self, command, **kwargs):
    del kwargs
    self.started.append(command)
    self.stdout = iter(["I1126 01:20:19.000000 1 trainer.py:9] step 1/2\n",
                        "I1126 01:20:20.000000 1 trainer.py:9] step 2/2\n"])

  def wait(self):
    return 0


class PipelineOnRamTest(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    gin.clear_config()
    self.addCleanup(gin.clear_config)
    self.output_dir = f"ram://{uuid.uuid4().hex}/job"
    # A path made local by mistake (os.path.abspath('ram://...')) would be
    # written under the working directory.
    self.cwd = os.path.join(self.get_temp_dir(), uuid.uuid4().hex)
    os.makedirs(self.cwd)
    self.addCleanup(os.chdir, os.getcwd())
    os.chdir(self.cwd)

  def tearDown(self):
    self.assertEqual(os.listdir(self.cwd), [])
    super().tearDown()

  def _register(self, name, fn):
    def forget():
      pipeline._STEP_FUNCTIONS.pop(name, None)  # pylint: disable=protected-access
      pipeline._RERUN_KINDS.discard(name)  # pylint: disable=protected-access
    self.addCleanup(forget)
    pipeline.register_step_kind(name, fn)

  def test_steps_are_marked_done_on_ram_and_skipped_when_rerun(self):
    # The vocabulary step reuses a vocabulary already in the job's directory
    # (learning one takes a minute), then writes its summary.
    _write(os.path.join(self.output_dir, "student_vocab.txt"), "[PAD]\n")
    corpus = os.path.join(self.get_temp_dir(), f"{uuid.uuid4().hex}.txt")
    with open(corpus, "w", encoding="utf-8") as f:
      f.write("".join(f"line {i} of the corpus\n" for i in range(20)))
    _write(os.path.join(self.output_dir, "vocab_summary.json"),
           json.dumps({"size": 1}))
    calls = []

    def count(step_dir, output_dir, bindings):
      calls.append((step_dir, output_dir, bindings))
      _write(os.path.join(step_dir, "out.txt"), "counted\n")

    self._register("ram_count", count)
    gin.bind_parameter("pipeline.steps", [
        ("vocab", "vocab", [], []),
        # Its writer opens local files: they are copied to the step on ram://.
        ("split", "heldout_split", [], [f"corpus = [{corpus!r}]",
                                        "block_lines = 5",
                                        "heldout_every = 2"]),
        ("count", "ram_count", [], ["where = '{output_dir}/x'"])])
    pipeline.run(self.output_dir)
    # `{output_dir}` stays a ram:// path (local ones are made absolute).
    self.assertEqual(calls, [(os.path.join(self.output_dir, "count"),
                              self.output_dir,
                              {"where": f"{self.output_dir}/x"})])
    for name in ("vocab", "split", "count"):
      self.assertRegex(_read(os.path.join(self.output_dir, name,
                                          pipeline.DONE)), r"^\d+\.\d seconds")
    summary = json.loads(_read(os.path.join(self.output_dir, "vocab",
                                            "summary.json")))
    self.assertEqual(summary, {
        "size": 1, "path": os.path.join(self.output_dir, "student_vocab.txt")})
    self.assertEqual(_read(os.path.join(self.output_dir, "count", "out.txt")),
                     "counted\n")
    self.assertStartsWith(
        _read(os.path.join(self.output_dir, "split", heldout.HELDOUT_TEXT)),
        "line 0 of the corpus\n")
    pipeline.run(self.output_dir)
    self.assertLen(calls, 1)

  def test_a_train_steps_log_and_marker_are_written_on_ram(self):
    _FakeTrainer.started.clear()
    gin.bind_parameter("pipeline.steps", [("nokd", "train", ["nokd_small.gin"],
                                           [])])
    with mock.patch.object(pipeline.subprocess, "Popen", _FakeTrainer):
      pipeline.run(self.output_dir)
      pipeline.run(self.output_dir)
    step_dir = os.path.join(self.output_dir, "nokd")
    (command,) = _FakeTrainer.started  # The rerun skipped the done step.
    self.assertIn(f"--model_dir={step_dir}", command)
    self.assertEqual(_read(os.path.join(step_dir, "log.txt")).splitlines(),
                     ["I1126 01:20:19.000000 1 trainer.py:9] step 1/2",
                      "I1126 01:20:20.000000 1 trainer.py:9] step 2/2"])
    self.assertTrue(tf.io.gfile.exists(os.path.join(step_dir, pipeline.DONE)))

  def test_the_report_is_written_on_ram(self):
    # What a pretraining run and a SNIPS run leave in their directories.
    stage2 = os.path.join(self.output_dir, "stage2")
    snips = os.path.join(self.output_dir, "distill")
    for directory in (stage2, snips):
      tf.io.gfile.makedirs(directory)
      _write(os.path.join(directory, pipeline.DONE), "1.0 seconds\n")
    writer = tf.summary.create_file_writer(os.path.join(stage2, "train"))
    with writer.as_default():
      for step, loss in ((10, 8.0), (20, 7.0)):
        tf.summary.scalar("student_mlm/loss", loss, step=step)
    writer.close()
    metrics_io.write_metrics_json(
        os.path.join(snips, "best", "metrics.json"),
        {"intent_accuracy": 0.9, "slot_f1": 0.8, "slot_f1_argmax": 0.79},
        parameters=1_200_000, size_bytes=4_800_000, step=200,
        markdown_row="| student 6x96 | 1.20M | 4.8 MB | 90.00 |",
        description="distill_snips: student stage2")
    _write(os.path.join(snips, "eval", "history.jsonl"), "".join(
        json.dumps({"step": s, "metrics": {"slot_f1": f}}) + "\n"
        for s, f in ((100, 0.5), (200, 0.8))))
    gin.bind_parameter("pipeline.steps", [("report", "report", [], [])])
    pipeline.run(self.output_dir)
    report = _read(os.path.join(self.output_dir, "report.md"))
    self.assertIn(
        "| student 6x96 | 1.20M | 4.80 MB | 90.0 | 80.0 | 79.0 | 200 | 200 |",
        report)
    for png in ("pretraining_curves.png", "snips_slot_f1.png",
                "size_vs_accuracy.png"):
      self.assertIn(f"({png})", report)
      with tf.io.gfile.GFile(os.path.join(self.output_dir, png), "rb") as f:
        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    step_dir = os.path.join(self.output_dir, "report")
    summary = json.loads(_read(os.path.join(step_dir, "summary.json")))
    self.assertEqual(list(summary["snips"]), ["distill"])
    self.assertTrue(tf.io.gfile.exists(os.path.join(step_dir, pipeline.DONE)))


if __name__ == "__main__":
  tf.test.main()
