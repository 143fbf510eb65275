"""Tests of the shared export step's word-table check (its scores:
`serving/scoring_test.py`; the export itself: tests/) and of the records it
writes as the texts to label next."""

import json
import os
from unittest import mock

import tensorflow as tf

from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import text_classification_files
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.jobs import export_steps
from mixvocab_tf.serving import predictor as predict_lib


class WordTableCheckTest(tf.test.TestCase):
  """`word_table_check` on predictors that answer as told (the real
  signatures are checked end to end in tests/test_own_data.py)."""

  def _check(self, validation, packed_wrong, tolerance=0.3, bits=4):
    data_dir = os.path.join(self.get_temp_dir(), f"d{validation}_{bits}")
    os.makedirs(data_dir, exist_ok=True)
    for split, count in (("train", 4), ("validation", validation)):
      with open(os.path.join(data_dir, f"{split}.csv"), "w") as f:
        f.write("text,label\n" + "".join(
            f"text {i},{'ab'[i % 2]}\n" for i in range(count)))
    dataset = user_dataset.load_dataset(data_dir)
    gold = dataset.splits["validation"].labels

    def load_predictor(path, signature, **kwargs):
      del path, kwargs
      wrong = packed_wrong if signature == "serving_tflite" else 0
      predictor = mock.Mock()
      predictor.predict.side_effect = lambda rows, top_k: [
          {"label": ("b" if g == "a" else "a") if i < wrong else g}
          for i, g in enumerate(gold)]
      return predictor

    with mock.patch.object(predict_lib, "load_predictor", load_predictor), \
        mock.patch.object(export_steps, "saved_model_info",
                          lambda _: {"word_table_bits": bits}):
      return export_steps.word_table_check("/unused", dataset,
                                           tolerance=tolerance)

  def test_packs_unless_it_costs_more_than_the_tolerance(self):
    # 1,000 validation examples: 3 answers lost are 0.3 points, 4 are not.
    self.assertTrue(self._check(1000, 3)["pack"])
    check = self._check(1000, 4)
    self.assertFalse(check["pack"])
    self.assertAlmostEqual(check["cost_points"], 0.4)
    self.assertEqual(check["scores"]["float"], {"accuracy": 1.0})
    self.assertEqual(check["scores"]["packed"], {"accuracy": 0.996})

  def test_one_example_is_no_evidence(self):
    # 150 examples: one answer is 0.67 points, allowed; two are not.
    check = self._check(150, 1)
    self.assertTrue(check["pack"])
    self.assertAlmostEqual(check["allowed_points"], 100 / 150)
    self.assertFalse(self._check(150, 2)["pack"])
    # A negative tolerance never packs, even where nothing is lost.
    self.assertFalse(self._check(150, 0, tolerance=-1.0)["pack"])

  def test_nothing_to_check_without_a_packed_table(self):
    check = self._check(150, 150, bits=32)
    self.assertTrue(check["pack"])
    self.assertNotIn("scores", check)


class ToTrainRecordTest(tf.test.TestCase):
  """The texts to label next are lines of a train split, answers as labels."""

  def _read_back(self, records, name, read):
    path = os.path.join(self.get_temp_dir(), name)
    with open(path, "w", encoding="utf-8") as f:
      f.write("".join(json.dumps(r, ensure_ascii=False) + "\n"
                      for r in records))
    return read(path)

  def test_intent_slot_answers_become_spans(self):
    record = {"text": "play Москва by abba", "intent": "PlayMusic",
              "score": 0.41, "top_k": [{"label": "PlayMusic", "score": 0.41}],
              "words": ["play", "Москва", "by", "abba"],
              "tags": ["O", "B-album", "O", "B-artist"],
              "slots": [{"type": "album", "text": "Москва", "start": 5,
                         "end": 11, "start_word": 1, "end_word": 2},
                        {"type": "artist", "text": "abba", "start": 15,
                         "end": 19, "start_word": 3, "end_word": 4}]}
    line = export_steps.to_train_record(record)
    self.assertEqual(line["spans"], [[5, 11, "album"], [15, 19, "artist"]])
    self.assertNotIn("tags", line)
    split = self._read_back([line], "next.jsonl",
                            intent_slot_files.read_intent_slot)
    self.assertEqual((split.words, split.tags, split.intents),
                     ([record["words"]], [record["tags"]], ["PlayMusic"]))

  def test_answers_in_doccanos_form_when_train_is(self):
    # The form doccano imports: its answers load as annotations to correct.
    record = {"text": "play abba", "intent": "PlayMusic", "score": 0.41,
              "top_k": [], "slots": [{"type": "artist", "text": "abba",
                                      "start": 5, "end": 9}]}
    line = export_steps.to_train_record(record, form=export_steps.DOCCANO)
    self.assertEqual({k: line[k] for k in ("text", "entities", "cats")},
                     {"text": "play abba", "entities": [[5, 9, "artist"]],
                      "cats": ["PlayMusic"]})
    self.assertNotIn("intent", line)
    split = self._read_back([line], "next.jsonl",
                            intent_slot_files.read_intent_slot)
    self.assertEqual((split.tags, split.intents),
                     ([["O", "B-artist"]], ["PlayMusic"]))
    line = export_steps.to_train_record(
        {"text": "dull", "label": "neg", "score": 0.6, "top_k": []},
        form=export_steps.DOCCANO)
    self.assertEqual(line["label"], ["neg"])
    split = self._read_back(
        [line], "next2.jsonl",
        text_classification_files.read_text_classification)
    self.assertEqual(split.labels, ["neg"])
    # Which form train is in.
    doccano, prodigy = export_steps.DOCCANO, export_steps.PRODIGY
    for first, form in (({"text": "a", "entities": [], "cats": ["X"]},
                         doccano),
                        ({"text": "a", "label": ["x"]}, doccano),
                        ({"text": "a", "spans": [], "intent": "X"}, None),
                        ({"text": "a", "label": "x"}, None),
                        ({"text": "a", "spans": [], "answer": "accept"},
                         prodigy),
                        ({"text": "a", "accept": ["x"], "_input_hash": 3},
                         prodigy)):
      path = os.path.join(self.get_temp_dir(), "train.jsonl")
      with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(first) + "\n")
      self.assertEqual(export_steps.jsonl_form(path), form, first)

  def test_answers_in_prodigys_form_when_train_is(self):
    # The task form Prodigy streams: spans as objects (ner.manual shows
    # them to correct), the intent or label picked in "accept", the score
    # in "meta"; no "answer", so that a line added to train reads.
    record = {"text": "play abba", "intent": "PlayMusic", "score": 0.41,
              "top_k": [], "slots": [{"type": "artist", "text": "abba",
                                      "start": 5, "end": 9}]}
    line = export_steps.to_train_record(record, form=export_steps.PRODIGY)
    self.assertEqual(
        {k: line[k] for k in ("text", "spans", "accept", "meta")},
        {"text": "play abba", "accept": ["PlayMusic"], "meta": {"score": 0.41},
         "spans": [{"start": 5, "end": 9, "label": "artist"}]})
    self.assertNotIn("answer", line)
    split = self._read_back([line], "next.jsonl",
                            intent_slot_files.read_intent_slot)
    self.assertEqual((split.tags, split.intents),
                     ([["O", "B-artist"]], ["PlayMusic"]))
    # A slot tagger's: spans alone.
    tagger = dict(record, intent=examples_lib.NO_INTENT, tag_scores=[1, 0.7],
                  top_k=[{"label": examples_lib.NO_INTENT, "score": 1.0}])
    line = export_steps.to_train_record(tagger, form=export_steps.PRODIGY)
    self.assertNotIn("accept", line)
    self.assertEqual(line["meta"], {"score": 0.7})
    split = self._read_back(
        [line], "next_tagger.jsonl", lambda path: (
            intent_slot_files.read_intent_slot(path, require_intents=False)))
    self.assertEqual((split.tags, split.intents), ([["O", "B-artist"]], None))
    # A label: in the label column and in "accept"; read back after a
    # choice-interface train line, or a binary one.
    line = export_steps.to_train_record(
        {"text": "dull", "label": "NEG", "score": 0.6, "top_k": []},
        form=export_steps.PRODIGY)
    self.assertEqual((line["label"], line["accept"]), ("NEG", ["NEG"]))
    for first in ({"text": "good", "accept": ["POS"], "answer": "accept"},
                  {"text": "good", "label": "POS", "answer": "accept"}):
      split = self._read_back(
          [first, line], f"next_{len(first)}_{sorted(first)[0]}.jsonl",
          text_classification_files.read_text_classification)
      self.assertEqual(split.labels, ["POS", "NEG"])

  def test_text_classification_answers_in_the_datasets_columns(self):
    record = {"text": "a fine film", "label": "pos", "score": 0.52,
              "top_k": [{"label": "pos", "score": 0.52}]}
    line = export_steps.to_train_record(record, "sentence", "sentiment")
    self.assertEqual(line["sentence"], "a fine film")
    self.assertEqual(line["sentiment"], "pos")
    split = self._read_back(
        [line], "next.jsonl",
        lambda path: text_classification_files.read_text_classification(
            path, text_column="sentence", label_column="sentiment"))
    self.assertEqual((split.texts_a, split.labels), (["a fine film"], ["pos"]))


class AnswersAsSplitTest(tf.test.TestCase):
  """The texts to label next in the dataset's own format read back, as a
  split of it, as the model's answers; a CSV's rows append to train."""

  def _write(self, files, path):
    for name, text in files.items():
      target = os.path.join(path, name) if name else path
      os.makedirs(os.path.dirname(target), exist_ok=True)
      with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return path

  def test_file_per_format_named_by_the_datasets(self):
    self.assertEqual(export_steps.label_next_path("/j/label_next.jsonl",
                                                  "csv"), "/j/label_next.csv")
    self.assertEqual(export_steps.label_next_path("/j/label_next.jsonl",
                                                  "tsv"), "/j/label_next.tsv")
    self.assertEqual(export_steps.label_next_path("/j/label_next.yml",
                                                  "rasa"), "/j/label_next.yml")
    self.assertEqual(export_steps.label_next_path("/j/label_next.jsonl",
                                                  "goo"), "/j/label_next")
    self.assertEqual(export_steps.label_next_path("/j/label_next.jsonl",
                                                  "jsonl"),
                     "/j/label_next.jsonl")

  def test_goo_layout_tags_every_word(self):
    # The model tagged the first three words of four (its sequence's cut):
    # the fourth is 'O', as the exported model answers it. A span that
    # starts with I- (its tags: `iob_to_spans`) is written as IOB2.
    records = [{"text": "play the Москва album", "intent": "PlayMusic",
                "score": 0.3, "tags": ["O", "O", "B-album"],
                "slots": [{"type": "album", "start_word": 2, "end_word": 3}]},
               {"text": "book a table now", "intent": "BookRestaurant",
                "score": 0.4, "tags": ["O", "I-object", "I-object", "O"],
                "slots": [{"type": "object", "start_word": 1,
                           "end_word": 3}]}]
    path = self._write(export_steps.answers_as_split(records, "goo"),
                       os.path.join(self.get_temp_dir(), "label_next"))
    self.assertEqual(sorted(os.listdir(path)), ["label", "seq.in", "seq.out"])
    split = intent_slot_files.read_intent_slot(path)
    self.assertEqual(split.words, [["play", "the", "Москва", "album"],
                                   ["book", "a", "table", "now"]])
    self.assertEqual(split.tags, [["O", "O", "B-album", "O"],
                                  ["O", "B-object", "I-object", "O"]])
    self.assertEqual(split.iob_repairs, 0)
    self.assertEqual(split.intents, ["PlayMusic", "BookRestaurant"])

  def test_a_slot_taggers_answers_have_no_intent(self):
    # The model's one intent is NO_INTENT: lines without one, in the span
    # form, doccano's sequence-labelling form or the Goo layout.
    record = {"text": "play abba", "intent": examples_lib.NO_INTENT,
              "score": 1.0, "top_k": [{"label": examples_lib.NO_INTENT,
                                       "score": 1.0}],
              "tags": ["O", "B-artist"], "tag_scores": [0.9, 0.6],
              "slots": [{"type": "artist", "text": "abba", "start": 5,
                         "end": 9, "start_word": 1, "end_word": 2}]}
    self.assertTrue(export_steps.is_slot_tagger_record(record))
    self.assertEqual(export_steps.sureness(record), 0.6)
    self.assertEqual(export_steps.to_train_record(record)["score"], 0.6)
    for doccano, key in ((False, "spans"), (True, "label")):
      line = export_steps.to_train_record(
          record, form=export_steps.DOCCANO if doccano else None)
      self.assertEqual({k: line[k] for k in ("text", key)},
                       {"text": "play abba", key: [[5, 9, "artist"]]})
      self.assertNotIn("intent", line)
      self.assertNotIn("cats", line)
      path = os.path.join(self.get_temp_dir(), "next.jsonl")
      with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
      split = intent_slot_files.read_intent_slot(path, require_intents=False)
      self.assertEqual((split.tags, split.intents),
                       ([["O", "B-artist"]], None))
    path = self._write(export_steps.answers_as_split([record], "goo"),
                       os.path.join(self.get_temp_dir(), "tagger_next"))
    self.assertEqual(sorted(os.listdir(path)), ["seq.in", "seq.out"])
    # A CoNLL dataset's: 'word tag' lines, appended to train.conll as they
    # are.
    self.assertEqual(export_steps.label_next_path("/j/label_next.jsonl",
                                                  "conll"),
                     "/j/label_next.conll")
    self.assertEqual(export_steps.answers_as_split([record, record],
                                                   "conll"),
                     {"": "play O\nabba B-artist\n\n" * 2})
    # A model of one intent of the user's is not a slot tagger.
    self.assertFalse(export_steps.is_slot_tagger_record(
        dict(record, intent="PlayMusic")))

  def test_table_rows_append_to_train(self):
    records = [{"text": 'a "fine", long film', "label": "pos", "score": 0.5},
               {"text": "dull", "label": "neg", "score": 0.6}]
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
      train = os.path.join(self.get_temp_dir(), f"train.{fmt}")
      header = ["id", "sentiment", "sentence"]
      with open(train, "w", encoding="utf-8") as f:
        f.write(sep.join(header) + "\n" + sep.join(["7", "neg", "bad"]) +
                "\n")
      files = export_steps.answers_as_split(records, fmt, "sentence",
                                            "sentiment", header)
      with open(train, "a", encoding="utf-8") as f:
        f.write(files[""].split("\n", 1)[1])  # The rows, not the header.
      split = text_classification_files.read_text_classification(
          train, text_column="sentence", label_column="sentiment")
      self.assertEqual(split.texts_a, ["bad", 'a "fine", long film', "dull"])
      self.assertEqual(split.labels, ["neg", "pos", "neg"])
      self.assertEqual(files[""].split("\n")[0], sep.join(header))

  def test_label_studio_tasks_when_split_from_its_export(self):
    data_dir = os.path.join(self.get_temp_dir(), "ls")
    os.makedirs(data_dir)
    train = os.path.join(data_dir, "train.jsonl")
    with open(train, "w", encoding="utf-8") as f:
      f.write('{"text": "a", "spans": [], "intent": "X"}\n')
    self.assertEqual(export_steps.written_form("jsonl", train),
                     ("jsonl", None, None))
    self.assertEqual(export_steps.written_form("csv", train),
                     ("csv", None, None))
    names = {"text": "text", "to_name": "text", "labels": "label",
             "choices": "intent"}
    with open(os.path.join(data_dir, "label_studio.json"), "w") as f:
      json.dump(names, f)
    self.assertEqual(export_steps.written_form("jsonl", train),
                     ("label_studio", None, names))
    self.assertEqual(export_steps.label_next_path("/j/label_next.jsonl",
                                                  "label_studio"),
                     "/j/label_next.json")
    records = [{"text": "play jazz", "intent": "PlayMusic", "score": 0.3,
                "slots": [{"type": "genre", "start": 5, "end": 9}]}]
    tasks = json.loads(export_steps.answers_as_split(
        records, "label_studio", names=names)[""])
    self.assertEqual(tasks, [label_studio.to_task(records[0], names)])
    # A slot tagger's task: its least sure word's score, which the project
    # sorts by, and no choice.
    tagger = dict(records[0], intent=examples_lib.NO_INTENT, score=1.0,
                  tag_scores=[0.9, 0.4], top_k=[{"intent": "none",
                                                 "score": 1.0}])
    tasks = json.loads(export_steps.answers_as_split(
        [tagger], "label_studio", names=dict(names, choices=None))[""])
    self.assertEqual(tasks[0]["predictions"][0]["score"], 0.4)
    self.assertEqual([r["type"] for r in tasks[0]["predictions"][0]["result"]],
                     ["labels"])

  def test_rasa_and_jsonl_as_before(self):
    records = [{"text": "dull", "label": "neg", "score": 0.6,
                "top_k": [{"label": "neg", "score": 0.6}]}]
    self.assertEqual(export_steps.answers_as_split(records, "jsonl")[""],
                     json.dumps(export_steps.to_train_record(records[0])) +
                     "\n")
    self.assertIn("- intent: \"neg\"",
                  export_steps.answers_as_split(records, "rasa")[""])


class LeastSurePerLabelTest(tf.test.TestCase):

  def test_least_sure_of_each_answered_label_in_turns(self):
    scores = {"a": [0.1, 0.2, 0.3, 0.35], "b": [0.4, 0.9], "c": [0.25]}
    records = [{"text": f"{label}{score}", "intent": label, "score": score}
               for label, values in scores.items() for score in values]
    chosen = export_steps.least_sure_per_label(records[::-1], 5)
    # Each label's least sure first (the lowest of the three first), then
    # each label's second least sure, ...: label a's 0.2 before its 0.3.
    self.assertEqual([r["text"] for r in chosen],
                     ["a0.1", "c0.25", "b0.4", "a0.2", "b0.9"])
    self.assertLen(export_steps.least_sure_per_label(records, 100), 7)
    self.assertEqual(export_steps.least_sure_per_label([], 5), [])
    labels = [{"text": "x", "label": "pos", "score": 0.6},
              {"text": "y", "label": "pos", "score": 0.5}]
    self.assertEqual([r["text"] for r in
                      export_steps.least_sure_per_label(labels, 1)], ["y"])

  def test_a_slot_taggers_least_sure_word_ranks_it(self):
    # One intent scores 1 on every query: its least sure word decides.
    records = [{"text": text, "intent": examples_lib.NO_INTENT, "score": 1.0,
                "top_k": [{"label": examples_lib.NO_INTENT, "score": 1.0}],
                "tag_scores": scores}
               for text, scores in (("sure", [0.99, 0.98]),
                                    ("unsure", [0.99, 0.41]),
                                    ("middling", [0.7]), ("empty", []))]
    self.assertEqual([r["text"] for r in
                      export_steps.least_sure_per_label(records, 3)],
                     ["unsure", "middling", "sure"])


if __name__ == "__main__":
  tf.test.main()
