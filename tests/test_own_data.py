"""The own-data job end to end, tiny: a user's intent-and-slot dataset (with
labels in validation that train lacks) and a user's CSV, each through the
data check, the teacher, the student, the export to .tflite, the report and
the test predictions; a broken file stops the job before anything trains."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FAST = ["Trainer.train_steps = 2", "Trainer.evaluate_every = 2",
         "Trainer.checkpoint_every = 2", "Trainer.log_every = 1",
         "Trainer.early_stopping_patience = None"]


def _train(args, timeout=900):
  result = subprocess.run([sys.executable, "-m", "mixvocab_tf.train"] + args,
                          capture_output=True, text=True, timeout=timeout,
                          cwd=_ROOT)
  return result


@pytest.fixture(scope="module")
def tiny_student(tmp_path_factory):
  """A 1 x 32 NoKD student trained for 2 steps (a pretrained student run)."""
  run = str(tmp_path_factory.mktemp("student"))
  result = _train([
      "--gin_file=nokd_small.gin", f"--model_dir={run}",
      "--gin_bindings=Trainer.train_steps = 2",
      "--gin_bindings=StudentSpec.preset = None",
      "--gin_bindings=StudentSpec.num_layers = 1",
      "--gin_bindings=StudentSpec.hidden_size = 32",
      "--gin_bindings=StudentSpec.num_attention_heads = 2"])
  assert result.returncode == 0, result.stderr[-3000:]
  return run


def _own_data(data_dir, student, model_dir, bindings=()):
  return _train([
      "--gin_file=own_data.gin", f"--model_dir={model_dir}",
      f"--gin_bindings=DATA_DIR = '{data_dir}'",
      f"--gin_bindings=STUDENT = '{student}'",
      f"--gin_bindings=own_data_steps.teacher_bindings = {_FAST!r}",
      f"--gin_bindings=own_data_steps.student_bindings = {_FAST!r}"] +
                [f"--gin_bindings={b}" for b in bindings])


def _write_goo(directory, rows):
  os.makedirs(directory)
  for index, name in enumerate(("seq.in", "seq.out", "label")):
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
      f.write("\n".join(row[index] for row in rows) + "\n")


def test_intent_and_slot_data_to_tflite_report_and_predictions(
    tiny_student, tmp_path):
  data = tmp_path / "data"
  train = [("play some jazz", "O O B-genre", "PlayMusic"),
           ("play rock music", "O B-genre O", "PlayMusic"),
           ("book a table for two", "O O O O B-count", "BookRestaurant"),
           ("book a room", "O O O", "BookRestaurant")] * 8
  _write_goo(str(data / "train"), train)
  # A new intent and a new slot type in dev, as real data has them.
  _write_goo(str(data / "dev"), [
      ("play jazz", "O B-genre", "PlayMusic"),
      ("rate this book five", "O O O B-rating", "RateBook")])
  _write_goo(str(data / "test"), train[:4])
  # Logged queries without labels: the student also learns the teacher's
  # answers to them.
  logs = tmp_path / "logs.txt"
  logs.write_text("play some blues\nbook a room for two\n\n"
                  "play some blues\nPlay jazz\n", encoding="utf-8")
  # An app's list of genres: the student's copies swap them in.
  values = tmp_path / "slot_values"
  values.mkdir()
  (values / "genre.txt").write_text("blues\nbig band\n", encoding="utf-8")
  job = tmp_path / "job"
  bindings = [f"UNLABELLED = '{logs}'", f"SLOT_VALUES = '{values}'"]
  result = _own_data(str(data), tiny_student, str(job), bindings)
  assert result.returncode == 0, result.stderr[-4000:]
  report = (job / "report.md").read_text(encoding="utf-8")
  assert ("the slot-substituted copies of train's queries drawing on the "
          f"lists of slot values in `{values}`") in report
  assert [n for n in os.listdir(job / "teacher") if "_values" in n], (
      os.listdir(job / "teacher"))
  # 'Play jazz' is a dev query: left out, and said in the report.
  assert ("also on the teacher's answers to 2 unlabelled texts of "
          f"`{logs}` (1 more, texts of the dataset, left out)") in report
  # The student answers them too: each intent's least sure, to label next.
  assert "## Unlabelled texts to label next (.tflite)" in report
  # In the dataset's own layout: a split directory whose lines append to
  # train's, the student's answers as the intents and tags, in the list's
  # order (its report's table, scores and all, in the same order).
  from mixvocab_tf.datasets import intent_slot_files  # pylint: disable=g-import-not-at-top
  to_label = intent_slot_files.read_intent_slot(str(job / "label_next"))
  assert sorted(" ".join(words) for words in to_label.words) == [
      "book a room for two", "play some blues"]
  with open(job / "export" / "summary.json", encoding="utf-8") as f:
    least_sure = json.load(f)["label_next"]["least_sure"]
  assert least_sure[0]["score"] <= least_sure[1]["score"]
  assert [r["text"].split() for r in least_sure] == to_label.words
  assert [r["intent"] for r in least_sure] == to_label.intents
  for record, tags in zip(least_sure, to_label.tags):
    assert [t[2:] for t in tags if t.startswith("B-")] == [
        slot["type"] for slot in record["slots"]]
  assert f"`{job / 'label_next'}/`" in report
  assert "| teacher | test |" in report and "| student | test |" in report
  assert "| student .tflite (dynamic) | validation |" in report
  # The file for phones and browsers, scored as an app feeds it.
  assert re.search(r"\| student builtin \.tflite \(phones, browsers\) \| "
                   r"test \|  \| [0-9.]+ \| [0-9.]+ \|", report), report
  assert "RateBook" in report  # listed in the unseen-label warning
  # Each slot type of the test split's gold tags, scored.
  # Beside the student's, the teacher's F1 on the same test queries (from
  # its evaluation's answers, in the split's order: they give its scores).
  assert re.search(r"## Worst slot types by F1 \(test, \.tflite\)\n\n.*\n\n"
                   r"\| slot type \| support \| precision \| recall \| F1 \| "
                   r"teacher F1 \|(.|\n)*\| genre \| 2 \|( [0-9.]+ \|){4}\n",
                   report), report
  assert "## Worst intents by F1 (test, .tflite)\n\nteacher F1: " in report
  with open(job / "teacher" / "eval_test.json", encoding="utf-8") as f:
    teacher_test = json.load(f)["metrics"]
  with open(job / "teacher" / "eval_test_answers.jsonl",
            encoding="utf-8") as f:
    answers = [json.loads(line) for line in f]
  assert [a["index"] for a in answers] == [0, 1, 2, 3]
  assert teacher_test["intent_accuracy"] == sum(
      a["intent"] == gold[2] for a, gold in zip(answers, train)) / 4
  assert "`mixvocab-evaluate --model=" in report
  # Every test query answered at threshold 0; the share answered falls
  # with the threshold.
  assert "## Answering only above a score (test, .tflite)" in report
  assert "| 0.00 | 100.0% (4) |" in report
  # Each answered slot scored: the share taken at each threshold, and
  # their precision (the table only where the student answers a slot).
  with open(job / "export" / "summary.json", encoding="utf-8") as f:
    slot_rows = json.load(f)["tflite"]["dynamic"]["splits"]["test"][
        "slots_by_confidence"]
  assert [r["threshold"] for r in slot_rows] == [
      0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99]
  assert ("## Taking slot values only above a score (test, .tflite)" in
          report) == (slot_rows[0]["answered"] > 0)
  # The dev query of an intent train lacks is a wrong answer, listed with
  # its file and line for the user to check.
  assert "## Wrong answers given with the highest scores (.tflite)" in report
  # Without OUT_OF_SCOPE: how the student answers prose, and how to add it.
  assert re.search(r"## Off-topic input \(\.tflite\)\n\nOf 300 sentences of "
                   r"prose .* the student gives another intent at a score of "
                   r"0\.9 or more to [0-9.]+%", report), report
  assert "OUT_OF_SCOPE = 'builtin'" in report
  assert "| dev/seq.in:2 | rate this book five | RateBook | " in report
  # Each run's validation slot F1 during training, plotted beside the table.
  assert "![validation slot F1 during training](training_curves.png)" in report
  assert (job / "training_curves.png").read_bytes()[:4] == b"\x89PNG"
  with open(job / "test_predictions.jsonl", encoding="utf-8") as f:
    predictions = [json.loads(line) for line in f]
  assert len(predictions) == 4
  assert predictions[0]["words"] == ["play", "some", "jazz"]
  assert len(predictions[0]["tags"]) == 3
  assert predictions[0]["intent"] in ("PlayMusic", "BookRestaurant")
  assert os.path.getsize(job / "export" / "model_dynamic.tflite") > 10_000
  # Rerunning resumes: every step is done, nothing trains again.
  again = _own_data(str(data), tiny_student, str(job), bindings)
  assert again.returncode == 0, again.stderr[-3000:]
  assert "done already, skipped" in again.stderr
  # A label corrected in dev: the same settings, other files. Refused,
  # naming the steps that read them, rather than reported as done.
  (data / "dev" / "label").write_text("PlayMusic\nPlayMusic\n")
  edited = _own_data(str(data), tiny_student, str(job), bindings)
  assert edited.returncode != 0
  assert re.search(r"- teacher \(done\): files changed since it ran: "
                   r"validation \([0-9a-f]{16} -> [0-9a-f]{16}\)",
                   edited.stderr), edited.stderr[-3000:]
  assert "Nothing has run" in edited.stderr
  # More labelled queries, one of a new intent: a warm start from the job
  # (another model_dir), its new intent's rows fresh, the others the job's.
  more = tmp_path / "more"
  shutil.copytree(data, more, ignore=shutil.ignore_patterns("train"))
  # (3 of 35 queries: under own_data.WARM_START_NEW_SHARE, so the student
  # is warm-started too.)
  _write_goo(str(more / "train"), train + [
      ("rate this book five", "O O O B-rating", "RateBook")] * 3)
  warm = _own_data(str(more), tiny_student, str(tmp_path / "warm"),
                   bindings + [f"WARM_START = '{job}'"])
  assert warm.returncode == 0, warm.stderr[-4000:]
  # (Said when the job starts, with the line: own_data.WARM_START_NEW_SHARE.)
  assert ("(8.6% of train's examples carry one: not more than 20%)"
          in warm.stderr), warm.stderr[-4000:]
  for step in ("teacher", "student"):
    log = (tmp_path / "warm" / step / "log.txt").read_text(encoding="utf-8")
    assert re.search(
        rf"Warm start from {job}/{step}/best/ckpt-\d+: labels "
        r"intent_classifier: 1 new \(RateBook\); slot_classifier: 1 new "
        r"\(B-rating\)", log), log[-4000:]
  warm_report = (tmp_path / "warm" / "report.md").read_text(encoding="utf-8")
  assert ("Warm start: the teacher and the student started from those of "
          f"`{job}`") in warm_report
  # The earlier run's shipped file, scored on this run's splits beside it.
  for split in ("validation", "test"):
    assert re.search(r"\| earlier run's student \.tflite \(WARM_START\) \| "
                     rf"{split} \|  \| [0-9.]+ \| [0-9.]+ \|",
                     warm_report), warm_report
  assert re.search(
      r"This run's student \.tflite against the earlier run's \(`"
      + re.escape(f"{job}/export/model_dynamic.tflite") + r"`\), on this "
      r"run's validation split: intent acc\. [0-9.]+ -> [0-9.]+ \([+-][0-9.]+"
      r"; 95% interval [+-][0-9.]+ to [+-][0-9.]+\)", warm_report), warm_report


def test_out_of_scope_texts_join_train_and_the_report_says_how_they_do(
    tiny_student, tmp_path):
  data = tmp_path / "data"
  train = [("play some jazz", "O O B-genre", "PlayMusic"),
           ("book a table for two", "O O O O B-count", "BookRestaurant")] * 8
  _write_goo(str(data / "train"), train)
  _write_goo(str(data / "dev"), train[:2])
  # Requests the app does not serve, one a line.
  requests = tmp_path / "requests.txt"
  requests.write_text("set an alarm for six\ncall my mother\n",
                      encoding="utf-8")
  job = tmp_path / "job"
  # Both sources, a list: 20 sentences of the built-in corpus, the file's 2.
  result = _own_data(str(data), tiny_student, str(job),
                     [f"OUT_OF_SCOPE = ['builtin', '{requests}']",
                      "own_data_steps.out_of_scope_count = 20"])
  assert result.returncode == 0, result.stderr[-4000:]
  assert ("Out-of-scope texts join train as label 'out_of_scope' for the "
          "teacher and the student: 22, from sentences of the package's "
          "built-in corpus and ") in result.stderr
  # Both models learnt the label; the exported file answers it.
  for run in ("teacher", "student"):
    labels = json.loads((job / run / "snips_labels.json").read_text())
    assert "out_of_scope" in labels["intents"], labels
  report = (job / "report.md").read_text(encoding="utf-8")
  assert re.search(r"## Off-topic input \(\.tflite\)\n\nTrain held 22 "
                   r"out-of-scope texts labelled `out_of_scope` "
                   r"\(`OUT_OF_SCOPE`: sentences of the package's built-in "
                   r"corpus and .*requests\.txt\)\. Of 300 sentences "
                   r"of prose", report), report
  assert "Labels come from train, and `out_of_scope` from the texts" in report
  summary = json.loads((job / "report" / "summary.json").read_text())
  off_topic = summary["off_topic"]
  assert off_topic["texts"] == 300
  assert 0 <= off_topic["out_of_scope"] + off_topic["confident"] <= 300
  predictions = subprocess.run(
      [sys.executable, "-m", "mixvocab_tf.cli.predict",
       f"--model={job / 'export' / 'model_dynamic.tflite'}", "--input=-",
       "--top_k=3"], input="set an alarm for six\n", capture_output=True,
      text=True, timeout=300, cwd=_ROOT)
  assert predictions.returncode == 0, predictions.stderr[-3000:]
  record = json.loads(predictions.stdout.splitlines()[0])
  assert {k["label"] for k in record["top_k"]} == {
      "PlayMusic", "BookRestaurant", "out_of_scope"}, record


def test_text_classification_csv_to_tflite_report_and_predictions(
    tiny_student, tmp_path):
  data = tmp_path / "data"
  data.mkdir()
  rows = [("what a wonderful film", "positive"),
          ("a dull , lifeless mess", "negative"),
          ("I loved every minute", "positive"),
          ("never again , awful", "negative")] * 8
  for name, part in (("train", rows), ("validation", rows[:6]),
                     ("test", rows[:5])):
    with open(data / f"{name}.csv", "w", encoding="utf-8") as f:
      f.write("text,label\n" + "".join(f'"{t}",{l}\n' for t, l in part))
  logs = tmp_path / "logs.txt"
  logs.write_text("a film I would watch again, twice\nboring and slow\n",
                  encoding="utf-8")
  job = tmp_path / "job"
  result = _own_data(str(data), tiny_student, str(job),
                     [f"UNLABELLED = '{logs}'"])
  assert result.returncode == 0, result.stderr[-4000:]
  report = (job / "report.md").read_text(encoding="utf-8")
  # The texts to label next as CSV rows under train's header: appended to
  # (a copy of) train.csv they read as its examples, the student's answers
  # as their labels.
  to_label = (job / "label_next.csv").read_text(encoding="utf-8")
  assert to_label.startswith("text,label\n")
  joined = tmp_path / "joined.csv"
  joined.write_text((data / "train.csv").read_text(encoding="utf-8") +
                    to_label.split("\n", 1)[1], encoding="utf-8")
  from mixvocab_tf.datasets import text_classification_files  # pylint: disable=g-import-not-at-top
  train = text_classification_files.read_text_classification(str(joined))
  assert sorted(train.texts_a[len(rows):]) == [
      "a film I would watch again, twice", "boring and slow"]
  assert set(train.labels[len(rows):]) <= {"positive", "negative"}
  assert "append the rows, without the header, to train.csv" in report
  assert "| teacher | validation |" in report
  assert "floor: train's most frequent label" in report
  assert re.search(r"\| student builtin \.tflite \(phones, browsers\) \| "
                   r"validation \|  \| [0-9.]+ \| [0-9.]+ \|", report), report
  assert "![validation accuracy during training](training_curves.png)" in report
  assert "slot type" not in report
  # The teacher's F1 beside each label's, from the answers its trainer kept
  # beside its best checkpoint.
  assert "| label | support | precision | recall | F1 | teacher F1 |" in report
  for run in ("teacher", "student"):
    assert (job / run / "best" / "answers.jsonl").exists()
  # The report step's summary holds the scores table's rows.
  with open(job / "report" / "summary.json", encoding="utf-8") as f:
    report_summary = json.load(f)
  scores = report_summary["rows"]
  assert [row[:2] for row in scores[:2]] == [["teacher", "validation"],
                                             ["teacher", "test"]], scores
  # The student's validation misses, split by its teacher's answers.
  misses = report_summary["misses"]
  assert 0 <= misses["teacher_right"] <= misses["student"] <= 6, misses
  assert (job / "training_curves.png").read_bytes()[:4] == b"\x89PNG"
  # Validation rows are the trainers' own records of their best checkpoints
  # (nothing evaluates them again); test rows are evaluated.
  for run in ("teacher", "student"):
    assert not (job / run / "eval_validation.json").exists()
    assert (job / run / "eval_test.json").exists()
  with open(job / "teacher" / "best" / "metrics.json", encoding="utf-8") as f:
    best = json.load(f)
  assert best["split"] == "validation"
  assert best["metrics"]["num_examples"] == 6
  accuracy = f"{100 * best['metrics']['accuracy']:.1f}"
  # The answers kept beside it are in validation's order: they give its
  # accuracy.
  with open(job / "teacher" / "best" / "answers.jsonl",
            encoding="utf-8") as f:
    answers = [json.loads(line)["label"] for line in f]
  assert best["metrics"]["accuracy"] == pytest.approx(sum(
      a == label for a, (_, label) in zip(answers, rows[:6])) / 6)
  assert re.search(rf"\| teacher \| validation \| [0-9.]+M \| {accuracy} \|",
                   report), report
  # Where each run kept its best checkpoint, from the same records.
  assert re.search(rf"\| teacher \| {best['step']:,} \| [0-9,]+ \| "
                   r"[0-9,]+ \| (no|yes: [a-z ,0-9]+) \|", report), report
  with open(job / "test_predictions.jsonl", encoding="utf-8") as f:
    predictions = [json.loads(line) for line in f]
  assert [p["text"] for p in predictions] == [t for t, _ in rows[:5]]
  assert all(p["label"] in ("positive", "negative") for p in predictions)
  # The 4-bit word table was checked on validation, and the report says
  # what was chosen.
  with open(job / "export" / "word_table.json", encoding="utf-8") as f:
    check = json.load(f)
  assert set(check["scores"]) == {"float", "packed"}
  # The float signature is the student the trainer scored.
  with open(job / "student" / "best" / "metrics.json", encoding="utf-8") as f:
    student = json.load(f)["metrics"]["accuracy"]
  assert check["scores"]["float"]["accuracy"] == pytest.approx(student)
  assert ("- Word table at 4 bits" in report) == check["pack"]
  assert ("- Word table whole" in report) != check["pack"]
  _word_table_kept_whole(job, str(data))


def _word_table_kept_whole(job, data_dir):
  """The export step keeps the 4-bit word table under a tolerance every
  table meets and the whole table (SavedModel and both files) under one
  none meets; a step stopped between its check and its export resumes."""
  from mixvocab_tf.jobs import export_steps  # pylint: disable=g-import-not-at-top
  options = {"run": str(job / "student"), "data_dir": data_dir,
             "quantizations": ["dynamic"], "word_table_tolerance": 1e9}
  export_steps.export_step(str(job / "export_packed"), str(job), options)
  packed = json.loads((job / "export_packed" / "summary.json").read_text())
  assert packed["word_table"]["pack"]
  options["word_table_tolerance"] = -1.0
  step = job / "export_whole"
  export_steps.export_step(str(step), str(job), options)
  summary = json.loads((step / "summary.json").read_text())
  assert not summary["word_table"]["pack"]
  assert export_steps.saved_model_info(
      summary["saved_model_dir"])["word_table_bits"] == 32
  # The tiny student's 4,929 x 32 table: 79 KB at 4 bits, 158 KB at 8.
  for kind in ("tflite", "builtin"):
    size = (summary["tflite"]["dynamic"]["size_bytes"] if kind == "tflite"
            else summary["builtin"]["bytes"])
    before = (packed["tflite"]["dynamic"]["size_bytes"] if kind == "tflite"
              else packed["builtin"]["bytes"])
    assert size - before > 60_000, (kind, size, before)
  whole = os.path.getsize(step / "model_dynamic.tflite")
  # As if stopped after the check chose and before the SavedModel was
  # written again (the packed SavedModel and a file of it still there): the
  # rerun writes the whole one and converts it anew.
  (step / "summary.json").unlink()
  shutil.rmtree(step / "saved_model")
  shutil.copytree(job / "export_packed" / "saved_model",
                  step / "saved_model")
  shutil.copy(job / "export_packed" / "model_dynamic.tflite", step)
  export_steps.export_step(str(step), str(job), options)
  assert export_steps.saved_model_info(
      str(step / "saved_model"))["word_table_bits"] == 32
  assert os.path.getsize(step / "model_dynamic.tflite") == whole


def test_a_slot_taggers_doccano_export_to_tflite_and_report(
    tiny_student, tmp_path):
  # doccano's sequence-labelling export: spans under "label", no intents.
  data = tmp_path / "data"
  data.mkdir()
  queries = [{"text": "play some jazz", "label": [[10, 14, "genre"]]},
             {"text": "book a table for two", "label": [[17, 20, "count"]]},
             {"text": "play rock music", "label": [[5, 9, "genre"]]},
             {"text": "book a room", "label": []}] * 8
  for name, part in (("train", queries), ("dev", queries[:4])):
    with open(data / f"{name}.jsonl", "w", encoding="utf-8") as f:
      f.write("".join(json.dumps(dict(q, id=i, Comments=[])) + "\n"
                      for i, q in enumerate(part)))
  logs = tmp_path / "logs.txt"
  logs.write_text("play some blues\nbook a room for two\n", encoding="utf-8")
  job = tmp_path / "job"
  result = _own_data(str(data), tiny_student, str(job),
                     [f"UNLABELLED = '{logs}'"])
  assert result.returncode == 0, result.stderr[-4000:]
  assert "the model is a slot tagger" in result.stderr
  report = (job / "report.md").read_text(encoding="utf-8")
  assert "(slot tagging: no intents, jsonl)" in report
  # Slot F1 alone, beside its floor; no intent table.
  assert "| model | split | parameters | slot F1 |" in report
  assert "| floor: every word tagged O | validation |  | 0.0 |" in report
  assert re.search(r"\| student builtin \.tflite \(phones, browsers\) \| "
                   r"validation \|  \| [0-9.]+ \|\n", report), report
  assert "intent acc." not in report and "## Worst intents" not in report
  assert "| text | student's slots (score) | least sure word's score |" in (
      report)
  # The texts to label next in doccano's sequence-labelling form, scored by
  # their least sure word; they read back as the tagger's data.
  lines = [json.loads(line) for line in (job / "label_next.jsonl").read_text(
      encoding="utf-8").splitlines()]
  assert sorted(line["text"] for line in lines) == [
      "book a room for two", "play some blues"]
  assert all(set(line) == {"text", "label", "score", "top_k"}
             for line in lines), lines
  assert lines[0]["score"] <= lines[1]["score"] < 1.0
  from mixvocab_tf.datasets import intent_slot_files  # pylint: disable=g-import-not-at-top
  to_label = intent_slot_files.read_intent_slot(str(job / "label_next.jsonl"),
                                                require_intents=False)
  assert to_label.intents is None


def test_a_teacher_of_ones_own_is_fine_tuned_distilled_and_named(
    tiny_student, tmp_path):
  # A BERT saved by a task model (its weights under 'bert.'), not the
  # default teacher: the job fine-tunes it and distils the student from it.
  from mixvocab_testing import testing_utils  # pylint: disable=g-import-not-at-top
  train = [("play some jazz", "O O B-genre", "PlayMusic"),
           ("book a table for two", "O O O O B-count", "BookRestaurant")] * 8
  data = tmp_path / "data"
  _write_goo(str(data / "train"), train)
  _write_goo(str(data / "valid"), train[:2])
  teacher = testing_utils.write_tiny_teacher(
      str(tmp_path / "domain-bert"), ["play", "some", "jazz", "book"],
      prefix="bert.")
  job = tmp_path / "job"
  result = _own_data(str(data), tiny_student, str(job),
                     [f"TEACHER = '{teacher}'"])
  assert result.returncode == 0, result.stderr[-4000:]
  assert "Teacher: domain-bert (2x32, 0.0M parameters), from" in result.stderr
  report = (job / "report.md").read_text(encoding="utf-8")
  assert (f"Teacher: domain-bert (2x32, 0.0M parameters) from `{teacher}` "
          "fine-tuned on train") in report
  def config(run):  # Its bindings, one a line.
    return re.sub(r"\\\n\s*", "",
                  (job / run / "operative_config.gin").read_text())
  assert f"TEACHER = '{teacher}'" in config("teacher")
  assert "IntentSlotTask.teacher_checkpoint = %TEACHER" in config("teacher")
  assert (f"DistillIntentSlotTask.teacher_base = '{teacher}'" in
          config("student"))
  # The teacher the job tuned, written as a BERT directory: the TEACHER of
  # a next job, its weights the run's best checkpoint's.
  def export(run, out):
    return subprocess.run(
        [sys.executable, "-m", "mixvocab_tf.cli.export_saved_model",
         f"--model_dir={job / run}", "--bert", f"--export_dir={out}"],
        capture_output=True, text=True, timeout=600, cwd=_ROOT)
  exported = export("teacher", tmp_path / "tuned-bert")
  assert exported.returncode == 0, exported.stderr[-3000:]
  from mixvocab_tf.models.teacher_formats import huggingface  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.tasks import teacher_check  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tuned = huggingface.read_weights(str(tmp_path / "tuned-bert"))
  best = tf.train.load_checkpoint(str(job / "teacher" / "best"))
  words = best.get_tensor("model/encoder_network/_embedding_layer/"
                          "embeddings/.ATTRIBUTES/VARIABLE_VALUE")
  assert (tuned["bert/embeddings/word_embeddings"] == words).all()
  assert not (huggingface.read_weights(teacher)[
      "bert/embeddings/word_embeddings"] == words).all()  # It was tuned.
  assert teacher_check.check_teacher(str(tmp_path / "tuned-bert")).name == (
      "tuned-bert")
  student = export("student", tmp_path / "student-bert")
  assert student.returncode != 0
  assert "fine-tuned a student, not a pretrained BERT" in student.stderr
  # A rerun with the default teacher is refused (the teacher's settings
  # changed), not resumed on the other teacher's runs.
  rerun = _own_data(str(data), tiny_student, str(job))
  assert rerun.returncode != 0
  assert "TEACHER" in rerun.stderr, rerun.stderr[-3000:]


def test_a_broken_file_stops_the_job_before_training(tiny_student, tmp_path):
  data = tmp_path / "data"
  train = [("play some jazz", "O O B-genre", "PlayMusic"),
           ("book a table", "O O", "BookRestaurant")]  # 3 words, 2 tags
  _write_goo(str(data / "train"), train)
  _write_goo(str(data / "valid"), train[:1])
  job = tmp_path / "job"
  result = _own_data(str(data), tiny_student, str(job))
  assert result.returncode != 0
  assert "line 2" in result.stderr and "seq.out" in result.stderr
  assert not (job / "teacher").exists()
