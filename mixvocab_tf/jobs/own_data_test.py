"""Tests of the own-data job's steps (no training: see tests/test_own_data.py)."""

import json
import os
import re
import types
from unittest import mock

import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import run_files
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.jobs import own_data
from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks import teacher_check
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data


def _encoder():
  return student_encoder.build_student_encoder(
      None, vocab_size=100, num_layers=1, hidden_size=32,
      max_sequence_length=16)


def _inputs():
  return dict(input_word_ids=tf.ones([1, 4], tf.int32),
              input_mask=tf.ones([1, 4], tf.int32),
              input_type_ids=tf.zeros([1, 4], tf.int32))


def _matched(multipliers, model):
  """The names of `model`'s trainable variables a pattern matches."""
  pattern, = multipliers
  return sorted(v.name for v in model.trainable_variables
                if re.search(pattern, v.name))


def _write_text_classification(data_dir):
  """A 20-query, 2-label CSV dataset (train and dev) in data_dir."""
  os.makedirs(data_dir, exist_ok=True)
  for split in ("train", "dev"):
    with open(os.path.join(data_dir, f"{split}.csv"), "w") as f:
      f.write("text,label\n" + "".join(
          f"query number {i},{'ab'[i % 2]}\n" for i in range(20)))
  return data_dir


def _write_pairs(data_dir):
  """A 20-pair, 2-label CSV dataset (train and dev) in data_dir."""
  os.makedirs(data_dir)
  for split in ("train", "dev"):
    with open(os.path.join(data_dir, f"{split}.csv"), "w") as f:
      f.write("text_a,text_b,label\n" + "".join(
          f"query {i},answer {i},{'ab'[i % 2]}\n" for i in range(20)))
  return data_dir


def _write_intent_slot(data_dir, train=30):
  """An intent-and-slot dataset in data_dir: `train` queries, 10 valid."""
  for split, rows in (("train", train), ("valid", 10)):
    os.makedirs(os.path.join(data_dir, split))
    for name, line in (("seq.in", "play some jazz"),
                       ("seq.out", "O O B-genre"),
                       ("label", "PlayMusic")):
      with open(os.path.join(data_dir, split, name), "w") as f:
        f.write("".join(f"{line}\n" for _ in range(rows)))
  return data_dir


def _write_finished_run(run, init):
  """The files a warm start reads of a finished intent-and-slot run whose
  student started from `init` (labels aside)."""
  run_files.write_json(os.path.join(run, "data", own_data.SUMMARY_JSON),
                       {"kind": "intent_slot", "pair": None})
  for step in ("teacher", "student"):
    tf.train.Checkpoint(v=tf.Variable(1.0)).write(
        os.path.join(run, step, "best", "ckpt-1"))
    with open(os.path.join(run, step, "best", "checkpoint"), "w") as f:
      f.write('model_checkpoint_path: "ckpt-1"\n')
  run_files.write_json(os.path.join(run, "student", "step.json"),
                       {"config": {"INIT_CHECKPOINT": repr(init)}})
  return run


class OwnDataStepsTest(tf.test.TestCase):

  def test_column_names_reach_every_step_that_reads_the_files(self):
    # SST-2's own files name the text column 'sentence': the task, the epoch
    # budget of both trainers, and the export and report steps must all read
    # it (the epoch budget once read 'text' and failed after the check).
    data_dir = self.get_temp_dir()
    for split, rows in (("train", 30), ("dev", 10)):
      with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
        f.write("sentence\tlabel\n")
        for i in range(rows):
          f.write(f"a short sentence number {i}\t{i % 2}\n")
    steps = {step.name: step for step in
             own_data.own_data_steps(data_dir, student=data_dir,
                                     text_column="sentence")}
    for name in ("teacher", "student"):
      bindings = steps[name].bindings("/job")
      # The task and its epoch budget read one dataset, named once.
      self.assertIn("DATASET = 'files'", bindings)
      self.assertIn(f"DATA_DIR = {os.path.abspath(data_dir)!r}", bindings)
      self.assertIn("text_classification_dataset.text_column = 'sentence'",
                    bindings)
      self.assertIn("text_classification_dataset.label_column = 'label'",
                    bindings)
      self.assertFalse([b for b in bindings if "GLUE" in b], bindings)
    for name in ("data", "export", "report"):
      self.assertEqual(steps[name].options("/job")["text_column"],
                       "sentence")
    # The student reads the teacher's run, the export the student's.
    self.assertEqual(steps["student"].options("/job")["TEACHER_RUN"],
                     "/job/teacher")
    self.assertEqual(steps["export"].options("/job")["run"], "/job/student")

  def test_students_stop_as_measured(self):
    # An intent-and-slot student's score peaks late as the learning rate
    # decays: no early stopping (a user's student_bindings, appended after,
    # still override it); a text classifier's stops after STUDENT_PATIENCE
    # evaluations without a better score.
    data_dir = _write_intent_slot(self.get_temp_dir())
    steps = {step.name: step.bindings("/job") for step in
             own_data.own_data_steps(data_dir, student=data_dir,
                                     student_bindings=["A.b = 1"])}
    student = steps["student"]
    self.assertIn("DATASET = 'files'", student)
    self.assertIn("Trainer.early_stopping_patience = None", student)
    self.assertEqual(student[-1], "A.b = 1")
    self.assertIn("Trainer.early_stopping_patience = 2", steps["teacher"])
    # Both stop at a perfect validation score, which nothing can replace.
    for name in ("teacher", "student"):
      self.assertIn("Trainer.best_metric_ceiling = 1.0", steps[name])
    text_dir = _write_text_classification(os.path.join(data_dir, "text"))
    steps = {step.name: step.bindings("/job") for step in
             own_data.own_data_steps(text_dir, student=data_dir)}
    self.assertIn("Trainer.early_stopping_patience = "
                  f"{own_data.STUDENT_PATIENCE}", steps["student"])
    self.assertGreater(own_data.STUDENT_PATIENCE, 2)

  def test_unlabelled_texts_reach_the_student_and_are_checked_first(self):
    root = self.get_temp_dir()
    data_dir = _write_intent_slot(os.path.join(root, "slots"))
    logs = os.path.join(root, "logs.txt")
    with open(logs, "w", encoding="utf-8") as f:
      # The second is the dataset's query (in valid and train), left out.
      f.write("play some blues\nPlay  some JAZZ\n")
    with self.assertLogs(level="WARNING") as logged:
      steps = {step.name: step for step in own_data.own_data_steps(
          data_dir, student=data_dir, unlabelled=logs)}
    self.assertIn(f"1 of the 2 unlabelled texts of {os.path.abspath(logs)} "
                  "are texts of the labelled dataset (1 in validation;",
                  "\n".join(logged.output))
    texts = steps["student"].options("/job")["DistillIntentSlotTask.unlabelled"]
    self.assertEqual(texts, steps["export"].options("/job")["unlabelled"])
    self.assertRegex(texts, r"^/job/unlabelled/texts_unlabelled[0-9a-f]{8}.txt$")
    self.assertIn("unlabelled", steps["student"].reads)
    self.assertEqual(steps["report"].options("/job")["unlabelled"],
                     os.path.abspath(logs))
    # The step writes the texts the student reads, and their counts.
    job = os.path.join(root, "job")
    step_dir = os.path.join(job, "unlabelled")
    os.makedirs(step_dir)
    own_data.unlabelled_step(step_dir, job, steps["unlabelled"].options(job))
    with open(steps["student"].options(job)[
        "DistillIntentSlotTask.unlabelled"], encoding="utf-8") as f:
      self.assertEqual(f.read(), "play some blues\n")
    summary = run_files.read_json(os.path.join(step_dir, "summary.json"))
    self.assertEqual((summary["texts"], summary["kept"], summary["in_dataset"]),
                     (2, 1, {"validation": 1, "train": 0}))
    # A file edited after the job started is not taken for the one it read.
    with open(logs, "a", encoding="utf-8") as f:
      f.write("play some rock\n")
    with self.assertRaisesRegex(errors.DataError, "other texts than when"):
      own_data.unlabelled_step(step_dir, job, steps["unlabelled"].options(job))
    # More texts than max_unlabelled: a seeded draw, in the file's order.
    many = os.path.join(root, "many.txt")
    with open(many, "w", encoding="utf-8") as f:
      f.write("".join(f"play song {i}\n" for i in range(50)))
    with self.assertLogs(level="WARNING") as logged:
      steps = {step.name: step for step in own_data.own_data_steps(
          data_dir, student=data_dir, unlabelled=many, max_unlabelled=20)}
    self.assertIn("takes 20 of the 50 unlabelled texts, drawn at random",
                  "\n".join(logged.output))
    job = os.path.join(root, "job_many")
    os.makedirs(os.path.join(job, "unlabelled"))
    own_data.unlabelled_step(os.path.join(job, "unlabelled"), job,
                             steps["unlabelled"].options(job))
    with open(steps["student"].options(job)[
        "DistillIntentSlotTask.unlabelled"], encoding="utf-8") as f:
      drawn = f.read().splitlines()
    self.assertLen(drawn, 20)
    self.assertEqual(drawn, sorted(drawn, key=lambda t: int(t.split()[-1])))
    self.assertNotEqual(drawn, [f"play song {i}" for i in range(20)])
    summary = run_files.read_json(os.path.join(job, "unlabelled",
                                               "summary.json"))
    self.assertEqual((summary["kept"], summary["used"]), (50, 20))
    with self.assertRaisesRegex(ValueError, "max_unlabelled must be positive"):
      own_data.own_data_steps(data_dir, student=data_dir, unlabelled=many,
                              max_unlabelled=0)
    # Nothing but the dataset's own texts: nothing to learn from.
    known = os.path.join(root, "known.txt")
    with open(known, "w", encoding="utf-8") as f:
      f.write("play some jazz\n")
    with self.assertRaisesRegex(errors.DataError, "every text of the file"):
      own_data.own_data_steps(data_dir, student=data_dir, unlabelled=known)
    # Without it, nothing names it (runs of earlier versions resume).
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir)}
    self.assertNotIn("unlabelled", " ".join(steps["student"].bindings("/job")))
    self.assertNotIn("unlabelled", steps["report"].options("/job"))
    text_dir = _write_text_classification(os.path.join(root, "text"))
    steps = {step.name: step for step in own_data.own_data_steps(
        text_dir, student=data_dir, unlabelled=logs)}
    self.assertIn("DistillTextClassificationTask.unlabelled",
                  steps["student"].options("/job"))
    # Before anything runs: a missing or empty file, and pairs.
    with self.assertRaisesRegex(errors.DataError, "does not exist"):
      own_data.own_data_steps(data_dir, student=data_dir,
                              unlabelled=os.path.join(root, "none.txt"))
    empty = os.path.join(root, "empty.txt")
    with open(empty, "w", encoding="utf-8") as f:
      f.write("\n \n")
    with self.assertRaisesRegex(errors.DataError, "is empty"):
      own_data.own_data_steps(data_dir, student=data_dir, unlabelled=empty)
    pairs = _write_pairs(os.path.join(root, "pairs"))
    with self.assertRaisesRegex(errors.DataError, "a dataset of text pairs"):
      own_data.own_data_steps(pairs, student=data_dir, unlabelled=logs)

  def test_out_of_scope_texts_join_train_for_teacher_and_student(self):
    root = self.get_temp_dir()
    data_dir = _write_intent_slot(os.path.join(root, "slots"))
    requests = os.path.join(root, "requests.txt")
    with open(requests, "w", encoding="utf-8") as f:
      # The second is the dataset's query (in valid and train), left out.
      f.write("set an alarm for six\nPlay  some JAZZ\n")
    with self.assertLogs(level="WARNING") as logged:
      steps = {step.name: step for step in own_data.own_data_steps(
          data_dir, student=data_dir, out_of_scope=requests)}
    self.assertIn(f"1 of the 2 out-of-scope texts of {os.path.abspath(requests)}"
                  " are texts of the labelled dataset (1 in validation;",
                  "\n".join(logged.output))
    texts = steps["teacher"].options("/job")["intent_slot_dataset.out_of_scope"]
    self.assertRegex(texts, r"^/job/out_of_scope/texts_[0-9a-f]{8}.txt$")
    self.assertEqual(
        texts, steps["student"].options("/job")[
            "intent_slot_dataset.out_of_scope"])
    self.assertIn("out_of_scope", steps["teacher"].reads)
    self.assertIn("out_of_scope", steps["student"].reads)
    self.assertEqual(steps["report"].options("/job")["out_of_scope"],
                     os.path.abspath(requests))
    # The epoch budgets count the added texts: 31 train queries, not 30.
    self.assertEqual(steps["teacher"].options("/job")["EPOCHS"],
                     round(600 * 64 / 31, 2))
    # The step writes the texts; the trainers' dataset adds them to train.
    job = os.path.join(root, "job")
    step_dir = os.path.join(job, "out_of_scope")
    os.makedirs(step_dir)
    own_data.out_of_scope_step(step_dir, job,
                               steps["out_of_scope"].options(job))
    path = steps["teacher"].options(job)["intent_slot_dataset.out_of_scope"]
    train = user_dataset.IntentSlotFiles(data_dir, path).examples("train")
    self.assertLen(train.intents, 31)
    self.assertEqual((train.words[-1], train.tags[-1], train.intents[-1]),
                     (["set", "an", "alarm", "for", "six"], ["O"] * 5,
                      "out_of_scope"))
    valid = user_dataset.IntentSlotFiles(data_dir, path).examples("valid")
    self.assertLen(valid.intents, 10)
    self.assertEqual(run_files.read_json(os.path.join(
        step_dir, "summary.json"))["texts"], 1)
    with open(requests, "a", encoding="utf-8") as f:
      f.write("call my mother\n")
    with self.assertRaisesRegex(errors.DataError, "other texts than when"):
      own_data.out_of_scope_step(step_dir, job,
                                 steps["out_of_scope"].options(job))
    # 'builtin': as many corpus sentences as train's largest label, >= 1,000.
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir, out_of_scope="builtin")}
    job = os.path.join(root, "job_builtin")
    os.makedirs(os.path.join(job, "out_of_scope"))
    own_data.out_of_scope_step(os.path.join(job, "out_of_scope"), job,
                               steps["out_of_scope"].options(job))
    with open(steps["student"].options(job)[
        "intent_slot_dataset.out_of_scope"], encoding="utf-8") as f:
      self.assertLen(f.read().splitlines(), 1000)
    # Or as many as asked.
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir, out_of_scope="builtin",
        out_of_scope_count=250)}
    job = os.path.join(root, "job_250")
    os.makedirs(os.path.join(job, "out_of_scope"))
    own_data.out_of_scope_step(os.path.join(job, "out_of_scope"), job,
                               steps["out_of_scope"].options(job))
    with open(steps["student"].options(job)[
        "intent_slot_dataset.out_of_scope"], encoding="utf-8") as f:
      self.assertLen(f.read().splitlines(), 250)
    with self.assertRaisesRegex(ValueError, "out_of_scope_count must be"):
      own_data.own_data_steps(data_dir, student=data_dir,
                              out_of_scope="builtin", out_of_scope_count=0)
    # Text classification: its dataset's binding, the label among train's.
    text_dir = _write_text_classification(os.path.join(root, "text"))
    steps = {step.name: step for step in own_data.own_data_steps(
        text_dir, student=data_dir, out_of_scope=requests)}
    self.assertIn("text_classification_dataset.out_of_scope",
                  steps["student"].options("/job"))
    job = os.path.join(root, "job_text")
    os.makedirs(os.path.join(job, "out_of_scope"))
    own_data.out_of_scope_step(os.path.join(job, "out_of_scope"), job,
                               steps["out_of_scope"].options(job))
    files = user_dataset.TextClassificationFiles(
        text_dir, steps["student"].options(job)[
            "text_classification_dataset.out_of_scope"])
    self.assertEqual(files.label_names, ("a", "b", "out_of_scope"))
    # The file's three texts: none is a text of this dataset.
    self.assertEqual(files.num_train_examples(), 23)
    self.assertEqual(files.examples("train").labels[-1], "out_of_scope")
    # Without it, nothing names it (runs of earlier versions resume).
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir)}
    self.assertNotIn("out_of_scope", steps)
    self.assertNotIn("out_of_scope", " ".join(steps["student"].bindings("/job")))
    self.assertNotIn("out_of_scope", steps["report"].options("/job"))
    # Before anything runs: a missing file, nothing new, pairs.
    with self.assertRaisesRegex(errors.DataError, "does not exist"):
      own_data.own_data_steps(data_dir, student=data_dir,
                              out_of_scope=os.path.join(root, "none.txt"))
    known = os.path.join(root, "known.txt")
    with open(known, "w", encoding="utf-8") as f:
      f.write("play some jazz\n")
    with self.assertRaisesRegex(errors.DataError, "no out-of-scope text"):
      own_data.own_data_steps(data_dir, student=data_dir, out_of_scope=known)
    empty = os.path.join(root, "empty.txt")
    with open(empty, "w", encoding="utf-8") as f:
      f.write("\n \n")
    with self.assertRaisesRegex(errors.DataError, "is empty"):
      own_data.own_data_steps(data_dir, student=data_dir, out_of_scope=empty)
    latin1 = os.path.join(root, "latin1.txt")
    with open(latin1, "wb") as f:
      f.write("caf\u00e9 ol\u00e9\n".encode("latin-1"))
    with self.assertRaisesRegex(errors.DataError, "UTF-8"):
      own_data.own_data_steps(data_dir, student=data_dir, out_of_scope=latin1)
    # A slot tagger's data (no intents): out-of-scope texts would be an
    # intent of their own.
    tagger = _write_intent_slot(os.path.join(root, "tagger"))
    for split in ("train", "valid"):
      os.remove(os.path.join(tagger, split, "label"))
    with self.assertRaisesRegex(errors.DataError,
                                "OUT_OF_SCOPE = None for a slot tagger"):
      own_data.own_data_steps(tagger, student=tagger, out_of_scope="builtin")
    pairs = _write_pairs(os.path.join(root, "pairs"))
    with self.assertRaisesRegex(errors.DataError, "a dataset of text pairs"):
      own_data.own_data_steps(pairs, student=data_dir, out_of_scope="builtin")

  def test_out_of_scope_sources_join_train_together(self):
    root = self.get_temp_dir()
    data_dir = _write_intent_slot(os.path.join(root, "slots"))
    requests = os.path.join(root, "requests.txt")
    with open(requests, "w", encoding="utf-8") as f:
      f.write("set an alarm for six\ncall my mother\nset an alarm for six\n")
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir, out_of_scope=["builtin", requests],
        out_of_scope_count=250)}
    self.assertEqual(steps["report"].options("/job")["out_of_scope"],
                     ["builtin", os.path.abspath(requests)])
    job = os.path.join(root, "job")
    step_dir = os.path.join(job, "out_of_scope")
    os.makedirs(step_dir)
    own_data.out_of_scope_step(step_dir, job,
                               steps["out_of_scope"].options(job))
    with open(steps["teacher"].options(job)[
        "intent_slot_dataset.out_of_scope"], encoding="utf-8") as f:
      texts = f.read().splitlines()
    # The corpus's 250 sentences, then the file's texts, each once.
    self.assertLen(texts, 252)
    self.assertEqual(texts[250:], ["set an alarm for six", "call my mother"])
    self.assertEqual(
        run_files.read_json(os.path.join(step_dir, "summary.json"))["source"],
        "sentences of the package's built-in corpus and "
        + os.path.abspath(requests))
    # The file edited after the job started: refused, naming both sources.
    with open(requests, "a", encoding="utf-8") as f:
      f.write("order a pizza\n")
    with self.assertRaisesRegex(errors.DataError,
                                "^builtin and .*requests.txt: other texts"):
      own_data.out_of_scope_step(step_dir, job,
                                 steps["out_of_scope"].options(job))
    # Refused before anything runs: not a string, one twice, a missing file
    # among them.
    for option in ([requests, 3], ["builtin", "builtin"], 7):
      with self.assertRaisesRegex(ValueError, "OUT_OF_SCOPE"):
        own_data.own_data_steps(data_dir, student=data_dir,
                                out_of_scope=option)
    with self.assertRaisesRegex(errors.DataError, "none.txt.*does not exist"):
      own_data.own_data_steps(data_dir, student=data_dir, out_of_scope=[
          "builtin", os.path.join(root, "none.txt")])

  def test_report_says_how_off_topic_input_is_answered(self):
    off_topic = {"texts": 300, "out_of_scope": 0, "confident": 135,
                 "examples": [["we must act now", "PlayMusic", 0.998]]}
    without = "\n".join(own_data.off_topic_lines(off_topic, None, {}, True,
                                                  "/job"))
    self.assertIn("gives another intent at a score of 0.9 or more to 45.0% "
                  "(most surely: \"we must act now\" -> PlayMusic (1.00))",
                  without)
    self.assertIn("OUT_OF_SCOPE = 'builtin'", without)
    self.assertIn("or both: `['builtin', 'refusals.txt']`", without)
    job = self.get_temp_dir()
    os.makedirs(os.path.join(job, "out_of_scope"))
    run_files.write_json(os.path.join(job, "out_of_scope", "summary.json"),
                         {"texts": 100, "source": "the corpus"})
    off_topic.update(out_of_scope=291, confident=3)
    validation = {"confused": [
        {"gold": "PlayMusic", "predicted": "out_of_scope", "count": 2},
        {"gold": "PlayMusic", "predicted": "RateBook", "count": 5}]}
    with_label = "\n".join(own_data.off_topic_lines(
        off_topic, "builtin", validation, True, job))
    self.assertIn("Train held 100 out-of-scope texts labelled `out_of_scope` "
                  "(`OUT_OF_SCOPE`: the corpus).", with_label)
    self.assertIn("answers `out_of_scope` to 97.0% and gives another intent "
                  "at a score of 0.9 or more to 1.0%", with_label)
    self.assertIn("to 2 validation examples of another intent", with_label)
    # What to add: a file of requests to the sentences, the sentences to a
    # file, the kinds neither holds to both.
    self.assertIn("give both: `OUT_OF_SCOPE = ['builtin', 'refusals.txt']`",
                  with_label)
    advice = lambda option: "\n".join(own_data.off_topic_lines(
        off_topic, option, validation, True, job))
    self.assertIn("`OUT_OF_SCOPE = ['builtin', ...]` adds the built-in",
                  advice("/data/refusals.txt"))
    self.assertIn("Requests of kinds the file does not hold",
                  advice(["builtin", "/data/refusals.txt"]))
    self.assertNotIn("['builtin'", advice(["builtin", "/data/refusals.txt"]))
    # Validation examples turned away: fewer built-in sentences, where some
    # were given.
    self.assertIn("Fewer built-in sentences turn fewer examples away",
                  with_label)
    self.assertNotIn("Fewer built-in", advice("/data/refusals.txt"))
    self.assertNotIn("Fewer built-in", "\n".join(own_data.off_topic_lines(
        off_topic, "builtin", {}, True, job)))

  def test_out_of_scope_answers_do_not_head_the_worst_labels(self):
    rows = [{"label": "out_of_scope", "support": 0, "f1": 0.0},
            {"label": "PlayMusic", "support": 9, "f1": 0.8},
            {"label": "RateBook", "support": 0, "f1": 0.0}]
    self.assertEqual([r["label"] for r in own_data.scored_labels(rows)],
                     ["PlayMusic", "RateBook"])
    rows[0]["support"] = 3  # A split that holds such examples scores it.
    self.assertLen(own_data.scored_labels(rows), 3)

  def test_steps_that_read_the_files_record_their_fingerprint(self):
    # A corrected label leaves the settings as they were; the steps that
    # read the files must not be skipped as done on the old ones.
    data_dir = _write_intent_slot(self.get_temp_dir())
    def inputs():
      return {step.name: step.inputs for step in
              own_data.own_data_steps(data_dir, student=data_dir)}
    before = inputs()
    self.assertEqual(sorted(name for name, found in before.items() if found),
                     ["data", "export", "student", "teacher"])
    self.assertEqual(sorted(before["teacher"]), ["train", "validation"])
    with open(os.path.join(data_dir, "valid", "label"), "w") as f:
      f.write("PlayMusic\n" * 9 + "GetWeather\n")
    after = inputs()
    self.assertEqual(after["teacher"]["train"], before["teacher"]["train"])
    self.assertNotEqual(after["teacher"]["validation"],
                        before["teacher"]["validation"])

  def test_teachers_train_their_heads_at_a_larger_rate(self):
    data_dir = _write_intent_slot(self.get_temp_dir())
    steps = {step.name: step for step in
             own_data.own_data_steps(data_dir, student=data_dir)}
    config = steps["teacher"].options("/job")
    multipliers = config["Trainer.learning_rate_multipliers"]
    self.assertEqual(list(multipliers.values()), [100.0])
    # 30 queries: the 600-step floor sets the epochs, not the default 3.
    self.assertEqual(config["EPOCHS"], 1280.0)
    # The patterns name the joint model's two heads and nothing else.
    model = joint_intent_slot_model.JointIntentSlotModel(
        _encoder(), num_intents=3, num_slots=4)
    model(_inputs())
    self.assertEqual(_matched(multipliers, model), [
        "intent_classifier/bias:0", "intent_classifier/kernel:0",
        "slot_classifier/bias:0", "slot_classifier/kernel:0"])
    self.assertFalse([b for b in steps["student"].bindings("/job")
                      if "multipliers" in b])
    text_dir = _write_text_classification(os.path.join(data_dir, "text"))
    steps = {step.name: step.options("/job") for step in
             own_data.own_data_steps(text_dir, student=data_dir)}
    multipliers = steps["teacher"]["Trainer.learning_rate_multipliers"]
    self.assertEqual(list(multipliers.values()), [100.0])
    model = sentence_classifier.SentenceClassifier(_encoder(), num_classes=2,
                                                   pooling="mean")
    model(_inputs())
    self.assertEqual(_matched(multipliers, model),
                     ["classifier/bias:0", "classifier/kernel:0"])
    self.assertNotIn("Trainer.learning_rate_multipliers", steps["student"])

  def test_small_slot_splits_get_more_slot_substituted_copies(self):
    def student(train):
      data_dir = _write_intent_slot(
          os.path.join(self.get_temp_dir(), str(train)), train)
      return {step.name: step.options("/job") for step in
              own_data.own_data_steps(data_dir, student=data_dir)}["student"]
    # 30 queries: the most copies, each value replaced at 0.8.
    small = student(30)
    self.assertEqual(small["DistillIntentSlotTask.augment_copies"],
                     own_data.MOST_SLOT_COPIES)
    self.assertEqual(small["DistillIntentSlotTask.augment_p"], 0.8)
    # 3,000: 4 copies; 4,001 and more: the config's 2 at its 0.5 (unset).
    self.assertEqual(student(3000)["DistillIntentSlotTask.augment_copies"], 4)
    large = student(4001)
    self.assertNotIn("DistillIntentSlotTask.augment_copies", large)
    self.assertNotIn("DistillIntentSlotTask.augment_p", large)

  def test_rarer_intents_get_more_slot_substituted_copies(self):
    data_dir = os.path.join(self.get_temp_dir(), "skewed")
    for split, rows in (("train", [("play some jazz", "O O B-genre",
                                    "PlayMusic")] * 90 +
                                  [("rate it 5", "O O B-rating",
                                    "RateBook")] * 10),
                        ("valid", [("play blues", "O B-genre",
                                    "PlayMusic")] * 4)):
      os.makedirs(os.path.join(data_dir, split))
      for i, name in enumerate(("seq.in", "seq.out", "label")):
        with open(os.path.join(data_dir, split, name), "w") as f:
          f.write("".join(f"{row[i]}\n" for row in rows))
    with self.assertLogs("absl", level="INFO") as logs:
      steps = {step.name: step.options("/job") for step in
               own_data.own_data_steps(data_dir, student=data_dir)}
    self.assertEqual(steps["student"]["DistillIntentSlotTask.augment_balance"],
                     own_data.SLOT_COPIES_BALANCE)
    # 100 queries: 12 copies; mean 50: RateBook 12 * 5 ** 0.5, PlayMusic
    # 12 * (5 / 9) ** 0.5.
    line, = [line for line in logs.output if "more slot-substituted" in line]
    self.assertIn("RateBook 27, PlayMusic 9 (own_data_steps.augment_balance "
                  "= 0.5; 0: 12 each)", line)
    self.assertNotIn("augment_balance", steps["teacher"])
    # Intents of one size (or one intent): the copies as before, unset.
    even = _write_intent_slot(os.path.join(self.get_temp_dir(), "even"))
    self.assertNotIn("DistillIntentSlotTask.augment_balance", {
        step.name: step.options("/job") for step in own_data.own_data_steps(
            even, student=even)}["student"])

  def test_slot_values_reach_the_students_and_are_checked_first(self):
    data_dir = _write_intent_slot(os.path.join(self.get_temp_dir(), "d"))
    values = os.path.join(self.get_temp_dir(), "values")
    os.makedirs(values)
    with open(os.path.join(values, "genre.txt"), "w") as f:
      f.write("blues\nbig band\n")
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir, slot_values=values)}
    self.assertEqual(
        steps["student"].options("/job")["DistillIntentSlotTask.slot_values"],
        values)
    self.assertNotIn("DistillIntentSlotTask.slot_values",
                     steps["teacher"].options("/job"))
    # The students and their exports are refused on rerun when a list
    # changes, the teacher is not.
    self.assertIn("slot_values", steps["student"].inputs)
    self.assertIn("slot_values", steps["export"].inputs)
    self.assertNotIn("slot_values", steps["teacher"].inputs)
    # A split small enough for more copies than the config's 2 gets the
    # most with lists; a large one keeps the config's.
    def copies(train):
      directory = _write_intent_slot(
          os.path.join(self.get_temp_dir(), str(train)), train)
      return {step.name: step.options("/job") for step in
              own_data.own_data_steps(directory, student=directory,
                                      slot_values=values)}["student"].get(
                                          "DistillIntentSlotTask.augment_copies")
    self.assertEqual(copies(3000), own_data.MOST_SLOT_COPIES)
    self.assertIsNone(copies(4001))
    # A list of a slot type train lacks is refused before anything runs.
    with open(os.path.join(values, "artist.txt"), "w") as f:
      f.write("madonna\n")
    with self.assertRaisesRegex(errors.DataError,
                                "artist.txt: train's tags have no slot type "
                                "'artist'.*one of train's slot types: genre"):
      own_data.own_data_steps(data_dir, student=data_dir, slot_values=values)
    os.remove(os.path.join(values, "artist.txt"))
    with self.assertRaisesRegex(ValueError, "augment_copies = 0"):
      own_data.own_data_steps(data_dir, student=data_dir, slot_values=values,
                              augment_copies=0)
    text_dir = _write_text_classification(
        os.path.join(self.get_temp_dir(), "t"))
    with self.assertRaisesRegex(errors.DataError, "text classification"):
      own_data.own_data_steps(text_dir, student=text_dir, slot_values=values)

  def test_a_warm_start_reads_the_earlier_run_and_runs_a_share(self):
    root = self.get_temp_dir()
    data_dir = _write_intent_slot(os.path.join(root, "slots"))
    init = os.path.join(root, "pretrained")
    os.makedirs(init)
    run = _write_finished_run(os.path.join(root, "run"), init)
    def run_labels(intents):
      for step in ("teacher", "student"):
        intent_slot_data.IntentSlotLabels(intents, ["O", "B-genre"]).save(
            os.path.join(run, step, "snips_labels.json"))

    # The run's labels: one intent that train no longer has, said first.
    run_labels(["BookRestaurant", "PlayMusic"])
    dataset = user_dataset.load_dataset(data_dir)
    found = own_data.check_warm_start(run, dataset, None, "6x96", 0.5)
    self.assertEqual(found["labels"], "intents: 1 no longer (BookRestaurant)")
    self.assertEqual(found["new_share"], 0.0)
    cold = {step.name: step.options("/job") for step in
            own_data.own_data_steps(data_dir)}
    warm = {step.name: step.options("/job") for step in
            own_data.own_data_steps(data_dir, warm_start=run)}
    self.assertEqual(warm["teacher"]["IntentSlotTask.warm_start"],
                     os.path.join(run, "teacher"))
    self.assertEqual(warm["student"]["IntentSlotTask.warm_start"],
                     os.path.join(run, "student"))
    self.assertNotIn("IntentSlotTask.warm_start", cold["teacher"])
    # The student is built from the pretrained student the run's started
    # from; both run half their budgets (30 queries: the floors').
    self.assertEqual(warm["student"]["INIT_CHECKPOINT"], init)
    for name in ("teacher", "student"):
      self.assertAlmostEqual(
          warm[name]["EPOCHS"],
          cold[name]["EPOCHS"] * own_data.WARM_START_FRACTION, delta=0.01)
    self.assertEqual(warm["report"]["warm_start"], run)
    self.assertNotIn("warm_start_new_share", warm["report"])
    # Every train query of an intent that the run lacked: the teacher warm
    # at half its budget, the student from its pretrained start with its
    # whole budget, as without a warm start, said when the job starts.
    run_labels(["BookRestaurant"])
    self.assertEqual(own_data.check_warm_start(run, dataset, None, "6x96",
                                               0.5)["new_share"], 1.0)
    with self.assertLogs("absl", level="INFO") as logs:
      most = {step.name: step.options("/job") for step in
              own_data.own_data_steps(data_dir, warm_start=run)}
    self.assertIn("a student distilled from the start. Labels since then: "
                  "intents: 1 new (PlayMusic); intents: 1 no longer "
                  "(BookRestaurant) (100.0% of train's examples carry one: "
                  "more than 20%)", "\n".join(logs.output))
    self.assertEqual(most["teacher"]["IntentSlotTask.warm_start"],
                     os.path.join(run, "teacher"))
    self.assertNotIn("IntentSlotTask.warm_start", most["student"])
    self.assertEqual(most["student"]["INIT_CHECKPOINT"], init)
    self.assertAlmostEqual(most["student"]["EPOCHS"], cold["student"]["EPOCHS"],
                           delta=0.01)
    self.assertEqual(most["report"]["warm_start_new_share"], 1.0)
    run_labels(["BookRestaurant", "PlayMusic"])
    # A run that distilled a larger size too: its first student, said.
    os.makedirs(os.path.join(run, "student_6x192"))
    open(os.path.join(run, "student_6x192", "DONE"), "w").close()
    with self.assertLogs("absl", level="WARNING") as logs:
      own_data.own_data_steps(data_dir, warm_start=run)
    self.assertIn("also distilled student_6x192 (STUDENT_SIZE = 'auto'); the "
                  "warm start continues its first student, the 6x96",
                  "\n".join(logs.output))
    # Checked before anything runs.
    self.assertEqual(
        {s.name: s.options("/job") for s in own_data.own_data_steps(
            data_dir, warm_start=run, student=init)}["student"]
        ["INIT_CHECKPOINT"], init)
    with self.assertRaisesRegex(ValueError, "distilled from STUDENT = "):
      own_data.own_data_steps(data_dir, warm_start=run, student=data_dir)
    with self.assertRaisesRegex(ValueError, "STUDENT_SIZE keeps"):
      own_data.own_data_steps(data_dir, warm_start=run, student_size="auto")
    with self.assertRaisesRegex(ValueError, "warm_start_fraction"):
      own_data.own_data_steps(data_dir, warm_start=run,
                              warm_start_fraction=0.0)
    text_dir = _write_text_classification(os.path.join(root, "text"))
    with self.assertRaisesRegex(ValueError, "is a run of intent slot; this "
                                "dataset is text classification"):
      own_data.own_data_steps(text_dir, warm_start=run)
    with self.assertRaisesRegex(FileNotFoundError, "has no data/summary"):
      own_data.own_data_steps(data_dir, warm_start=os.path.join(root, "x"))
    os.remove(os.path.join(run, "student", "snips_labels.json"))
    with self.assertRaisesRegex(FileNotFoundError, "its student has no "
                                "snips_labels.json"):
      own_data.own_data_steps(data_dir, warm_start=run)
    os.remove(os.path.join(run, "student", "best", "checkpoint"))
    with self.assertRaisesRegex(FileNotFoundError, "its student has no "
                                "checkpoint"):
      own_data.own_data_steps(data_dir, warm_start=run)

  def test_a_teacher_of_ones_own_is_checked_and_taught_and_distilled(self):
    root = self.get_temp_dir()
    data_dir = _write_intent_slot(os.path.join(root, "slots"))
    teacher = testing_utils.write_tiny_teacher(
        os.path.join(root, "domain-bert"), ["play", "jazz"], prefix="bert.")
    with self.assertLogs("absl", level="INFO") as logs:
      steps = {step.name: step.options("/job") for step in
               own_data.own_data_steps(data_dir, teacher=teacher)}
    self.assertIn("Teacher: domain-bert (2x32, ", "\n".join(logs.output))
    self.assertEqual(steps["teacher"]["TEACHER"], teacher)
    self.assertEqual(steps["teacher"]["IntentSlotTask.model_name"],
                     "teacher domain-bert")
    self.assertEqual(steps["student"]["DistillIntentSlotTask.teacher_base"],
                     teacher)
    self.assertEqual(steps["report"]["teacher"], teacher)
    # Without one, the steps' settings are those of before (runs resume).
    default = {step.name: step.options("/job") for step in
               own_data.own_data_steps(data_dir)}
    self.assertEqual(default["teacher"]["TEACHER"], "default")
    self.assertNotIn("DistillIntentSlotTask.teacher_base", default["student"])
    self.assertNotIn("teacher", default["report"])
    text_dir = _write_text_classification(os.path.join(root, "text"))
    text = {step.name: step.options("/job") for step in
            own_data.own_data_steps(text_dir, teacher=teacher)}
    self.assertEqual(text["teacher"]["TEACHER"], teacher)
    self.assertEqual(
        text["student"]["DistillTextClassificationTask.teacher_base"],
        teacher)
    self.assertNotIn("TEACHER", {step.name: step.options("/job") for step in
                                 own_data.own_data_steps(text_dir)}["teacher"])
    # Checked before anything runs.
    with self.assertRaisesRegex(FileNotFoundError, "TEACHER = .* does not "
                                "exist"):
      own_data.own_data_steps(data_dir, teacher=os.path.join(root, "x"))
    # A warm start continues its run's teacher: the same TEACHER or none.
    run = _write_finished_run(os.path.join(root, "run"), data_dir)
    run_files.write_json(os.path.join(run, "teacher", "step.json"),
                         {"config": {"TEACHER": repr("default")}})
    dataset = user_dataset.load_dataset(data_dir)
    found = teacher_check.check_teacher(teacher)
    with self.assertRaisesRegex(ValueError, "fine-tuned from the default "
                                "teacher; this job's TEACHER is .*domain-bert"):
      own_data.check_warm_start(run, dataset, None, "6x96", 0.5, found)
    run_files.write_json(os.path.join(run, "teacher", "step.json"),
                         {"config": {"TEACHER": repr(teacher)}})
    with self.assertRaisesRegex(ValueError, "fine-tuned from .*domain-bert; "
                                "this job's TEACHER is the default one"):
      own_data.check_warm_start(run, dataset, None, "6x96", 0.5)
    with self.assertRaisesRegex(FileNotFoundError, "snips_labels.json"):
      # Past the teacher's check: the same TEACHER.
      own_data.check_warm_start(run, dataset, None, "6x96", 0.5, found)

  def test_a_rasa_dataset_and_its_lookup_tables(self):
    data_dir = os.path.join(self.get_temp_dir(), "rasa")
    os.makedirs(data_dir)
    lookup = "- lookup: genre\n  examples: |\n    - big band\n"
    for split in ("train", "validation"):
      with open(os.path.join(data_dir, f"{split}.yml"), "w") as f:
        f.write("nlu:\n- intent: PlayMusic\n  examples: |\n" +
                "    - play some [jazz](genre)\n" * 10 +
                "- intent: Stop\n  examples: |\n    - stop\n" + lookup)
    train = os.path.join(data_dir, "train.yml")
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir)}
    # Entities make it an intent-and-slot dataset: its student distils
    # intents and slots.
    self.assertTrue(any(key.startswith("DistillIntentSlotTask.") for key in
                        steps["student"].options("/job")))
    dataset = user_dataset.load_dataset(data_dir)
    self.assertIn(f"SLOT_VALUES = '{train}'",
                  own_data.lookup_tables_hint(dataset))
    self.assertIsNone(own_data.lookup_tables_hint(user_dataset.load_dataset(
        _write_intent_slot(os.path.join(self.get_temp_dir(), "goo")))))
    self.assertEqual(own_data.slot_values_summary(dataset, train),
                     "1 value of 1 slot type from " + train)
    steps = {step.name: step for step in own_data.own_data_steps(
        data_dir, student=data_dir, slot_values=train)}
    self.assertEqual(
        steps["student"].options("/job")["DistillIntentSlotTask.slot_values"],
        train)

  def test_a_large_text_split_gets_no_student_step_floor(self):
    data_dir = _write_text_classification(self.get_temp_dir())
    # 20 examples: the floors set the budgets (2,000 and 6,000 steps).
    small = {step.name: step.options("/job") for step in
             own_data.own_data_steps(data_dir, student=data_dir)}
    self.assertEqual(small["teacher"]["EPOCHS"], 6400.0)
    self.assertEqual(small["student"]["EPOCHS"], 19200.0)
    # A split larger than the transfer set: 3 student epochs, no copies.
    large = {step.name: step.options("/job") for step in
             own_data.own_data_steps(data_dir, student=data_dir,
                                     transfer_examples=19)}
    self.assertEqual(large["teacher"]["EPOCHS"], 6400.0)
    self.assertEqual(large["student"]["EPOCHS"], 3.0)
    self.assertNotIn("DistillTextClassificationTask.augment_copies",
                     large["student"])
    # The teacher's batches in fine length buckets, the student's in its
    # config's.
    self.assertEqual(
        large["teacher"]["TextClassificationTask.bucket_boundaries"][:4],
        [6, 8, 10, 12])
    self.assertNotIn("TextClassificationTask.bucket_boundaries",
                     large["student"])

  def test_a_student_of_many_labels_gets_twice_the_steps(self):
    # 100 queries of 50 labels (two each): 12,000 student steps, evaluated
    # every 400 as the 6,000 of fewer labels are; 49 labels: 6,000.
    def student(labels):
      data_dir = os.path.join(self.get_temp_dir(), f"l{labels}")
      os.makedirs(data_dir)
      for split in ("train", "dev"):
        with open(os.path.join(data_dir, f"{split}.csv"), "w") as f:
          f.write("text,label\n" + "".join(
              f"query number {i},label{i % labels}\n" for i in range(100)))
      steps = {step.name: step.options("/job") for step in
               own_data.own_data_steps(data_dir, student=data_dir)}
      options = steps["student"]
      return (round(options["EPOCHS"] * 100 / 64),
              options["Trainer.evaluate_every"])
    self.assertEqual(own_data.MANY_LABELS, 50)
    self.assertEqual(student(50), (12000, 400))
    self.assertEqual(student(49), (6000, 400))

  def test_the_last_evaluation_falls_on_the_last_step(self):
    data_dir = _write_text_classification(self.get_temp_dir())
    # 20 examples: 2,000 teacher steps, 6,000 student steps; evaluations
    # every 666 steps would come at 1,998 and again at the end, 2,000.
    steps = {step.name: step.options("/job") for step in
             own_data.own_data_steps(data_dir, student=data_dir,
                                     min_eval_steps=666)}
    for name, total, every in (("teacher", 2000, 667),
                               ("student", 6000, 1200)):
      options = steps[name]
      self.assertEqual(round(options["EPOCHS"] * 20 / 64), total)
      self.assertEqual(options["Trainer.evaluate_every"], every, name)
      self.assertEqual(options["Trainer.checkpoint_every"], every, name)
      # The evaluations: multiples of `every` below the end, and the end.
      evaluations = list(range(every, total, every)) + [total]
      self.assertGreater(min(b - a for a, b in zip(evaluations,
                                                   evaluations[1:])),
                         every // 2, name)

  def test_teacher_trains_in_bfloat16_where_native_and_the_student_not(self):
    data_dir = _write_text_classification(self.get_temp_dir())
    steps = {step.name: step.bindings("/job") for step in
             own_data.own_data_steps(data_dir, student=data_dir)}
    self.assertIn("Trainer.precision = 'mixed_bfloat16_if_native'",
                  steps["teacher"])
    self.assertFalse([b for b in steps["student"] if "precision" in b])
    steps = {step.name: step.bindings("/job") for step in
             own_data.own_data_steps(data_dir, student=data_dir,
                                     teacher_precision="float32")}
    self.assertIn("Trainer.precision = 'float32'", steps["teacher"])
    # A wrong value stops the job before the data is read.
    with self.assertRaisesRegex(ValueError, "teacher_precision must be one"):
      own_data.own_data_steps(os.path.join(data_dir, "missing"),
                              teacher_precision="bf16")

  def test_check_warns_once_of_words_the_student_cannot_read(self):
    # Half the queries are Chinese: the check logs one warning, before
    # anything trains, and records the counts in its summary.
    data_dir = os.path.join(self.get_temp_dir(), "chinese")
    queries = ["play some jazz", "播放 爵士 音乐"] * 10
    for split in ("train", "valid"):
      os.makedirs(os.path.join(data_dir, split))
      for name, lines in (("seq.in", queries),
                          ("seq.out", ["O O O"] * len(queries)),
                          ("label", ["PlayMusic", "Play"] * 10)):
        with open(os.path.join(data_dir, split, name), "w",
                  encoding="utf-8") as f:
          f.write("".join(f"{line}\n" for line in lines))
    options = {"data_dir": data_dir, "text_column": "text",
               "text_b_column": None, "label_column": "label"}
    step_dir = os.path.join(self.get_temp_dir(), "data")
    os.makedirs(step_dir)
    with self.assertLogs("absl", level="WARNING") as logs:
      own_data.check_step(step_dir, self.get_temp_dir(), options)
    unreadable = [line for line in logs.output if "[UNK]" in line]
    self.assertLen(unreadable, 1)
    self.assertIn("train (", unreadable[0])
    self.assertIn("30 of 60 words (50.0%) are [UNK]", unreadable[0])
    with open(os.path.join(step_dir, own_data.SUMMARY_JSON),
              encoding="utf-8") as f:
      summary = json.load(f)
    self.assertEqual(summary["unreadable_words"]["train"]["unreadable"], 30)
    self.assertEqual(summary["unreadable_words"]["validation"]["share"],
                     0.5)
    self.assertIn("reach the model as [UNK]", summary["unreadable_warning"])
    # Against a student vocabulary that spells them (the binding `vocab`),
    # they are read: no warning.
    vocab = os.path.join(self.get_temp_dir(), "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
      f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                         "播", "##放", "爵", "##士", "音", "##乐", "play",
                         "some", "jazz"]) + "\n")
    own_data.check_step(step_dir, self.get_temp_dir(),
                        dict(options, vocab=vocab))
    with open(os.path.join(step_dir, own_data.SUMMARY_JSON),
              encoding="utf-8") as f:
      summary = json.load(f)
    self.assertIsNone(summary["unreadable_warning"])
    self.assertEqual(summary["unreadable_words"]["train"]["unreadable"], 0)

  def test_labels_that_look_joined_warn_when_the_job_starts(self):
    data_dir = os.path.join(self.get_temp_dir(), "joined")
    os.makedirs(data_dir)
    for split in ("train", "dev"):
      with open(os.path.join(data_dir, f"{split}.csv"), "w") as f:
        f.write("text,label\n" + "".join(
            f"query number {i},{('a', 'b', 'a;b')[i % 3]}\n"
            for i in range(30)))
    with self.assertLogs("absl", level="WARNING") as logs:
      own_data.own_data_steps(data_dir, student=data_dir)
    joined, = [line for line in logs.output if "joined by" in line]
    self.assertIn("joined by ';': 'a;b' (20 examples)", joined)
    step_dir = os.path.join(self.get_temp_dir(), "data")
    os.makedirs(step_dir)
    own_data.check_step(step_dir, self.get_temp_dir(), {
        "data_dir": data_dir, "text_column": "text", "text_b_column": None,
        "label_column": "label"})
    with open(os.path.join(step_dir, own_data.SUMMARY_JSON),
              encoding="utf-8") as f:
      summary = json.load(f)
    self.assertEqual(summary["joined_labels"], {";": {"a;b": 20}})
    self.assertEqual(summary["joined_label_warning"], joined.split(":", 2)[2])

  def test_prodigys_rejected_lines_warn_when_the_job_starts(self):
    data_dir = os.path.join(self.get_temp_dir(), "prodigy")
    os.makedirs(data_dir)
    for split in ("train", "dev"):
      with open(os.path.join(data_dir, f"{split}.jsonl"), "w") as f:
        f.write("".join(json.dumps(
            {"text": f"query number {i}", "accept": ["ab"[i % 2]],
             "answer": "reject" if i == 5 else "accept"}) + "\n"
            for i in range(30)))
    with self.assertLogs("absl", level="WARNING") as logs:
      own_data.own_data_steps(data_dir, student=data_dir)
    left_out, = [line for line in logs.output if "'reject' or" in line]
    self.assertIn("train: 1 line (the first: ", left_out)
    self.assertIn("validation: 1 line", left_out)

  def test_queries_longer_than_the_student_reads_lengthen_its_sequence(
      self):
    data_dir = self.get_temp_dir()
    def write(long_query):
      words = len(long_query.split())
      for split in ("train", "valid"):
        os.makedirs(os.path.join(data_dir, split), exist_ok=True)
        for name, lines in (("seq.in", ["play some jazz", long_query]),
                            ("seq.out", ["O O B-genre", " ".join(
                                ["O"] * words)]),
                            ("label", ["PlayMusic", "Other"])):
          with open(os.path.join(data_dir, split, name), "w") as f:
            f.write("".join(f"{line}\n" for line in lines))
    def lengths(steps):
      return {s.name: s.config.get("IntentSlotTask.seq_length")
              for s in steps if s.kind == "train"}
    # 60 words of one piece each, 62 with [CLS] and [SEP]: both runs read
    # 64 (a multiple of 16 that holds 99% of the queries); no warning.
    write(" ".join(["the"] * 60))
    with self.assertLogs("absl", level="INFO") as logs:
      steps = own_data.own_data_steps(data_dir, student=data_dir)
    self.assertEqual(lengths(steps), {"teacher": 64, "student": 64})
    read, = [line for line in logs.output if "both runs read" in line]
    self.assertIn("longer than 48 WordPieces", read)
    self.assertIn("both runs read 64 (99% of them, at most 128", read)
    self.assertFalse([line for line in logs.output if "longer than the "
                      "student reads" in line])
    # Past the most it lengthens to, the rest is cut and said.
    write(" ".join(["the"] * 200))
    with self.assertLogs("absl", level="WARNING") as logs:
      steps = own_data.own_data_steps(data_dir, student=data_dir)
    self.assertEqual(lengths(steps), {"teacher": own_data.MAX_AUTO_SEQ_LENGTH,
                                      "student": own_data.MAX_AUTO_SEQ_LENGTH})
    long, = [line for line in logs.output if "longer than" in line]
    self.assertIn(f"it takes {own_data.MAX_AUTO_SEQ_LENGTH} WordPieces", long)
    self.assertIn("1 of 2 queries (50.0%), the longest 202, 74 words cut",
                  long)
    self.assertIn("'IntentSlotTask.seq_length = 208'", long)
    # The user's own sequence length is kept, in either run's bindings.
    for bindings in ({"student_bindings": ["IntentSlotTask.seq_length = 96"]},
                     {"teacher_bindings": ["IntentSlotTask.seq_length = 96"]}):
      with self.assertLogs("absl", level="INFO") as logs:
        steps = own_data.own_data_steps(data_dir, student=data_dir,
                                        **bindings)
      self.assertFalse([line for line in logs.output
                        if "both runs read" in line])
      self.assertIn(96, lengths(steps).values())
    # Short queries keep the configuration of before (runs resume).
    write("play the blues")
    self.assertEqual(lengths(own_data.own_data_steps(
        data_dir, student=data_dir)), {"teacher": None, "student": None})

  def test_report_warns_at_the_exported_length_with_its_vocabulary(self):
    data_dir = _write_text_classification(
        os.path.join(self.get_temp_dir(), "data"))  # 'query number i'.
    dataset = user_dataset.load_dataset(data_dir)
    saved_model = os.path.join(self.get_temp_dir(), "saved_model")
    os.makedirs(os.path.join(saved_model, "assets"))
    summary = {"saved_model_dir": saved_model, "builtin": {"seq_length": 8}}
    # The shipped vocabulary: at most 8 pieces, [CLS] and [SEP] included.
    self.assertIsNone(own_data._long_warning(dataset, summary))
    # The export's own vocabulary spells the words letter by letter.
    with open(os.path.join(saved_model, "assets", "student_vocab.txt"),
              "w") as f:
      f.write("\n".join(
          ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "q", "n"] +
          [f"##{c}" for c in "uerymb"] + list("0123456789") +
          [f"##{i}" for i in range(10)]) + "\n")
    warning = own_data._long_warning(dataset, summary)
    self.assertIn("train (", warning)
    self.assertIn("'TextClassificationTask.seq_length = 16'", warning)
    # An export that did not record its length (older versions): no warning.
    self.assertIsNone(own_data._long_warning(dataset, {"builtin": None}))

  def test_report_says_what_a_longer_sequence_reads(self):
    data_dir = self.get_temp_dir()
    for split in ("train", "valid"):
      os.makedirs(os.path.join(data_dir, split), exist_ok=True)
      for name, lines in (("seq.in", ["play some jazz", "the " * 60]),
                          ("seq.out", ["O O B-genre", "O " * 60])):
        with open(os.path.join(data_dir, split, name), "w") as f:
          f.write("".join(f"{line.strip()}\n" for line in lines))
    dataset = user_dataset.load_dataset(data_dir)
    saved_model = os.path.join(self.get_temp_dir(), "saved_model")
    summary = {"saved_model_dir": saved_model, "builtin": {"seq_length": 64}}
    line = own_data._sequence_length_line(dataset, summary)
    self.assertIn("The student reads up to 64 WordPieces a query", line)
    self.assertIn("train 1 of 2 at 48, 0 at 64; validation 1 of 2 at 48, "
                  "0 at 64", line)
    # At the default, nothing to say.
    self.assertIsNone(own_data._sequence_length_line(
        dataset, dict(summary, builtin={"seq_length": 48})))

  def test_report_says_where_each_kind_of_builtin_file_runs(self):
    classifier = "".join(own_data.deploy_lines(False, False))
    self.assertIn("MediaPipe Tasks (TextClassifier)", classifier)
    self.assertIn("examples/web/?classifier=", classifier)
    intent_slot = "".join(own_data.deploy_lines(True, False))
    self.assertIn("MediaPipe Tasks has no intent-and-slot task", intent_slot)
    self.assertIn("examples/web/?intent_slot=", intent_slot)
    # An Android app tokenizes and decodes with the package's Java; a
    # one-text classifier needs none (MediaPipe tokenizes).
    self.assertIn("`examples/android` is the Java that tokenizes, packs and "
                  "decodes", intent_slot)
    self.assertNotIn("examples/android", classifier)
    # MediaPipe's TextClassifier feeds one text; the page feeds a pair
    # through LiteRT.js.
    pair = "".join(own_data.deploy_lines(False, True))
    self.assertIn("TextClassifier takes one text", pair)
    self.assertIn("in LiteRT.js once its inputs are fixed", pair)
    self.assertIn("examples/web/?classifier=", pair)
    self.assertIn("`examples/android` is the Java that tokenizes, packs "
                  "beside", pair)

  def test_report_says_when_the_student_keeps_little_beyond_the_floor(self):
    # MRPC through the job: floor 68.4, teacher 79.4, the student's files 71.6.
    line, = [l for l in own_data.floor_lines(0.684, 0.794, 0.716, "accuracy")
             if l]
    self.assertIn("accuracy is +3.2 points from the floor", line)
    self.assertIn("where its teacher is +11.0", line)
    self.assertIn("it keeps 29% of what the teacher learned", line)
    # Below the floor: nothing kept.
    self.assertIn("it keeps 0%", own_data.floor_lines(0.684, 0.794, 0.6,
                                                       "accuracy")[0])
    # Half of the lead or more (SNIPS intents: 15.3, 99.3, 98.3), or a
    # teacher at the floor: no note.
    self.assertEqual(own_data.floor_lines(0.153, 0.993, 0.983, "intent acc."),
                     [])
    self.assertEqual(own_data.floor_lines(0.684, 0.794, 0.74, "accuracy"),
                     [])
    self.assertEqual(own_data.floor_lines(0.5, 0.5, 0.4, "accuracy"), [])

  def test_report_sets_a_warm_start_beside_the_earlier_runs_student(self):
    names = (("intent_accuracy", "intent acc."), ("slot_f1", "slot F1"))
    earlier = {"path": "/runs/mine/export/model_dynamic.tflite", "change": {
        "intent_accuracy": {"before": 0.96857, "after": 0.97714,
                            "low": -0.0014, "high": 0.0171},
        "slot_f1": {"before": 0.8312, "after": 0.8289, "low": -0.021,
                    "high": 0.0163}}}
    line, = [l for l in own_data.earlier_student_lines(earlier, names) if l]
    # The changes of the scores as shown (97.7 - 96.9), a loss signed, each
    # with its interval.
    self.assertIn("intent acc. 96.9 -> 97.7 (+0.8; 95% interval -0.1 to "
                  "+1.7), slot F1 83.1 -> 82.9 (-0.2; 95% interval -2.1 to "
                  "+1.6)", line)
    self.assertIn("`/runs/mine/export/model_dynamic.tflite`", line)
    self.assertIn("(1,000 resamples, the same examples for both files)",
                  line)
    self.assertEqual(own_data.earlier_student_lines(None, names), [])
    # A run whose file is gone: no row, a warning, not a failed report.
    with self.assertLogs(level="WARNING") as logs:
      self.assertIsNone(own_data.earlier_student(
          os.path.join(self.get_temp_dir(), "gone"), None, "x.tflite"))
    self.assertIn("is not there any more", "".join(logs.output))

  def test_new_label_share_counts_train_examples_of_labels_new_since(self):
    text = user_dataset.load_dataset(_write_text_classification(
        os.path.join(self.get_temp_dir(), "text")))
    self.assertEqual(own_data.new_label_share(
        text, {"labels": (["a", "c"], ["a", "b"])}), 0.5)
    self.assertEqual(own_data.new_label_share(
        text, {"labels": (["b", "a"], ["a", "b"])}), 0.0)
    # Intents and slots: a new intent or a new slot tag in the query.
    slots = user_dataset.load_dataset(_write_intent_slot(
        os.path.join(self.get_temp_dir(), "slots")))
    self.assertEqual(own_data.new_label_share(slots, {
        "intents": (["PlayMusic"], ["PlayMusic"]),
        "slot tags": (["O"], ["O", "B-genre"])}), 1.0)
    self.assertEqual(own_data.new_label_share(slots, {
        "intents": (["PlayMusic"], ["PlayMusic"]),
        "slot tags": (["O", "B-genre"], ["O", "B-genre"])}), 0.0)

  def test_report_says_what_a_warm_start_started_from(self):
    options = {"warm_start": "/runs/mine", "warm_start_fraction": 0.5}
    line, = [l for l in own_data.warm_start_lines(options, True) if l]
    self.assertIn("the teacher and the student started from those of "
                  "`/runs/mine` and trained 0.5 of their step budgets", line)
    self.assertIn("but for the earlier run's student .tflite", line)
    line, = [l for l in own_data.warm_start_lines(
        dict(options, warm_start_new_share=0.2854), False) if l]
    self.assertIn("the teacher started from that of `/runs/mine` and "
                  "trained 0.5 of its step budget", line)
    self.assertIn("the student was distilled from its pretrained start with "
                  "its whole budget, as without a warm start, because 28.5% "
                  "of train's examples carry a label new since then (more "
                  "than 20%)", line)
    self.assertNotIn("earlier run's student", line)

  def test_report_says_what_one_example_of_a_small_validation_is_worth(self):
    # The README's text-classification example split by mixvocab-split-data:
    # 75 validation texts, the student's file at 96.0.
    line, = [l for l in own_data.small_split_lines(75, 0.96, "accuracy")
             if l]
    self.assertIn("Validation holds 75 examples: one is 1.3 points of "
                  "accuracy", line)
    self.assertIn("the exported student's 96.0 could be anywhere from 88.9 "
                  "to 98.6 (95% Wilson interval)", line)
    self.assertTrue(own_data.small_split_lines(200, 0.9, "intent acc."))
    # 201 or more (SNIPS valid: 700), or none: no note.
    self.assertEqual(own_data.small_split_lines(201, 0.9, "accuracy"), [])
    self.assertEqual(own_data.small_split_lines(700, 0.984, "intent acc."),
                     [])
    self.assertEqual(own_data.small_split_lines(0, 0.0, "accuracy"), [])

  def test_report_lists_the_most_confident_wrong_answers(self):
    root = self.get_temp_dir()
    goo = os.path.join(root, "valid")
    os.makedirs(goo, exist_ok=True)
    dataset = types.SimpleNamespace(splits={
        "validation": types.SimpleNamespace(path=goo),
        "test": types.SimpleNamespace(path=os.path.join(root, "test.csv"))})
    splits = {
        "validation": {"confident_errors": [
            {"index": 1, "line": 3, "text": "a | b  c", "gold": "x",
             "predicted": "y", "score": 0.7}]},
        "test": {"confident_errors": [
            {"index": 0, "line": None, "text": "long " * 30, "gold": "y",
             "predicted": "x", "score": 0.9}]}}
    lines = own_data.confident_error_lines(splits, dataset, False)
    table = "\n".join(lines)
    self.assertIn("| where | text | gold label | answer | score |", table)
    rows = [l for l in table.splitlines()
            if l.startswith(("| test.csv", "| valid/"))]
    # Highest score first; a Goo split's lines are seq.in's; '|' escaped,
    # spaces collapsed, long texts cut.
    self.assertEqual(rows[1], "| valid/seq.in:3 | a \\| b c | x | y | 0.700 |")
    self.assertTrue(rows[0].startswith("| test.csv | long long "))
    self.assertIn("... | y | x | 0.900 |", rows[0])
    self.assertEqual(own_data.confident_error_lines(
        {"validation": {"confident_errors": []}}, dataset, True), [])
    # With the teacher's answers to both splits, a column of them, and how
    # many of the listed misses the teacher shares.
    teacher = {"validation": [{"label": "x"}, {"label": "z"}],
               "test": [{"label": "y"}]}
    table = "\n".join(own_data.confident_error_lines(splits, dataset, False,
                                                     teacher))
    self.assertIn("| score | teacher's answer |", table)
    self.assertIn("| x | y | 0.700 | z |", table)
    self.assertIn("| y | x | 0.900 | y |", table)
    self.assertIn("where the teacher misses too (1 of 2 here), the data is "
                  "the likelier cause", table)
    # Without the answers of one listed split (a run of an earlier
    # version), no column.
    table = "\n".join(own_data.confident_error_lines(
        splits, dataset, False, dict(teacher, test=None)))
    self.assertNotIn("teacher", table)

  def test_report_says_how_sure_answered_slots_are(self):
    rows = [{"threshold": 0.0, "answered": 40, "coverage": 1.0,
             "precision": 0.9},
            {"threshold": 0.9, "answered": 30, "coverage": 0.75,
             "precision": 0.98},
            {"threshold": 0.99, "answered": 0, "coverage": 0.0,
             "precision": None}]
    text = "\n".join(own_data.slots_by_confidence_lines(rows, "validation"))
    self.assertIn("## Taking slot values only above a score (validation, "
                  ".tflite)", text)
    self.assertIn("| 0.90 | 75.0% (30) | 98.0 |", text)
    self.assertIn("| 0.99 | 0.0% (0) | - |", text)
    self.assertIn("`confidence_entity`", text)
    # No slot answered, or no scores: no section.
    self.assertEqual(own_data.slots_by_confidence_lines(
        [dict(rows[0], answered=0)], "test"), [])
    self.assertEqual(own_data.slots_by_confidence_lines([], "test"), [])

  def test_report_lists_the_unlabelled_texts_to_label_next(self):
    entry = {"path": "/job/label_next.jsonl", "texts": 11887,
             "written": 1000, "least_sure": [
                 {"text": "play the game | sugarfoot", "intent": "PlayMusic",
                  "score": 0.515, "slots": [
                      {"type": "artist", "text": "sugarfoot",
                       "score": 0.4213},
                      {"type": "service", "text": "game"}]},
                 {"text": "hi", "intent": "PlayMusic", "score": 0.6,
                  "slots": []}]}
    lines = own_data.label_next_lines(entry, True, "/job")
    table = "\n".join(lines)
    self.assertIn("Of the 11,887 unlabelled texts", table)
    # The next run on the larger set starts from this one.
    self.assertIn("`--gin_bindings=\"WARM_START = '/job'\"`", table)
    self.assertIn("where more than 20% of train's examples carry one, the "
                  "student is distilled from its pretrained start", table)
    self.assertIn("The 1,000 of them, in that order", table)
    self.assertIn("taken intent by intent in turns", table)
    # Each slot with its score (a record of an earlier version has none).
    self.assertIn("| play the game \\| sugarfoot | PlayMusic | artist: "
                  "sugarfoot (0.42); service: game | 0.515 |", table)
    self.assertIn("| text | student's intent | student's slots (score) | "
                  "score |", table)
    self.assertIn("| hi | PlayMusic | none | 0.600 |", table)
    self.assertEqual(own_data.label_next_lines(None, True, "/job"), [])
    # A run of an earlier version recorded no format: its JSONL's lines.
    self.assertIn("add the lines to train.jsonl", table)

  def test_report_says_how_texts_to_label_next_join_train_by_format(self):
    least_sure = [{"text": "dull", "label": "neg", "intent": "Rate",
                   "score": 0.5}]
    def how(path, data_format, intent_slot=False):
      return "\n".join(own_data.label_next_lines(
          {"path": path, "format": data_format, "texts": 3, "written": 1,
           "least_sure": least_sure}, intent_slot, "/job"))
    self.assertIn("append the rows, without the header, to train.csv",
                  how("/job/label_next.csv", "csv"))
    self.assertIn("to train.tsv", how("/job/label_next.tsv", "tsv"))
    goo = how("/job/label_next", "goo", True)
    self.assertIn("`/job/label_next/`", goo)
    self.assertIn("append each file's lines to the same file of train/", goo)
    self.assertIn("add them to train.yml", how("/job/label_next.yml", "rasa"))
    studio = how("/job/label_next.json", "label_studio", True)
    self.assertIn("import the file into that project", studio)
    self.assertIn("split it again with mixvocab-split-data", studio)
    doccano = how("/job/label_next.jsonl", "doccano", True)
    self.assertIn("import the file into the doccano project", doccano)
    self.assertIn("as its intent and entities", doccano)
    prodigy = how("/job/label_next.jsonl", "prodigy", True)
    self.assertIn("as its intent and spans (its score under meta)", prodigy)
    self.assertIn("e.g. ner.manual", prodigy)
    self.assertIn("e.g. textcat.manual",
                  how("/job/label_next.jsonl", "prodigy"))

  def test_report_says_which_word_table_the_files_hold(self):
    check = {"pack": False, "tolerance_points": 0.3, "cost_points": 2.7,
             "scores": {"float": {"accuracy": 0.718},
                        "packed": {"accuracy": 0.691}}}
    line, = own_data._word_table_lines(check, {"accuracy": "accuracy"})
    self.assertIn("Word table whole (8 bits a weight)", line)
    self.assertIn("accuracy 71.8 whole, 69.1 at 4 bits", line)
    check.update(pack=True, cost_points=-0.1, scores={
        "float": {"intent_accuracy": 0.98, "slot_f1": 0.9036},
        "packed": {"intent_accuracy": 0.98, "slot_f1": 0.9046}})
    line, = own_data._word_table_lines(check, {"slot_f1": "slot F1"})
    self.assertIn("Word table at 4 bits", line)
    self.assertIn("slot F1 90.4 whole, 90.5 at 4 bits", line)
    # The report's scores alone (a slot tagger's: slot F1, not its one
    # intent's accuracy).
    self.assertNotIn("intent_accuracy", line)
    # Nothing checked (no table large enough to pack, or an older export).
    self.assertEqual(own_data._word_table_lines(
        {"pack": True, "word_table_bits": 32}, {}), [])
    self.assertEqual(own_data._word_table_lines(None, {}), [])

  def test_sequence_lengths_are_the_trainer_configs(self):
    for task_class, gin_file in (("IntentSlotTask", "finetune_snips_small.gin"),
                                 ("TextClassificationTask",
                                  "distill_glue_small.gin")):
      with open(gin_utils.find_config(gin_file), encoding="utf-8") as f:
        self.assertIn(f"{task_class}.seq_length = "
                      f"{own_data.SEQ_LENGTHS[task_class]}\n", f.read())

  def test_the_teachers_f1_by_label_comes_from_its_kept_answers(self):
    root = self.get_temp_dir()
    data_dir = _write_intent_slot(os.path.join(root, "data"))  # 10 valid.
    dataset = user_dataset.load_dataset(data_dir)
    best = os.path.join(root, "teacher", "best")
    os.makedirs(best)
    right = {"intent": "PlayMusic", "tags": ["O", "O", "B-genre"]}
    wrong = {"intent": "Other", "tags": ["O", "O", "O"]}
    with open(os.path.join(best, "answers.jsonl"), "w") as f:
      for i in range(10):
        f.write(json.dumps(dict(index=i, **(right if i < 5 else wrong)))
                + "\n")
    test_json = os.path.join(root, "teacher", "eval_test.json")
    found = own_data.teacher_f1_by_label(root, dataset, "validation")
    # PlayMusic: 5 right of 10 gold, 5 answered: 2 * 5 / (10 + 5).
    self.assertAllClose(found["per_label"],
                        {"PlayMusic": 2 / 3, "Other": 0.0})
    self.assertAllClose(found["per_slot_type"], {"genre": 2 / 3})
    # Another split reads the answers its evaluation wrote; none: no column.
    self.assertIsNone(own_data.teacher_f1_by_label(root, dataset, "train"))
    self.assertEqual(own_data.teacher_answers(root, dataset, "validation")[
        0], right)
    self.assertEqual(own_data.answers_path(test_json), os.path.join(
        root, "teacher", "eval_test_answers.jsonl"))
    self.assertIn("label more of them",
                  own_data.teacher_f1_lines("intents", True))
    self.assertIn("`SLOT_VALUES`", own_data.teacher_f1_lines("intents", True))
    self.assertNotIn("SLOT_VALUES", own_data.teacher_f1_lines("labels",
                                                              False))

  def test_the_students_misses_are_split_by_the_teachers_answers(self):
    root = self.get_temp_dir()
    dataset = user_dataset.load_dataset(
        _write_intent_slot(os.path.join(root, "data")))  # 10 valid queries.
    right = {"intent": "PlayMusic", "tags": ["O", "O", "B-genre"]}
    wrong_tag = {"intent": "PlayMusic", "tags": ["O", "O"]}  # Cut short.
    wrong_intent = {"intent": "Other", "tags": ["O", "O", "B-genre"]}

    def write(run, answers):
      os.makedirs(os.path.join(root, run, "best"), exist_ok=True)
      with open(os.path.join(root, run, "best", "answers.jsonl"), "w") as f:
        f.write("".join(json.dumps(dict(index=i, **a)) + "\n"
                        for i, a in enumerate(answers)))

    self.assertIsNone(own_data.student_misses(root, dataset))  # No answers.
    self.assertEqual(own_data.miss_lines(None, True), [])
    write("teacher", [right] * 8 + [wrong_intent] * 2)
    write("student", [right] * 10)
    misses = own_data.student_misses(root, dataset)
    self.assertEqual(misses, {"student": 0, "teacher_right": 0})
    self.assertEqual(own_data.miss_lines(misses, True), [])  # No miss.
    # The student misses 4: the teacher answers 3 of them right.
    write("student", [right] * 5 + [wrong_tag] * 2 + [wrong_intent] * 2 +
          [right])
    misses = own_data.student_misses(root, dataset)
    self.assertEqual(misses, {"student": 4, "teacher_right": 3})
    tagger, = [l for l in own_data.miss_lines(misses, True, True) if l]
    self.assertIn("validation queries the student tags wrong", tagger)
    line, = [l for l in own_data.miss_lines(misses, True) if l]
    self.assertIn("Of the 4 validation queries the student answers wrong "
                  "(the intent or a slot tag), its teacher answers 3 right "
                  "(75%)", line)
    self.assertIn("it misses the other 1 too", line)

  def test_report_evaluations_run_side_by_side_and_only_when_needed(self):
    # The trainer's record of its best checkpoint answers validation, an
    # earlier report's file answers a split it wrote, and only the rest start
    # evaluation processes, all before the first is waited for.
    root = self.get_temp_dir()
    teacher, student = (os.path.join(root, r) for r in ("teacher", "student"))
    os.makedirs(os.path.join(teacher, "best"))
    with open(os.path.join(teacher, "best", "metrics.json"), "w") as f:
      json.dump({"split": "valid", "metrics": {"num_examples": 7}}, f)
    earlier = os.path.join(student, "eval_validation.json")
    os.makedirs(student)
    with open(earlier, "w") as f:
      json.dump({"metrics": {"accuracy": 0.5}}, f)
    started, waited, failing = [], [], [f"--model_dir={student}"]

    class FakeProcess:

      def __init__(self, command, **unused_kwargs):
        self.command = command
        self.returncode = 3 if set(failing) & set(command) else 0
        started.append(command)

      def wait(self):
        waited.append(len(started))
        if self.returncode == 0:
          output = [a for a in self.command if a.startswith("--output_json")]
          with open(output[0].split("=", 1)[1], "w") as f:
            json.dump({"metrics": {"accuracy": 1.0}}, f)
        return self.returncode

    requests = [
        (teacher, "valid", os.path.join(teacher, "eval_validation.json"), 7),
        (teacher, "test", os.path.join(teacher, "eval_test.json"), 9),
        (student, "valid", earlier, 7),
        (student, "test", os.path.join(student, "eval_test.json"), 9)]
    with mock.patch.object(own_data.subprocess, "Popen", FakeProcess):
      with self.assertRaises(own_data.subprocess.CalledProcessError) as error:
        own_data._evaluate_all(requests)
      self.assertIn(f"--model_dir={student}", error.exception.cmd)
      self.assertLen(started, 2)
      # Each writes its answers beside its scores (the report's teacher F1).
      self.assertIn("--predictions=" + os.path.join(
          teacher, "eval_test_answers.jsonl"), started[0])
      self.assertEqual(waited, [2, 2])
      # Rerun: the teacher's test scores were written; the student's failed
      # evaluation runs again, alone.
      started.clear()
      with self.assertRaises(own_data.subprocess.CalledProcessError):
        own_data._evaluate_all(requests)
      self.assertLen(started, 1)
      failing.clear()
      records = own_data._evaluate_all(requests)
    self.assertEqual(records[0]["split"], "valid")  # the trainer's record
    self.assertEqual([r["metrics"].get("accuracy") for r in records],
                     [None, 1.0, 0.5, 1.0])

  def test_training_section_names_a_student_that_peaked_early(self):
    # Each run's best and last step from its records; a student that ran its
    # whole budget but peaked in its first third gets a note, one that peaked
    # late or stopped early does not; a run without records is left out.
    root = self.get_temp_dir()

    def run(name, best, last, stopped=None):
      os.makedirs(os.path.join(root, name, "best"))
      for path, step in (("best/metrics.json", best), ("metrics.json", last)):
        with open(os.path.join(root, name, path), "w") as f:
          json.dump({"step": step}, f)
      if stopped:
        with open(os.path.join(root, name, "early_stopping.json"), "w") as f:
          json.dump(dict(stopped, step=last), f)

    run("teacher", 100, 300, {"train_steps": 2000, "patience": 2,
                              "ceiling": 1.0, "best_value": 0.98})
    # Each run's precision from its operative config's first line.
    with open(os.path.join(root, "teacher", "operative_config.gin"), "w") as f:
      f.write("# Precision: mixed_bfloat16 (the CPU has avx512_bf16 and "
              "TensorFlow's oneDNN kernels are on).\nTrainer.seed = 0\n")
    run("student", 800, 6000)
    run("student_6x192", 5200, 6000)
    run("student_6x256", 400, 900, {"train_steps": 6000, "patience": None,
                                    "ceiling": 1.0, "best_value": 1.0})
    os.makedirs(os.path.join(root, "student_other"))
    lines = own_data.training_lines(root, {
        "teacher": "teacher", "student": "student",
        "student_6x192": "student 6x192", "student_6x256": "student 6x256",
        "student_other": "student other"})
    text = "\n".join(lines)
    self.assertEqual(lines[0], "## Training")
    self.assertIn("| teacher | 100 | 300 | 2,000 | yes: no better validation "
                  "score in 2 evaluations | mixed_bfloat16 |", text)
    self.assertIn("| student | 800 | 6,000 | 6,000 | no | not recorded |",
                  text)
    self.assertIn("| student 6x256 | 400 | 900 | 6,000 | yes: a perfect "
                  "validation score |", text)
    self.assertNotIn("student other", text)
    notes = [line for line in lines if line.startswith("- ")]
    self.assertLen(notes, 1)
    self.assertIn("The student's best checkpoint came at step 800 of 6,000",
                  notes[0])
    self.assertIn("own_data_steps.min_student_steps", notes[0])
    self.assertEqual(own_data.training_lines(root, {"student_other": "x"}),
                     [])
    # Without evaluation histories there is nothing to plot.
    self.assertNotIn("![", text)
    self.assertFalse(os.path.exists(os.path.join(root, own_data.TRAINING_PNG)))

  def test_training_section_plots_each_run_beside_the_floor(self):
    # Each run's history of the metric it kept its best by, against the share
    # of its budget; the floor from the histories' majority accuracy; a run
    # whose history lacks that metric is left out of the plot.
    root = self.get_temp_dir()

    def run(name, best, budget, history, metric="accuracy", stopped=False):
      os.makedirs(os.path.join(root, name, "best"))
      os.makedirs(os.path.join(root, name, "eval"))
      with open(os.path.join(root, name, "best", "metrics.json"), "w") as f:
        json.dump({"step": best, "best_metric": metric}, f)
      with open(os.path.join(root, name, "metrics.json"), "w") as f:
        json.dump({"step": history[-1][0]}, f)
      if stopped:
        with open(os.path.join(root, name, "early_stopping.json"), "w") as f:
          json.dump({"train_steps": budget, "patience": 2}, f)
      with open(os.path.join(root, name, "eval", "history.jsonl"), "w") as f:
        for step, value in history:
          f.write(json.dumps({"step": step, "metrics": {
              metric: value, "majority_accuracy": 0.25}}) + "\n")

    run("teacher", 200, 2000, [(100, 0.9), (200, 0.95), (400, 0.94)],
        stopped=True)
    run("student", 1200, 6000, [(600, 0.8), (1200, 0.9), (6000, 0.88)])
    run("student_6x192", 600, 6000, [(600, 0.7)], metric="macro_f1")
    from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
    with mock.patch.object(report, "plot_lines",
                           wraps=report.plot_lines) as plot:
      lines = own_data.training_lines(root, {"teacher": "teacher",
                                             "student": "student"})
    series = plot.call_args.args[0]
    self.assertEqual(series, {
        "teacher (best at step 200)": [(5.0, 0.9), (10.0, 0.95), (20.0, 0.94)],
        "student (best at step 1,200)": [(10.0, 0.8), (20.0, 0.9),
                                         (100.0, 0.88)]})
    self.assertEqual(plot.call_args.kwargs["hlines"],
                     {"floor: train's most frequent label": 0.25})
    text = "\n".join(lines)
    png = os.path.join(root, own_data.TRAINING_PNG)
    self.assertIn(f"![validation accuracy during training]"
                  f"({own_data.TRAINING_PNG})", text)
    self.assertIn("train's most frequent label", text)
    with open(png, "rb") as f:
      self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    # Two metrics cannot share one axis: no plot then.
    os.remove(png)
    lines = own_data.training_lines(root, {
        "teacher": "teacher", "student_6x192": "student 6x192"})
    self.assertNotIn("![", "\n".join(lines))
    self.assertFalse(os.path.exists(png))

  def test_a_student_far_below_its_teacher_gets_a_note_on_a_larger_one(self):
    root = self.get_temp_dir()

    def best(name, accuracy):
      os.makedirs(os.path.join(root, name, "best"), exist_ok=True)
      with open(os.path.join(root, name, "best", "metrics.json"), "w") as f:
        json.dump({"step": 100, "best_metric": "accuracy",
                   "metrics": {"accuracy": accuracy}}, f)

    labels = {"accuracy": "accuracy"}
    best("teacher", 0.760)
    best("student", 0.670)
    lines = own_data.larger_student_lines(root, "6x192", 1.5, labels)
    self.assertLen(lines, 2)
    self.assertIn("The student is 9.0 points below its teacher (validation "
                  "accuracy)", lines[0])
    self.assertIn("STUDENT_SIZE = 'auto'", lines[0])
    self.assertIn("the 6x192 gained 0.4-2.6 points", lines[0])
    # Within the gap, or without both records: no note.
    best("student", 0.750)
    self.assertEqual(own_data.larger_student_lines(root, "6x192", 1.5,
                                                   labels), [])
    self.assertEqual(own_data.larger_student_lines(
        os.path.join(root, "none"), "6x192", 1.5, labels), [])
    # The same gap: unlabelled texts may close it too.
    self.assertEqual(own_data.unlabelled_lines(root, 1.5), [])
    best("student", 0.670)
    line, _ = own_data.unlabelled_lines(root, 1.5)
    self.assertIn("may close more of the 9.0 points", line)
    self.assertIn("--gin_bindings=\"UNLABELLED = 'logs.txt'\"", line)
    # And lists of slot values.
    line, _ = own_data.slot_values_lines(root, 1.5)
    self.assertIn("may close more of the 9.0 points", line)
    self.assertIn("--gin_bindings=\"SLOT_VALUES = 'lists'\"", line)
    best("student", 0.750)
    self.assertEqual(own_data.slot_values_lines(root, 1.5), [])


if __name__ == "__main__":
  tf.test.main()
