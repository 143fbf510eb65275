"""Tests of user_dataset: a user's dataset read and checked whole."""

import json
import os
import shutil

import pytest
import tensorflow as tf

from mixvocab_testing import testing_utils
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import user_dataset
from mixvocab_testing.datasets_testing import (
    CSV, GOO_TRAIN, GOOD_QUERY, raises, write, write_goo, write_jsonl)


SNIPS_DIR = testing_utils.shared_data("snips")
SST2_DIR = testing_utils.shared_data("glue", "SST-2")


def test_dataset_on_another_file_system_reads_through_gfile():
  # ram:// is TensorFlow's in-memory file system: only tf.io.gfile sees it,
  # as only it sees gs://.
  root = "ram://user_data_test/csv"
  tf.io.gfile.makedirs(os.path.join(root, "dev"))  # not a split file
  for split in ("train", "dev"):
    with tf.io.gfile.GFile(os.path.join(root, f"{split}.csv"), "w") as f:
      f.write(CSV)
  dataset = user_dataset.load_dataset(root)
  assert dataset.kind == examples_lib.TEXT_CLASSIFICATION
  assert dataset.splits["validation"].texts_a == ["good film", "bad film"]
  goo = "ram://user_data_test/goo"
  for split in ("train", "valid"):
    tf.io.gfile.makedirs(os.path.join(goo, split))
    for name, lines in (("seq.in", GOO_TRAIN["seq_in"]),
                        ("seq.out", GOO_TRAIN["seq_out"]),
                        ("label", GOO_TRAIN["label"])):
      with tf.io.gfile.GFile(os.path.join(goo, split, name), "w") as f:
        f.write("".join(l + "\n" for l in lines))
  assert user_dataset.load_dataset(goo).kind == examples_lib.INTENT_SLOT
  raises("does not exist", user_dataset.load_dataset, "ram://user_data_test/no")



# -----------------------------------------------------------------------------
# load_dataset.
# -----------------------------------------------------------------------------


def test_load_dataset_snips_like_with_unseen_intent_and_tag(tmp_path):
  write_goo(tmp_path / "train", **GOO_TRAIN)
  write_goo(tmp_path / "valid",
            ["play jazz", "rate this book", "book at noon", "book at nine"],
            ["O B-genre", "O O B-object", "O O B-time", "O O B-time"],
            ["PlayMusic", "RateBook", "BookRestaurant", "RateBook"])
  write_goo(tmp_path / "test", ["play pop"])  # Queries only.
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.labels == ["BookRestaurant", "PlayMusic"]
  assert dataset.slot_tags == ["O", "B-genre"]
  assert dataset.unseen == {
      "validation": {"labels": {"RateBook": 2},
                     "slot_tags": {"B-time": 2, "B-object": 1}},
      "test": {"labels": {}, "slot_tags": {}},
  }
  warning = dataset.warning()
  assert "\n" not in warning
  assert "counted as errors" in warning
  for part in ("intent 'RateBook' (2 examples)", "slot tag 'B-time' (2 words)",
               "slot tag 'B-object' (1 word)", "validation ("):
    assert part in warning
  summary = dataset.summary()
  assert json.loads(json.dumps(summary)) == summary
  assert summary["examples"] == {"train": 3, "validation": 4, "test": 1}
  assert summary["labeled"] == {"train": True, "validation": True,
                                "test": False}
  assert (summary["num_labels"], summary["num_slot_tags"]) == (2, 2)
  assert summary["unseen"]["validation"]["labels"] == {"RateBook": 2}


def test_iob_warning_names_the_count_the_first_place_and_what_is_done(
    tmp_path):
  write_goo(tmp_path / "train", **GOO_TRAIN)
  write_goo(tmp_path / "valid", **GOO_TRAIN)
  assert user_dataset.load_dataset(str(tmp_path)).iob_warning() is None
  write_goo(tmp_path / "valid", ["fly to new york", "to paris"],
            ["O O I-genre I-genre", "O I-genre"], ["Fly", "Fly"])
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.splits["validation"].tags[0] == ["O", "O", "B-genre",
                                                  "I-genre"]
  warning = dataset.iob_warning()
  seq_out = os.path.join(str(tmp_path), "valid", "seq.out")
  assert (f"validation: 2 tags, the first at {seq_out}, line 1: slot tag 3 "
          "'I-genre' follows 'O'") in warning
  assert "reads each such I-<type> as B-<type>" in warning
  assert "\n" not in warning
  # The span starts, read as B-genre, have a tag train has; of the I-genre
  # only the one inside a span is left, which train lacks.
  assert dataset.unseen["validation"]["slot_tags"] == {"I-genre": 1}
  # BIOES tags: the warning says what they are read as.
  write_goo(tmp_path / "valid", ["play jazz"], ["O S-genre"], ["Play"])
  warning = user_dataset.load_dataset(str(tmp_path)).iob_warning()
  assert warning.startswith("Some slot tags are BIOES or BILOU tags")
  assert (f"validation: 1 tag, the first at {seq_out}, line 1: slot tag 2 "
          "'S-genre' is BIOES or BILOU") in warning
  assert "S-<type> and U-<type> as B-<type>" in warning


def test_left_out_warning_counts_prodigys_rejected_and_ignored_lines(
    tmp_path):
  lines = [{"text": "great", "label": "POS", "answer": "accept"},
           {"text": "awful", "label": "NEG", "answer": "accept"}]
  write_jsonl(tmp_path / "train.jsonl", lines)
  write_jsonl(tmp_path / "dev.jsonl", lines)
  assert user_dataset.load_dataset(str(tmp_path)).left_out_warning() is None
  write_jsonl(tmp_path / "train.jsonl", lines + [
      {"text": "meh", "label": "POS", "answer": "ignore"},
      {"text": "bad", "label": "POS", "answer": "reject"}])
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert len(dataset.splits["train"]) == 2
  warning = dataset.left_out_warning()
  assert (f"train: 2 lines (the first: {tmp_path / 'train.jsonl'}, line 3)"
          ) in warning
  assert "validation" not in warning and "\n" not in warning


def test_warning_counts_the_cost_and_lists_the_most_frequent(tmp_path):
  write(tmp_path / "train.csv", "text,label\na,x\nb,y\n")
  rows = [f"q{i},new{i % 15}" for i in range(30)] + ["c,x"] * 10
  write(tmp_path / "validation.csv", "text,label\n" + "\n".join(rows) + "\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert len(dataset.unseen["validation"]["labels"]) == 15
  warning = dataset.warning(most=10)
  assert "30 of 40 examples (75.0%) have a label train lacks" in warning
  assert warning.count("(2 examples)") == 10
  assert "and 5 more" in warning
  assert "new14" not in dataset.warning(most=3)
  assert "and 0 more" not in dataset.warning(most=15)


def test_few_examples_warning_names_the_rarest_labels(tmp_path):
  counts = {"often": 5, "four": 4, "one": 1, "two": 2}
  rows = [f"{label} {i},{label}" for label, n in counts.items()
          for i in range(n)]
  write(tmp_path / "train.csv", "text,label\n" + "\n".join(rows) + "\n")
  write(tmp_path / "dev.csv", "text,label\na,often\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  warning = dataset.few_examples_warning()
  assert warning.startswith("3 of 4 labels have fewer than 5 examples")
  assert ("'one' (1 example), 'two' (2 examples), 'four' (4 examples). "
          "Add examples") in warning
  assert "'often'" not in warning
  assert "and 1 more" in dataset.few_examples_warning(most=2)
  assert dataset.few_examples_warning(least=1) is None
  # Intents, for intent and slots.
  write_goo(tmp_path / "slots" / "train", **GOO_TRAIN)
  write_goo(tmp_path / "slots" / "valid", **GOO_TRAIN)
  warning = user_dataset.load_dataset(
      str(tmp_path / "slots")).few_examples_warning(least=2)
  assert warning.startswith("1 of 2 intents have fewer than 2 examples")
  assert "'BookRestaurant' (1 example)" in warning


def test_overlap_warning_counts_texts_seen_twice(tmp_path):
  write(tmp_path / "train.csv",
        "text,label\nPlay  Jazz,music\nrain today,weather\nwhat,a\nwhat,b\n"
        "hm,a\nHM,c\nok,a\nok,a\n")
  # 'play jazz' is train's 'Play  Jazz' (case and spaces aside).
  write(tmp_path / "dev.csv", "text,label\nplay jazz,music\nnew one,music\n")
  write(tmp_path / "test.csv", "text\nrain today\nok\nfresh\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.overlap() == {
      "in_train": {"validation": 1, "test": 2},
      "conflicts": {"hm": ["a", "c"], "what": ["a", "b"]}}
  warning = dataset.overlap_warning()
  assert "validation: 1 of 2 examples (50.0%) have a text that train also " \
      "holds" in warning
  assert "test: 2 of 3 examples (66.7%)" in warning
  assert ("train: 2 texts carry more than one label ('hm': a, c; 'what': "
          "a, b)") in warning
  assert "and 1 more" in dataset.overlap_warning(most=1)
  assert "\n" not in warning
  # Pairs compare both texts; intents too, for intent and slots.
  write(tmp_path / "pairs" / "train.csv",
        "text_a,text_b,label\nA,B,x\nA,C,y\nA,B,z\n")
  write(tmp_path / "pairs" / "dev.csv", "text_a,text_b,label\nA,C,y\nB,A,x\n")
  pairs = user_dataset.load_dataset(str(tmp_path / "pairs"))
  assert pairs.overlap() == {"in_train": {"validation": 1},
                             "conflicts": {"a\tb": ["x", "z"]}}
  assert "('a / b': x, z)" in pairs.overlap_warning()
  write_goo(tmp_path / "slots" / "train", **GOO_TRAIN)
  write_goo(tmp_path / "slots" / "valid", ["book a table"], ["O O O"],
            ["BookRestaurant"])
  slots = user_dataset.load_dataset(str(tmp_path / "slots"))
  assert slots.overlap() == {"in_train": {"validation": 1}, "conflicts": {}}
  # Nothing seen twice: no warning.
  write_goo(tmp_path / "slots" / "valid", ["play blues"], ["O B-genre"],
            ["PlayMusic"])
  assert user_dataset.load_dataset(
      str(tmp_path / "slots")).overlap_warning() is None


def test_spelling_warning_names_labels_that_differ_in_case_or_separators(
    tmp_path):
  write(tmp_path / "train.csv",
        "text,label\ngood,Positive\nfine,positive\nnice,positive\n"
        "bad,negative\nmeh,-1\nyes,1\n")
  write(tmp_path / "dev.csv", "text,label\ngreat,POSITIVE\nawful,negative\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  # Counted over every split; '-1' and '1' are two classes, not spellings.
  assert dataset.spellings() == {
      "labels": [{"positive": 2, "POSITIVE": 1, "Positive": 1}]}
  warning = dataset.spelling_warning()
  assert ("labels: 'positive' (2 examples) and 'POSITIVE' (1 example) and "
          "'Positive' (1 example)") in warning
  assert "write them one way in every file" in warning
  # Intents and slot types (the tags' types) of intent and slots.
  write_goo(tmp_path / "slots" / "train",
            ["book a table", "book a room", "weather in Paris"],
            ["O O O", "O O B-object", "O O B-City"],
            ["book_restaurant", "BookRestaurant", "GetWeather"])
  write_goo(tmp_path / "slots" / "valid", ["weather in Rome"],
            ["O O B-city"], ["GetWeather"])
  slots = user_dataset.load_dataset(str(tmp_path / "slots"))
  assert slots.spellings() == {
      "labels": [{"BookRestaurant": 1, "book_restaurant": 1}],
      "slot types": [{"City": 1, "city": 1}]}
  assert ("intents: 'BookRestaurant' (1 example) and 'book_restaurant' "
          "(1 example); slot types: 'City' (1 word) and 'city' (1 word)"
          ) in slots.spelling_warning()
  # One spelling each: no warning.
  write(tmp_path / "one" / "train.csv", CSV)
  write(tmp_path / "one" / "dev.csv", CSV)
  assert user_dataset.load_dataset(str(tmp_path / "one")).spelling_warning(
      ) is None


def test_joined_label_warning_names_labels_that_look_like_several(
    tmp_path):
  write(tmp_path / "train.csv",
        "text,label\njazz,music\nvote,news\nsong on tv,music;news\n"
        "new album,music;news\nfinal score,sports/news\nmaybe,yes/no\n"
        "sum,x+y\n")
  write(tmp_path / "dev.csv", "text,label\nband news,music;news\n"
        "goal,sports|weather\nrain,weather|sports\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  # Each part a label, or a part of another joined name; counted over every
  # split. 'sports/news' ('sports' is neither), a lone 'yes/no' and 'x+y'
  # are names of their own.
  assert dataset.joined_labels() == {
      "|": {"sports|weather": 1, "weather|sports": 1},
      ";": {"music;news": 3}}
  warning = dataset.joined_label_warning()
  assert ("labels look like several joined into one: joined by '|': "
          "'sports|weather' (1 example), 'weather|sports' (1 example); "
          "joined by ';': 'music;news' (3 examples).") in warning
  assert "give those texts their main label" in warning
  # ATIS's multi-intent names, in the Goo layout: intents.
  write_goo(tmp_path / "atis" / "train",
            ["fares to boston", "flights to boston", "flights and fares"],
            ["O O B-city", "O O B-city", "O O O"],
            ["atis_airfare", "atis_flight", "atis_flight#atis_airfare"])
  write_goo(tmp_path / "atis" / "valid", ["fares"], ["O"], ["atis_airfare"])
  atis = user_dataset.load_dataset(str(tmp_path / "atis"))
  assert atis.joined_labels() == {"#": {"atis_flight#atis_airfare": 1}}
  assert atis.joined_label_warning().startswith("Some intents look like")
  # None joined: no warning.
  write(tmp_path / "one" / "train.csv", CSV)
  write(tmp_path / "one" / "dev.csv", CSV)
  assert user_dataset.load_dataset(str(tmp_path / "one")).joined_label_warning(
      ) is None


def test_load_dataset_pair_csv(tmp_path):
  content = ("text_a,text_b,label\nA man sleeps.,A man rests.,entail\n"
             "It rains.,\"Sunny, warm.\",contradict\n")
  write(tmp_path / "train.csv", content)
  write(tmp_path / "validation.csv", content + "Hi.,Hello.,neutral\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.labels == ["contradict", "entail"]
  assert dataset.slot_tags is None
  assert dataset.splits["train"].texts_b == ["A man rests.", "Sunny, warm."]
  assert dataset.summary()["pair"] is True
  assert dataset.unseen["validation"]["labels"] == {"neutral": 1}
  assert "label 'neutral' (1 example)" in dataset.warning()


def test_load_dataset_dev_tsv(tmp_path):
  write(tmp_path / "train.tsv", "text\tlabel\ngreat\t1\nawful\t0\nfine\t1\n")
  write(tmp_path / "dev.tsv", "text\tlabel\nsuperb\t1\n")
  write(tmp_path / "test.tsv", "text\nso-so\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.files.files["validation"] == str(tmp_path / "dev.tsv")
  assert dataset.labels == ["0", "1"]
  assert dataset.splits["test"].labels is None
  assert dataset.warning() is None
  assert dataset.summary()["examples"] == {"train": 3, "validation": 1,
                                           "test": 1}


def test_load_dataset_jsonl_intent_slot(tmp_path):
  write_jsonl(tmp_path / "train.jsonl", [
      GOOD_QUERY, {"tokens": ["hello"], "tags": ["O"], "intent": "Greet"}])
  write_jsonl(tmp_path / "dev.jsonl", [
      {"tokens": ["to", "rome"], "tags": ["O", "B-town"], "intent": "Go"}])
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.files.format == "jsonl"
  assert dataset.labels == ["Go", "Greet"]
  assert dataset.slot_tags == ["O", "B-city"]
  assert dataset.unseen["validation"] == {"labels": {},
                                          "slot_tags": {"B-town": 1}}


def test_load_dataset_single_label_in_train(tmp_path):
  write(tmp_path / "train.csv", "text,label\na,pos\nb,pos\n")
  write(tmp_path / "dev.csv", CSV)
  error = raises("all 2 examples have the label 'pos'",
                 user_dataset.load_dataset, str(tmp_path))
  assert error.path == str(tmp_path / "train.csv")


def test_load_dataset_one_intent_allowed_with_slot_tags(tmp_path):
  write_goo(tmp_path / "train", ["play jazz", "play"], ["O B-genre", "O"],
            ["PlayMusic", "PlayMusic"])
  write_goo(tmp_path / "valid", ["play rock"], ["O B-genre"], ["PlayMusic"])
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.labels == ["PlayMusic"]
  assert dataset.slot_tags == ["O", "B-genre"]


def test_load_dataset_one_intent_without_slot_tags_refused(tmp_path):
  write_goo(tmp_path / "train", ["play jazz", "play"], ["O O", "O"],
            ["PlayMusic", "PlayMusic"])
  write_goo(tmp_path / "valid", ["play rock"], ["O O"], ["PlayMusic"])
  raises("all 2 queries have the intent 'PlayMusic' and every slot tag is "
         "'O'", user_dataset.load_dataset, str(tmp_path))


def test_a_train_without_intents_is_a_slot_tagger(tmp_path):
  # Goo splits without `label`, and a test split of words alone.
  write_goo(tmp_path / "train", ["play jazz", "stop"], ["O B-genre", "O"])
  write_goo(tmp_path / "valid", ["play rock"], ["O B-genre"])
  write_goo(tmp_path / "test", ["play pop"])
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert dataset.slot_tagger and dataset.summary()["slot_tagger"]
  assert dataset.labels == [examples_lib.NO_INTENT]
  assert dataset.slot_tags == ["O", "B-genre"]
  assert dataset.splits["validation"].intents == [examples_lib.NO_INTENT]
  assert dataset.splits["test"].intents is None  # Predicted, not scored.
  write_goo(tmp_path / "valid", ["play jazz"], ["O B-album"])
  assert user_dataset.load_dataset(str(tmp_path)).warning().startswith(
      "Some slot tags of validation or test are not in train")
  # Intents in validation but not in train: one of the two is wrong.
  write_goo(tmp_path / "valid", ["play rock"], ["O B-genre"], ["PlayMusic"])
  error = raises("the queries have intents, but train .* gives none",
                 user_dataset.load_dataset, str(tmp_path))
  assert error.path == str(tmp_path / "valid")
  # With intents in train, validation still needs them.
  write_goo(tmp_path / "train", ["play jazz", "stop"], ["O B-genre", "O"],
            ["PlayMusic", "Stop"])
  os.remove(tmp_path / "valid" / "label")
  raises("has no label; it holds seq.in, seq.out",
         user_dataset.load_dataset, str(tmp_path))


def test_a_slot_tagger_without_slots_is_refused(tmp_path):
  write_jsonl(tmp_path / "train.jsonl", [{"text": "stop", "spans": []}])
  write_jsonl(tmp_path / "dev.jsonl", [{"text": "go", "spans": []}])
  raises("no query has an intent and every slot tag is 'O'",
         user_dataset.load_dataset, str(tmp_path))


def test_load_dataset_validation_must_have_labels(tmp_path):
  write(tmp_path / "train.csv", CSV)
  write(tmp_path / "dev.csv", "text\nunlabelled\n")
  raises("dev.csv, line 1: there is no column 'label'",
         user_dataset.load_dataset, str(tmp_path))


def test_load_dataset_pairs_and_single_texts_mixed(tmp_path):
  write(tmp_path / "train.csv", "text_a,text_b,label\na,b,x\nc,d,y\n")
  write(tmp_path / "dev.csv", CSV)
  raises("the file holds single texts, but train .* holds pairs of texts",
         user_dataset.load_dataset, str(tmp_path))


def test_load_dataset_column_names(tmp_path):
  content = "sentence,sentiment\ngood,pos\nbad,neg\n"
  write(tmp_path / "train.csv", content)
  write(tmp_path / "valid.csv", content)
  dataset = user_dataset.load_dataset(str(tmp_path), text_column="sentence",
                                   label_column="sentiment")
  assert dataset.splits["validation"].texts_a == ["good", "bad"]


# -----------------------------------------------------------------------------
# Words the student cannot read.
# -----------------------------------------------------------------------------


def test_unreadable_words_warn_above_two_percent_with_counts(tmp_path):
  # train: 40 queries, 4 of them in other scripts or emoji. Words: 36 x 3
  # English + '北京 天气' + '播放 周杰伦 的 歌' + 'مرحبا بك' + 'play 😀 😀' = 119,
  # of which 2 + 4 + 2 + 2 = 10 are [UNK] ('play' is read).
  english = ["play some jazz", "book a table", "what is weather"] * 12
  queries = english + ["北京 天气", "播放 周杰伦 的 歌", "مرحبا بك",
                       "play 😀 😀"]
  write_goo(tmp_path / "train", queries,
            [" ".join(["O"] * len(q.split())) for q in queries],
            ["A", "B"] * 20)
  # validation: 50 words, one of them Cyrillic: 2.0%, not above.
  valid = ["play some jazz now"] * 12 + ["play москва"]
  write_goo(tmp_path / "valid", valid,
            [" ".join(["O"] * len(q.split())) for q in valid],
            ["A"] * len(valid))
  dataset = user_dataset.load_dataset(str(tmp_path))
  train = dataset.unreadable["train"]
  assert (train["words"], train["unreadable"]) == (119, 10)
  assert train["distinct_unreadable"] == 9
  # Most frequent first, then alphabetically.
  assert list(train["examples"].items())[:2] == [("😀", 2), ("بك", 1)]
  assert set(train["examples"]) == {"😀", "北京", "天气", "播放", "周杰伦",
                                    "的", "歌", "مرحبا", "بك"}
  assert dataset.unreadable["validation"] == {
      "words": 50, "unreadable": 1, "distinct_unreadable": 1,
      "examples": {"москва": 1}}
  warning = dataset.unreadable_warning()
  assert "\n" not in warning
  assert warning.startswith("More than 2% of the words of train are "
                            "unreadable to the student: it reads English")
  assert "reach the model as [UNK]" in warning
  assert (f"train ({tmp_path / 'train'}): 10 of 119 words (8.4%) are [UNK], "
          "most often '😀' (2), 'بك' (1)") in warning
  assert "validation (" not in warning  # 2.0% is not above 2%.
  assert "and 6 others" in dataset.unreadable_warning(most=3)
  assert "москва" in dataset.unreadable_warning(threshold=0.01)
  summary = dataset.summary()
  assert json.loads(json.dumps(summary)) == summary
  assert summary["unreadable_words"]["train"]["share"] == round(10 / 119, 6)
  assert summary["unreadable_words"]["validation"]["unreadable"] == 1


def test_english_data_does_not_warn_and_pairs_count_both_texts(tmp_path):
  content = ("text_a,text_b,label\nA man sleeps.,A man rests.,entail\n"
             "Café au lait?,\"Sunny, warm.\",contradict\n")
  write(tmp_path / "english" / "train.csv", content)
  write(tmp_path / "english" / "dev.csv", content)
  dataset = user_dataset.load_dataset(str(tmp_path / "english"))
  # Words of text_a and text_b: 3 + 3 + 3 + 2.
  assert dataset.unreadable["train"] == {
      "words": 11, "unreadable": 0, "distinct_unreadable": 0, "examples": {}}
  assert dataset.unreadable_warning() is None
  assert dataset.summary()["unreadable_words"]["validation"]["share"] == 0.0
  write(tmp_path / "mixed" / "train.csv", content)
  write(tmp_path / "mixed" / "dev.csv", content + "Hi.,你好,neutral\n")
  dataset = user_dataset.load_dataset(str(tmp_path / "mixed"))
  assert dataset.unreadable["validation"] == {
      "words": 13, "unreadable": 1, "distinct_unreadable": 1,
      "examples": {"你好": 1}}
  warning = dataset.unreadable_warning()
  assert "1 of 13 words (7.7%) are [UNK], most often '你好' (1)." in warning
  assert "train (" not in warning


def test_unreadable_words_are_read_with_the_vocabulary_given(tmp_path):
  write(tmp_path / "train.csv", "text,label\nplay 北京,a\nplay jazz,b\n")
  write(tmp_path / "dev.csv", "text,label\nplay 北京,a\n")
  # The shipped student vocabulary has no '北' or '京'.
  assert user_dataset.load_dataset(
      str(tmp_path)).unreadable["train"]["examples"] == {"北京": 1}
  tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "北", "##京",
            "play"]
  dataset = user_dataset.load_dataset(str(tmp_path), vocab=tokens)
  assert dataset.unreadable["train"]["examples"] == {"jazz": 1}
  assert dataset.unreadable["validation"]["unreadable"] == 0


def test_long_examples_are_what_the_featurizers_cut(tmp_path):
  # pylint: disable=g-import-not-at-top
  import numpy as np
  from mixvocab_tf import assets
  from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot
  from mixvocab_tf.tasks.finetuning.text_classification import data as tc
  # pylint: enable=g-import-not-at-top
  queries = ["play some jazz", "don't play antidisestablishmentarianism now",
             " ".join(["book a table at the zorblatt diner"] * 3),
             "play \u200b jazz by 周杰伦 tonight please " * 2, "hi"]
  tags = [" ".join(["O"] * len(q.split())) for q in queries]
  write_goo(tmp_path / "slots" / "train", queries, tags, ["a", "b"] * 2 + ["a"])
  write_goo(tmp_path / "slots" / "valid", queries[::4], tags[::4], ["a", "b"])
  dataset = user_dataset.load_dataset(str(tmp_path / "slots"))
  vocab = assets.default_student_vocab()
  labels = intent_slot.IntentSlotLabels.from_examples(dataset.splits["train"])
  def featurized(seq_length):
    return intent_slot.featurize_examples(
        dataset.splits["train"], labels,
        intent_slot.intent_slot_batch_featurizer(vocab, seq_length))
  lengths = featurized(512)["input_mask"].sum(axis=1)
  cut = featurized(16)
  starts, num_words = cut["word_start_positions"], cut["num_words"]
  # Words without a position: cut, or past the featurizer's word columns.
  cut_words = int(np.sum(num_words) - np.sum(starts >= 0))
  found = dataset.long_examples(16)["train"]
  assert cut_words > 0 and lengths.max() > 16
  assert found == {"examples": 5, "long": int(np.sum(lengths > 16)),
                   "longest": int(lengths.max()), "p99": int(lengths.max()),
                   "cut_words": cut_words}
  assert dataset.long_examples(512)["train"]["long"] == 0
  assert dataset.long_warning(int(lengths.max()), "IntentSlotTask") is None
  warning = dataset.long_warning(16, "IntentSlotTask")
  assert "\n" not in warning
  for part in (f"{found['long']} of 5 queries", f"{cut_words} words cut",
               # The longest, rounded up to a multiple of 16.
               f"'IntentSlotTask.seq_length = {-(-lengths.max() // 16) * 16}'",
               "teacher_bindings",
               "student_bindings", "tags them 'O'"):
    assert part in warning
  assert "validation (" not in warning
  # The length that warning gives, for the job to use (at most `most`).
  assert dataset.fitting_seq_length(16) == -(-lengths.max() // 16) * 16
  assert dataset.fitting_seq_length(16, most=16) == 16
  assert dataset.fitting_seq_length(int(lengths.max())) is None
  # A split is named when more than 1% of its examples are cut: 2 of
  # SNIPS train's 13,084 queries are not.
  snips = user_dataset.load_dataset(
      os.path.dirname(assets.snips_dir("train")))
  assert snips.long_examples(48)["train"]["long"] == 2
  assert snips.long_warning(48, "IntentSlotTask") is None
  assert snips.fitting_seq_length(48) is None
  assert "train (" in snips.long_warning(48, "IntentSlotTask",
                                         threshold=0.0001)

  lines = ["text,label"] + [f"\"{q}\",{l}" for q, l in zip(queries, "abab")]
  write(tmp_path / "texts" / "train.csv", "\n".join(lines) + "\n")
  write(tmp_path / "texts" / "dev.csv", "\n".join(lines[:3]) + "\n")
  dataset = user_dataset.load_dataset(str(tmp_path / "texts"))
  featurize = tc.text_classification_featurizer(vocab, 512, pair=False)
  lengths = featurize({"sentence_a": tf.constant(
      dataset.splits["train"].texts_a)})["input_mask"].numpy().sum(axis=1)
  found = dataset.long_examples(16)
  assert found["train"] == {"examples": 4, "long": int(np.sum(lengths > 16)),
                            "longest": int(lengths.max()),
                            "p99": int(lengths.max()), "cut_words": None}
  warning = dataset.long_warning(16, "TextClassificationTask")
  assert (f"'TextClassificationTask.seq_length = "
          f"{-(-lengths.max() // 16) * 16}'") in warning
  assert "validation (" in warning and "words cut" not in warning


# -----------------------------------------------------------------------------
# Real data, read as a user's files (skipped where ../shared/data is absent).
# -----------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.isdir(SNIPS_DIR),
                    reason="../shared/data/snips is not beside the project")
def test_load_dataset_shared_snips():
  dataset = user_dataset.load_dataset(SNIPS_DIR)
  assert dataset.files.format == "goo"
  assert dataset.summary()["examples"] == {"train": 13084, "validation": 700}
  assert len(dataset.labels) == 7
  assert dataset.slot_tags[0] == "O"
  assert dataset.warning() is None


@pytest.mark.skipif(not os.path.isdir(SST2_DIR),
                    reason="../shared/data/glue/SST-2 is not beside the "
                    "project")
def test_load_dataset_shared_sst2(tmp_path):
  for name in ("train.tsv", "dev.tsv"):
    shutil.copy(os.path.join(SST2_DIR, name), tmp_path / name)
  dataset = user_dataset.load_dataset(str(tmp_path), text_column="sentence")
  assert dataset.summary()["examples"] == {"train": 67349, "validation": 872}
  assert dataset.labels == ["0", "1"]
  assert dataset.splits["train"].texts_b is None
  assert dataset.warning() is None
  # English movie reviews: a handful of unreadable words ('næss').
  assert dataset.unreadable["train"]["words"] == 633724
  assert dataset.unreadable_warning() is None


def test_conll_splits_are_a_slot_taggers_dataset(tmp_path):
  write(tmp_path / "train.conll", "play O\njazz B-genre\n\nstop O\n")
  write(tmp_path / "dev.conll", "play O\nrock B-genre\n")
  dataset = user_dataset.load_dataset(str(tmp_path))
  assert (dataset.kind, dataset.files.format) == (examples_lib.INTENT_SLOT,
                                                  "conll")
  assert dataset.slot_tagger and dataset.slot_tags == ["O", "B-genre"]
