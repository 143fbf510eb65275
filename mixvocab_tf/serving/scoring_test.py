"""Tests of `scoring`: the scores, the labelled data, the floor.

The predictor here answers as told (`_Predictor`); real exports are scored
end to end in tests/test_predict.py (`mixvocab-evaluate --model`).
"""

import json
import os

import numpy as np
import pytest

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.serving import scoring
from mixvocab_tf.tasks.finetuning import metrics
from mixvocab_testing import datasets_testing


def test_text_classification_scores_are_the_trainers():
  # 'c' is a gold label train lacked: an error, not a class of its own.
  known = ["a", "b"]
  gold = ["a", "a", "b", "c", "c"]
  predicted = ["a", "b", "b", "a", "b"]
  result, per_label, confused = scoring.scores(
      "text_classification", [{"label": p} for p in predicted], gold,
      known, majority="a")
  ids = {"a": 0, "b": 1, "c": metrics.UNKNOWN_LABEL}
  expected = metrics.macro_f1(np.array([ids[g] for g in gold]),
                              np.array([ids[p] for p in predicted]), 2)
  assert result["macro_f1"] == pytest.approx(expected)
  assert result["accuracy"] == pytest.approx(2 / 5)
  assert result["majority_accuracy"] == pytest.approx(2 / 5)
  # The report still lists the unseen label, with recall 0.
  assert {"label": "c", "support": 2, "precision": 0.0, "recall": 0.0,
          "f1": 0.0} in per_label
  assert sorted((c["gold"], c["predicted"], c["count"])
                for c in confused) == [("a", "b", 1), ("c", "a", 1),
                                       ("c", "b", 1)]


def test_out_of_scope_answers_are_misses_not_a_class_of_f1_zero():
  # A model with an added out_of_scope label answers it to one 'a' of a
  # split without such examples: a miss of 'a', as the trainer counts it.
  labels = ["a", "b", "out_of_scope"]
  gold = ["a", "a", "b", "b"]
  answers = [{"label": p} for p in ("a", "out_of_scope", "b", "b")]
  result, _, _ = scoring.scores("text_classification", answers, gold, labels,
                                majority="a")
  assert result["macro_f1"] == pytest.approx((2 / 3 + 1) / 2)
  assert result["macro_f1"] == pytest.approx(metrics.macro_f1(
      [0, 0, 1, 1], [0, 2, 1, 1], 3, abstain=2))
  change = scoring.paired_change("text_classification", answers, answers,
                                 gold, labels)
  assert change["macro_f1"]["before"] == pytest.approx(result["macro_f1"])
  # Where it is a gold label, it is a class like any other.
  gold[1] = "out_of_scope"
  result, _, _ = scoring.scores("text_classification", answers, gold, labels,
                                majority="a")
  assert result["macro_f1"] == pytest.approx(1.0)


def test_intent_slot_scores_pad_a_query_the_model_cut_short():
  # A query longer than the model's sequence comes back with fewer tags:
  # the words it dropped are scored as 'O', not an error.
  gold = [("play", ["O", "B-x", "I-x"]), ("stop", ["O", "O", "B-y"])]
  predictions = [{"intent": "play", "tags": ["O", "B-x", "I-x"]},
                 {"intent": "play", "tags": ["O", "O"]}]
  result, per_label, _ = scoring.scores(
      "intent_slot", predictions, gold, ["play", "stop"], majority="play")
  assert result["intent_accuracy"] == pytest.approx(0.5)
  assert result["slot_f1"] == pytest.approx(metrics.slot_f1(
      [g[1] for g in gold], [["O", "B-x", "I-x"], ["O", "O", "O"]]))
  assert result["majority_accuracy"] == pytest.approx(0.5)
  assert "accuracy" not in result
  assert [r["label"] for r in per_label] == ["stop", "play"]


def test_f1_by_label_is_the_tables_f1():
  gold = [("play", ["O", "B-x", "I-x"]), ("stop", ["O", "O", "B-y"]),
          ("play", ["B-x", "O", "O"])]
  predictions = [{"intent": "play", "tags": ["O", "B-x", "I-x"]},
                 {"intent": "play", "tags": ["O", "O"]},
                 {"intent": "play", "tags": ["B-x", "O", "B-y"]}]
  found = scoring.f1_by_label("intent_slot", predictions, gold)
  # play: 2 right of 3 answered, 2 gold: 2 * 2 / (4 + 1); stop: none.
  assert found["per_label"] == {"play": pytest.approx(0.8), "stop": 0.0}
  # x: both chunks found; y: one predicted where none is gold, one missed.
  assert found["per_slot_type"] == {"x": 1.0, "y": 0.0}
  assert scoring.f1_by_label("text_classification", [{"label": "a"}],
                             ["a"]) == {"per_label": {"a": 1.0}}


def test_an_answer_outside_the_labels_is_right_when_it_is_the_gold_one():
  # A model of an earlier version of the data answers 'c', which train no
  # longer has: right where the gold label is 'c', wrong where it is 'd'.
  result, _, _ = scoring.scores(
      "text_classification", [{"label": p} for p in ("c", "c", "a")],
      ["c", "d", "a"], ["a", "b"], majority="a")
  assert result["accuracy"] == pytest.approx(2 / 3)


def test_paired_change_scores_both_models_and_bounds_the_change():
  rng = np.random.default_rng(0)
  gold = list(rng.choice(["a", "b", "c"], 300))
  # 'before' right on 70% of the examples, 'after' on those and 20% more.
  right = rng.random(300)
  before = [{"label": g if r < 0.7 else "b" if g != "b" else "a"}
            for g, r in zip(gold, right)]
  after = [{"label": g if r < 0.9 else "b" if g != "b" else "a"}
           for g, r in zip(gold, right)]
  change = scoring.paired_change("text_classification", before, after, gold,
                                 ["a", "b", "c"])
  for metric in ("accuracy", "macro_f1"):
    for name, answers in (("before", before), ("after", after)):
      assert change[metric][name] == pytest.approx(scoring.scores(
          "text_classification", answers, gold, ["a", "b", "c"], "a")[0][
              metric])
  accuracy = change["accuracy"]
  assert accuracy["change"] == pytest.approx(
      accuracy["after"] - accuracy["before"])
  # 'after' is never wrong where 'before' is right: every resample gains.
  assert 0 < accuracy["low"] <= accuracy["change"] <= accuracy["high"]
  assert scoring.paired_change("text_classification", before, after, gold,
                               ["a", "b", "c"]) == change  # seeded
  # The same answers twice: no change, and an interval of none.
  same = scoring.paired_change("text_classification", before, before, gold,
                               ["a", "b", "c"])
  assert same["accuracy"]["low"] == same["accuracy"]["high"] == 0.0
  # Intents and slots: intent accuracy and slot F1 as `scores` gives them.
  queries = [("play", ["O", "B-x", "I-x"]), ("stop", ["O", "O", "B-y"]),
             ("play", ["B-x", "O", "O"])]
  first = [{"intent": "play", "tags": ["O", "B-x", "O"]},
           {"intent": "play", "tags": ["O", "O"]},
           {"intent": "play", "tags": ["B-x", "O", "O"]}]
  second = [{"intent": "play", "tags": ["O", "B-x", "I-x"]},
            {"intent": "stop", "tags": ["O", "O", "B-y"]},
            {"intent": "stop", "tags": ["B-x", "O", "O"]}]
  change = scoring.paired_change("intent_slot", first, second, queries,
                                 ["play", "stop"], resamples=50)
  for name, answers in (("before", first), ("after", second)):
    expected = scoring.scores("intent_slot", answers, queries,
                              ["play", "stop"], "play")[0]
    for metric in ("intent_accuracy", "slot_f1", "macro_f1"):
      assert change[metric][name] == pytest.approx(expected[metric])
  assert change["slot_f1"]["after"] == 1.0
  with pytest.raises(ValueError, match="nothing to compare"):
    scoring.paired_change("intent_slot", [], [], [], ["play"])


class _Predictor:
  """Answers each text with the label (or intent and tags) it is told."""

  def __init__(self, answers, kind="classification", pair=False,
               labels=("a", "b")):
    self.answers = answers
    self.kind = kind
    self.pair = pair
    self.labels = labels
    self.model_path = "model.tflite"

  def predict(self, rows):
    records = []
    for row in rows:
      key = row if isinstance(row, str) else row["text_a"]
      answer = self.answers[key]
      if self.kind == "intent_slot":
        # Slots scored as the predictor scores them, 0.9 each here.
        records.append({"intent": answer[0], "tags": answer[1],
                        "score": 1.0, "slots": [
                            {"type": kind, "start_word": start,
                             "end_word": end, "score": 0.9}
                            for start, end, kind in
                            metrics.slot_spans(answer[1])]})
      else:
        records.append({"label": answer, "score": 1.0})
    return records


def _csv(path, rows, header="text,label"):
  return datasets_testing.write(
      path, header + "\n" + "".join(",".join(r) + "\n" for r in rows))


def test_a_csv_file_is_scored_beside_its_own_floor(tmp_path):
  path = _csv(tmp_path / "new.csv", [("one", "a"), ("two", "a"),
                                     ("three", "b"), ("four", "c")])
  labelled = scoring.read_labelled(path)
  assert (labelled.kind, labelled.train_labels) == (
      examples_lib.TEXT_CLASSIFICATION, None)
  predictor = _Predictor({"one": "a", "two": "b", "three": "b",
                          "four": "a"})
  out = tmp_path / "predictions.jsonl"
  result = scoring.score_predictor(predictor, labelled,
                                   predictions_path=str(out))
  assert result["examples"] == 4
  assert result["scores"]["accuracy"] == pytest.approx(0.5)
  # The floor: the file's most frequent label, 'a' (2 of 4).
  assert (result["floor_label"], result["floor_from"]) == (
      "a", "the scored examples")
  assert result["scores"]["majority_accuracy"] == pytest.approx(0.5)
  # 'c' is not the model's: an error, and said so.
  assert result["unknown_labels"] == {"c": 1}
  records = [json.loads(l) for l in out.read_text().splitlines()]
  assert [(r["label"], r["gold"], r["correct"]) for r in records] == [
      ("a", {"label": "a"}, True), ("b", {"label": "a"}, False),
      ("b", {"label": "b"}, True), ("a", {"label": "c"}, False)]
  summary = "\n".join(scoring.summary_lines(result))
  assert "| accuracy | 50.00 |" in summary
  assert ("| floor: every example answered 'a' (the most frequent label of "
          "the scored examples) | 50.00 |") in summary
  assert "1 examples have labels the model does not know (c)" in summary
  # Four examples: each is 25 points, and 50.0 could be 15.0 to 85.0.
  assert ("On 4 examples: one is 25.0 points of accuracy, and the model's "
          "50.0 could be anywhere from 15.0 to 85.0 (95% Wilson interval)"
          ) in summary


def test_wilson_interval_and_the_small_sample_note():
  # Wilson's 95% interval: 0.96 of 75 (the README example's student file on
  # its split-off validation); at 1.0 it does not collapse to a point.
  assert scoring.wilson_interval(0.96, 75) == pytest.approx((0.8889, 0.9863),
                                                            abs=1e-4)
  low, high = scoring.wilson_interval(1.0, 4)
  assert (round(low, 3), high) == (0.510, 1.0)
  assert scoring.wilson_interval(0.0, 10)[0] == 0.0
  assert scoring.small_sample_note(200, 0.9, "accuracy", "it")
  # 201 examples or more (SNIPS valid: 700), or none: nothing to say.
  assert scoring.small_sample_note(201, 0.9, "accuracy", "it") is None
  assert scoring.small_sample_note(700, 0.984, "intent accuracy", "it") is None
  assert scoring.small_sample_note(0, 0.0, "accuracy", "it") is None


def test_the_floor_is_among_the_labels_the_model_knows(tmp_path):
  # The file's most frequent label ('z', 3) is not the model's: the floor
  # is the most frequent one it can answer ('b', 2 of 6).
  path = _csv(tmp_path / "new.csv", [("1", "z"), ("2", "z"), ("3", "z"),
                                     ("4", "b"), ("5", "b"), ("6", "a")])
  labelled = scoring.read_labelled(path)
  result = scoring.score_predictor(
      _Predictor({str(i): "b" for i in range(1, 7)}), labelled)
  assert result["floor_label"] == "b"
  assert result["scores"]["majority_accuracy"] == pytest.approx(2 / 6)
  assert result["scores"]["accuracy"] == pytest.approx(2 / 6)


def test_queries_without_intents_are_a_slot_taggers(tmp_path):
  # New labelled data for a slot tagger: its one intent on every query.
  path = datasets_testing.write_jsonl(tmp_path / "new.jsonl", [
      {"text": "play jazz", "label": [[5, 9, "genre"]]},
      {"text": "stop", "label": []}])
  labelled = scoring.read_labelled(path)
  assert labelled.kind == examples_lib.INTENT_SLOT
  assert labelled.gold_labels == [examples_lib.NO_INTENT] * 2
  assert labelled.split.tags == [["O", "B-genre"], ["O"]]
  # Its scores: slot F1 beside its floor, no intent rows or tables.
  none = examples_lib.NO_INTENT
  predictor = _Predictor({"play jazz": (none, ["O", "B-genre"]),
                          "stop": (none, ["B-genre"])}, kind="intent_slot",
                         labels=(none,))
  summary = "\n".join(scoring.summary_lines(
      scoring.score_predictor(predictor, labelled)))
  assert "| slot F1 | 66.67 |" in summary
  assert "| floor: every word tagged O (slot F1) | 0.00 |" in summary
  for absent in ("intent accuracy", "Worst intents", "macro-F1",
                 "the intent's score"):
    assert absent not in summary


def test_prodigys_rejected_lines_are_left_out_and_said(tmp_path):
  path = datasets_testing.write_jsonl(tmp_path / "db_out.jsonl", [
      {"text": "1", "accept": ["a"], "answer": "accept"},
      {"text": "2", "accept": ["b"], "answer": "reject"},
      {"text": "3", "accept": ["b"], "answer": "accept"}])
  labelled = scoring.read_labelled(path)
  assert labelled.gold_labels == ["a", "b"]
  result = scoring.score_predictor(_Predictor({"1": "a", "3": "a"}),
                                   labelled)
  assert (result["examples"], result["lines_left_out"]) == (2, 1)
  assert ("1 line answered 'reject' or 'ignore' (Prodigy's export) left out, "
          "not scored.") in "\n".join(scoring.summary_lines(result))


def test_a_dataset_directory_gives_a_split_and_train_floor(tmp_path):
  _csv(tmp_path / "d" / "train.csv", [("1", "b"), ("2", "b"), ("3", "a")])
  _csv(tmp_path / "d" / "dev.csv", [("4", "a"), ("5", "a"), ("6", "b")])
  _csv(tmp_path / "d" / "test.csv", [("7", "b")])
  data = str(tmp_path / "d")
  labelled = scoring.read_labelled(data)
  assert labelled.path.endswith("dev.csv")
  result = scoring.score_predictor(
      _Predictor({"4": "a", "5": "b", "6": "b"}), labelled)
  # Train's most frequent label, as the own-data report's floor.
  assert (result["floor_label"], result["floor_from"]) == ("b", "train")
  assert result["scores"]["majority_accuracy"] == pytest.approx(1 / 3)
  assert result["scores"]["accuracy"] == pytest.approx(2 / 3)
  assert scoring.read_labelled(data, split="test").path.endswith("test.csv")
  assert scoring.read_labelled(data, split="valid").path.endswith("dev.csv")
  assert scoring.read_labelled(data, split="train").train_labels == [
      "b", "b", "a"]
  with pytest.raises(ValueError, match="--split=val is not a split name"):
    scoring.read_labelled(data, split="val")
  os.remove(tmp_path / "d" / "test.csv")
  with pytest.raises(ValueError, match="has no test split"):
    scoring.read_labelled(data, split="test")
  with pytest.raises(ValueError, match="is a single split; drop --split"):
    scoring.read_labelled(str(tmp_path / "d" / "dev.csv"), split="test")
  # A folder holding only a test file is no dataset; its file is a split.
  _csv(tmp_path / "loose" / "test.csv", [("1", "a")])
  datasets_testing.raises(
      "there is no train split.*To score one file or split directory in "
      "it, give that as --data", scoring.read_labelled,
      str(tmp_path / "loose"))
  assert scoring.read_labelled(
      str(tmp_path / "loose" / "test.csv")).gold_labels == ["a"]


def test_intent_slot_splits_in_goo_and_jsonl(tmp_path):
  goo = datasets_testing.write_goo(
      tmp_path / "valid", ["play jazz", "rain today"],
      ["O B-genre", "O B-date"], ["PlayMusic", "GetWeather"])
  jsonl = datasets_testing.write_jsonl(tmp_path / "new.jsonl", [
      {"tokens": ["play", "jazz"], "tags": ["O", "B-genre"],
       "intent": "PlayMusic"},
      {"tokens": ["rain", "today"], "tags": ["O", "B-date"],
       "intent": "GetWeather"}])
  predictor = _Predictor(
      {"play jazz": ("PlayMusic", ["O", "B-genre"]),
       "rain today": ("PlayMusic", ["O", "O"])}, kind="intent_slot",
      labels=("GetWeather", "PlayMusic"))
  for data in (goo, jsonl):
    labelled = scoring.read_labelled(data)
    assert labelled.kind == examples_lib.INTENT_SLOT
    result = scoring.score_predictor(predictor, labelled)
    assert result["scores"]["intent_accuracy"] == pytest.approx(0.5)
    assert result["scores"]["slot_f1"] == pytest.approx(2 / 3)
    assert result["scores"]["sentence_accuracy"] == pytest.approx(0.5)
    # 'date' never found, 'genre' always.
    assert [(r["label"], r["support"], r["f1"])
            for r in result["per_slot_type"]] == [("date", 1, 0.0),
                                                  ("genre", 1, 1.0)]
    summary = "\n".join(scoring.summary_lines(result))
    assert "| slot F1 | 66.67 |" in summary
    assert "Worst slot types (F1, support): date 0.0 (1); genre 100.0 (1)" in (
        summary)
    # The one slot answered ('jazz', right), taken as it is up to 0.9.
    assert "| 0.90 | 100.0% (1) | 100.00 |" in summary.split(
        "Taking a slot value only")[1]
    assert "| 0.95 | 0.0% (0) | - |" in summary


def test_data_of_another_task_is_refused_before_the_model_runs(tmp_path):
  texts = scoring.read_labelled(_csv(tmp_path / "t.csv", [("x", "a")]))
  pairs = scoring.read_labelled(_csv(tmp_path / "p.csv", [("x", "y", "a")],
                                     header="text_a,text_b,label"))
  assert pairs.pair and not texts.pair

  class Refuses(_Predictor):

    def predict(self, rows):
      raise AssertionError("the model ran")

  cases = [(Refuses({}, kind="intent_slot"), texts,
            "is an intent and slot model, but .* holds texts with labels"),
           (Refuses({}, pair=True), texts,
            "is a sentence-pair classifier, but .* holds texts"),
           (Refuses({}), pairs,
            "is a one-text classifier, but .* holds sentence pairs"),
           (Refuses({}, labels=None), texts, "does not name its labels")]
  for predictor, labelled, match in cases:
    with pytest.raises(ValueError, match=match):
      scoring.score_predictor(predictor, labelled)


def test_data_without_labels_or_broken_is_refused(tmp_path):
  # A test split without labels can be predicted, not scored.
  path = datasets_testing.write(tmp_path / "test.csv", "text\nhello\n")
  datasets_testing.raises("label", scoring.read_labelled, path)
  datasets_testing.raises("the path does not exist", scoring.read_labelled,
                          str(tmp_path / "missing.csv"))
  error = datasets_testing.raises(
      "does not end in a known extension", scoring.read_labelled,
      datasets_testing.write(tmp_path / "x.xlsx", "PK"))
  assert "CoNLL" not in str(error)
  # A CoNLL file named .txt is told its name.
  datasets_testing.raises(
      r"all.txt.*looks like CoNLL \(a word and its tag a line\): rename it "
      "to all.conll", scoring.read_labelled,
      datasets_testing.write(tmp_path / "all.txt", "EU B-ORG\nsays O\n"))


def test_by_confidence_counts_the_answers_above_each_threshold():
  predictions = [{"label": "a", "score": 0.99}, {"label": "b", "score": 0.9},
                 {"label": "a", "score": 0.6}, {"label": "b", "score": 0.4}]
  gold = ["a", "a", "a", "b"]
  rows = scoring.by_confidence(predictions, gold,
                               thresholds=(0.0, 0.5, 0.95, 0.999))
  assert [(r["threshold"], r["answered"], r["coverage"], r["accuracy"])
          for r in rows] == [(0.0, 4, 1.0, 0.75), (0.5, 3, 0.75, 2 / 3),
                             (0.95, 1, 0.25, 1.0), (0.999, 0, 0.0, None)]
  # Intent and slot records are read by their intent.
  intents = [{"intent": "x", "score": 0.8, "tags": []}]
  assert scoring.by_confidence(intents, ["y"], thresholds=(0.5,))[0][
      "accuracy"] == 0.0


def test_slots_by_confidence_counts_the_slots_above_each_threshold():
  def slot(kind, start, end, score):
    return {"type": kind, "start_word": start, "end_word": end,
            "score": score}
  # Gold: 'to new york now' (a city), 'play jazz by miles' (genre, artist).
  gold = [("Fly", ["O", "B-city", "I-city", "O"]),
          ("Play", ["O", "B-genre", "O", "B-artist"])]
  predictions = [
      # The right span; a stray slot on 'now'.
      {"intent": "Fly", "slots": [slot("city", 1, 3, 0.95),
                                  slot("city", 3, 4, 0.3)]},
      # The genre right; the artist's span right but its type wrong.
      {"intent": "Play", "slots": [slot("genre", 1, 2, 0.8),
                                   slot("album", 3, 4, 0.6)]},
  ]
  rows = scoring.slots_by_confidence(predictions, gold,
                                     thresholds=(0.0, 0.5, 0.9, 0.99))
  assert [(r["threshold"], r["answered"], r["coverage"], r["precision"])
          for r in rows] == [(0.0, 4, 1.0, 0.5), (0.5, 3, 0.75, 2 / 3),
                             (0.9, 1, 0.25, 1.0), (0.99, 0, 0.0, None)]
  # Records without slot scores (an export without slot logits): no table.
  del predictions[1]["slots"][0]["score"]
  assert scoring.slots_by_confidence(predictions, gold) == []


def test_confident_errors_are_the_wrong_answers_highest_score_first():
  predictions = [{"text": "one", "label": "a", "score": 0.99},
                 {"text": "two", "label": "b", "score": 0.6},
                 {"text": "three", "label": "b", "score": 0.9},
                 {"text": "four", "label": "a", "score": 0.7}]
  gold = ["a", "a", "a", "b"]
  rows = scoring.confident_errors(predictions, gold, [2, 4, 5, 7])
  assert [(r["index"], r["line"], r["text"], r["gold"], r["predicted"],
           r["score"]) for r in rows] == [(2, 5, "three", "a", "b", 0.9),
                                          (3, 7, "four", "b", "a", 0.7),
                                          (1, 4, "two", "a", "b", 0.6)]
  assert len(scoring.confident_errors(predictions, gold, limit=2)) == 2
  assert scoring.confident_errors(predictions, gold)[0]["line"] is None
  assert scoring.confident_errors(predictions, ["a", "b", "b", "a"]) == []
  # Pairs show both texts; intents are read as the label.
  pair, = scoring.confident_errors(
      [{"text_a": "x", "text_b": "y", "label": "no", "score": 0.8}], ["yes"])
  assert pair["text"] == "x | y"
  intent, = scoring.confident_errors(
      [{"text": "q", "intent": "Play", "score": 0.5, "tags": []}], ["Book"])
  assert (intent["gold"], intent["predicted"]) == ("Book", "Play")


def test_the_summary_has_the_thresholds_table(tmp_path):
  path = _csv(tmp_path / "new.csv", [("one", "a"), ("two", "b")])
  result = scoring.score_predictor(
      _ScoredPredictor({"one": ("a", 0.97), "two": ("a", 0.6)}),
      scoring.read_labelled(path))
  summary = "\n".join(scoring.summary_lines(result))
  assert "| 0.50 | 100.0% (2) | 50.00 |" in summary
  assert "| 0.95 | 50.0% (1) | 100.00 |" in summary
  assert "| 0.99 | 0.0% (0) | - |" in summary
  # The one wrong answer, with its line in the file.
  assert ("whose labels to check first (line: text, gold -> answer, score): "
          "3: 'two', b -> a, 0.600") in summary


class _ScoredPredictor(_Predictor):

  def predict(self, rows):
    return [{"text": r, "label": self.answers[r][0],
             "score": self.answers[r][1]} for r in rows]
