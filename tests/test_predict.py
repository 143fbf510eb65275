"""End to end: the predictor (`mixvocab_tf.serving.predictor`) and its
command (`mixvocab-predict`, `cli/predict.py`) on tiny exports.

A SNIPS intent and slot model and a GLUE sentence-pair classifier (one
layer, hidden 16, the shipped student vocabulary, random weights scaled up
so that labels vary and are far from ties: `deploy_testing.tiny_encoder`,
`spread`, `tiny_pair_classifier`) are exported as SavedModels and
converted to fp32 .tflite files, as `test_serving_contract.py` builds them,
and to fp32 builtin-ops files (token ids in). Checked: the SavedModel, the
.tflite and the builtin file give the same labels, slot tags, words and
spans; top-k ordering and length; the label names of a .tflite
(its own table, else `<model>.labels.json`, else only top-1); IOB spans;
batching; the command on stdin / stdout and on files; the one-line errors;
`mixvocab-evaluate --model` scoring each export on labelled files.
"""

import collections
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys

from absl import flags
import pytest
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf import export
from mixvocab_tf.cli import predict as predict_cli
from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.serving import predictor as predictor_lib
from mixvocab_tf.datasets import glue as glue_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.tasks.finetuning.text_classification import export_module as text_classification_export
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning.intent_slot import export_module as intent_slot_export
from mixvocab_tf.text import unreadable
from mixvocab_testing import deploy_testing

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

SEQ_LENGTH = 16
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

INTENTS = ["AddToPlaylist", "GetWeather", "PlayMusic", "RateBook"]
SLOTS = ["O", "B-artist", "I-artist", "B-city", "I-city"]
QUERIES = [
    "play norah jones on spotify",
    "what is the weather in  new   york city",  # Runs of spaces.
    "add this song to my playlist",
    "rate this book 5 stars 😀",
    "",
    "Москва weather tomorrow",
    "play " * 20,  # More words than the model tags.
]
PAIRS = [("A man is playing a guitar.", "Someone plays music."),
         ("it rains", "the street is wet"),
         ("", "nothing"),
         ("The cat sat on the mat.", "A dog barks.")]


def _export(module, directory, convert=True):
  export_dir = str(directory / "saved_model")
  # Float word tables in the .tflite too: the predictor's SavedModel and
  # .tflite answers are compared on random models, full of near ties.
  export.export_saved_model(module, export_dir, pack_word_tables=False)
  if not convert:
    return export_dir, None
  tflite = str(directory / "model.tflite")
  with open(tflite, "wb") as f:
    f.write(tflite_conversion.convert_saved_model(export_dir))
  return export_dir, tflite


@pytest.fixture(scope="module")
def snips(tmp_path_factory):
  model = joint_intent_slot_model.JointIntentSlotModel(
      deploy_testing.tiny_encoder(3, SEQ_LENGTH), num_intents=len(INTENTS),
      num_slots=len(SLOTS))
  deploy_testing.spread(model)
  module = intent_slot_export.IntentSlotExportModule(
      model, intent_slot_data.IntentSlotLabels(INTENTS, SLOTS),
      assets.default_student_vocab(), seq_length=SEQ_LENGTH)
  return _export(module, tmp_path_factory.mktemp("snips"))


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
  files = deploy_testing.tiny_pair_classifier(
      str(tmp_path_factory.mktemp("glue")), seq_length=SEQ_LENGTH)
  return files["saved_model"], files["tflite"], files["builtin"]


def _builtin(export_dir):
  """The export's builtin-ops file (fp32, as the .tflite above), beside it."""
  path = os.path.join(os.path.dirname(export_dir), "model_builtin.tflite")
  with open(path, "wb") as f:
    f.write(builtin_model.convert_builtin(export_dir, "none"))
  return path


@pytest.fixture(scope="module")
def snips_builtin(snips):
  return _builtin(snips[0])


@pytest.fixture(scope="module")
def glue_builtin(glue):
  return glue[2]


def _without_scores(records):
  """Records with scores dropped (they agree to 1e-4, checked apart)."""
  def drop(key, value):
    if key == "top_k":
      return [e["label"] for e in value]
    if key == "slots":
      return [{k: v for k, v in slot.items() if k != "score"}
              for slot in value]
    return value
  return [{k: drop(k, v) for k, v in r.items()
           if k not in ("score", "tag_scores")} for r in records]


def _assert_same_predictions(got, want):
  assert _without_scores(got) == _without_scores(want)
  for g, w in zip(got, want):
    assert g["score"] == pytest.approx(w["score"], abs=1e-4)
    assert [e["score"] for e in g["top_k"]] == pytest.approx(
        [e["score"] for e in w["top_k"]], abs=1e-4)
    assert g.get("tag_scores") == pytest.approx(w.get("tag_scores"),
                                                abs=1e-4)
    assert [s["score"] for s in g.get("slots", ())] == pytest.approx(
        [s["score"] for s in w.get("slots", ())], abs=1e-4)


# IOB spans.


@pytest.mark.parametrize("tags, spans", [
    ([], []),
    (["O", "O"], []),
    (["O", "B-artist", "I-artist", "O"], [("artist", 1, 3)]),
    # A span running to the end.
    (["O", "B-city", "I-city", "I-city"], [("city", 1, 4)]),
    # I-x without B-x starts a span, also after another type's span.
    (["I-artist", "I-artist", "O", "I-city"],
     [("artist", 0, 2), ("city", 3, 4)]),
    (["B-artist", "I-city", "I-city"], [("artist", 0, 1), ("city", 1, 3)]),
    # Adjacent spans of the same type stay two spans.
    (["B-artist", "B-artist", "I-artist"],
     [("artist", 0, 1), ("artist", 1, 3)]),
    # Padding ('') and other non-chunk tags read as 'O'.
    (["B-city", "", "I-city", "x"], [("city", 0, 1), ("city", 2, 3)]),
])
def test_iob_to_spans(tags, spans):
  assert predictor_lib.iob_to_spans(tags) == spans


# The library.
def test_intent_slot_saved_model_and_tflite_agree(snips):
  saved_model = predictor_lib.load_predictor(snips[0])
  tflite = predictor_lib.load_predictor(snips[1])
  for predictor in (saved_model, tflite):
    assert predictor.kind == "intent_slot"
    assert predictor.input_names == ("text",)
    assert predictor.labels == tuple(INTENTS)
  assert saved_model.labels_source.endswith("labels.json")
  assert "label table inside" in tflite.labels_source
  want = saved_model.predict(QUERIES, top_k=3)
  got = tflite.predict(QUERIES, top_k=3)
  _assert_same_predictions(got, want)
  # The heads are far from ties: the models answer more than one intent,
  # tag some slots.
  assert len({r["intent"] for r in want}) > 1
  assert any(r["slots"] for r in want)
  for query, record in zip(QUERIES, want):
    assert record["text"] == query
    assert record["words"] == query.split()[:SEQ_LENGTH - 2]
    assert len(record["tags"]) == len(record["words"])
    for slot in record["slots"]:
      assert slot["type"] in ("artist", "city")
      words = record["words"][slot["start_word"]:slot["end_word"]]
      # The span of the query itself (its own spacing).
      assert slot["text"].split() == words
      # Character offsets in the query (bytes in the model: 'Москва' is
      # 6 characters, 12 bytes).
      assert query[slot["start"]:slot["end"]] == slot["text"]
      assert record["tags"][slot["start_word"]].endswith(slot["type"])
    assert [(s["type"], s["start_word"], s["end_word"])
            for s in record["slots"]] == predictor_lib.iob_to_spans(record["tags"])
    # Each word's tag scored, a slot by its least sure word (words cut
    # past the model's length: the query below).
    assert len(record["tag_scores"]) == len(record["words"])
    assert all(0 < p <= 1 for p in record["tag_scores"])
    for slot in record["slots"]:
      assert slot["score"] == min(
          record["tag_scores"][slot["start_word"]:slot["end_word"]])
  # Long words: the first ones fill the model's 14 pieces, the rest are
  # cut ('O', unread).
  [record] = saved_model.predict(["antidisestablishmentarianism " * 4])
  scores = record["tag_scores"]
  cut = next(i for i, p in enumerate(scores) if p == pytest.approx(
      1 / len(SLOTS)))
  assert 0 < cut < 4 and record["tags"][cut:] == ["O"] * (4 - cut)
  assert all(p == pytest.approx(1 / len(SLOTS)) for p in scores[cut:])


def test_pair_classifier_saved_model_and_tflite_agree(glue):
  rows = ["\t".join(pair) for pair in PAIRS]
  saved_model = predictor_lib.load_predictor(glue[0])
  tflite = predictor_lib.load_predictor(glue[1])
  assert saved_model.kind == tflite.kind == "classification"
  assert saved_model.input_names == ("sentence_a", "sentence_b")
  assert tflite.labels == tuple(glue_lib.LABEL_NAMES["mnli"])
  want = saved_model.predict(rows, top_k=3)
  _assert_same_predictions(tflite.predict(rows, top_k=3), want)
  assert len({r["label"] for r in want}) > 1
  assert [(r["text_a"], r["text_b"]) for r in want] == PAIRS
  assert set(want[0]) == {"text_a", "text_b", "label", "score", "top_k",
                          "unreadable_words"}
  # JSON rows, with our keys or the model's input names, answer the same.
  as_dicts = ([{"text_a": a, "text_b": b} for a, b in PAIRS[:2]] +
              [{"sentence_a": a, "sentence_b": b} for a, b in PAIRS[2:]])
  _assert_same_predictions(saved_model.predict(as_dicts, top_k=3), want)


def test_builtin_files_answer_as_the_raw_string_files(
    snips, glue, snips_builtin, glue_builtin):
  # The predictor tokenizes for the builtin file (token ids in) and decodes
  # its per-piece tag probabilities into the raw-string file's records.
  builtin = predictor_lib.load_predictor(snips_builtin)
  assert builtin.kind == "intent_slot"
  assert builtin.input_names == ("text",)
  assert builtin.labels == tuple(INTENTS)
  assert builtin.labels_source == f"the metadata of {snips_builtin}"
  want = predictor_lib.load_predictor(snips[1]).predict(QUERIES, top_k=3)
  _assert_same_predictions(builtin.predict(QUERIES, top_k=3), want)
  assert any(r["slots"] for r in want)
  # Batches of any size give the same records.
  in_pairs = predictor_lib.load_predictor(snips_builtin, batch_size=2)
  _assert_same_predictions(in_pairs.predict(QUERIES, top_k=3), want)
  # The vocabulary is the file's own (its metadata).
  rows = [row for row, _ in UNREADABLE]
  assert [r["unreadable_words"] for r in builtin.predict(rows)] == [
      count for _, count in UNREADABLE]

  pairs = ["\t".join(pair) for pair in PAIRS]
  builtin = predictor_lib.load_predictor(glue_builtin)
  assert builtin.kind == "classification"
  assert builtin.input_names == ("sentence_a", "sentence_b")
  assert builtin.labels == tuple(glue_lib.LABEL_NAMES["mnli"])
  want = predictor_lib.load_predictor(glue[1]).predict(pairs, top_k=3)
  _assert_same_predictions(builtin.predict(pairs, top_k=3), want)
  assert len({r["label"] for r in want}) > 1


def test_single_sentence_classifier_takes_sentence(tmp_path):
  model = sentence_classifier.SentenceClassifier(
      deploy_testing.tiny_encoder(7, SEQ_LENGTH), num_classes=2)
  module = text_classification_export.TextClassificationExportModule(
      model, ["negative", "positive"], assets.default_student_vocab(),
      pair=False, seq_length=SEQ_LENGTH)
  export_dir, _ = _export(module, tmp_path, convert=False)
  predictor = predictor_lib.load_predictor(export_dir)
  assert predictor.input_names == ("sentence",)
  records = predictor.predict(["a fine film", {"text": "dull"},
                               {"sentence": "so dull"}], top_k=2)
  assert [r["text"] for r in records] == ["a fine film", "dull", "so dull"]
  assert all(r["label"] in ("negative", "positive") for r in records)
  # Its builtin file takes one text too, and gives the same labels.
  builtin = predictor_lib.load_predictor(_builtin(export_dir))
  assert builtin.input_names == ("sentence",)
  assert [r["label"] for r in builtin.predict(
      ["a fine film", "dull", "so dull"])] == [r["label"] for r in records]


def test_top_k_is_ordered_and_cut_to_the_labels(glue):
  predictor = predictor_lib.load_predictor(glue[1])
  rows = ["\t".join(pair) for pair in PAIRS]
  for k, length in ((1, 1), (2, 2), (3, 3), (10, 3)):
    for record in predictor.predict(rows, top_k=k):
      ranked = record["top_k"]
      assert len(ranked) == length
      assert ranked[0] == {"label": record["label"],
                           "score": record["score"]}
      scores = [entry["score"] for entry in ranked]
      assert scores == sorted(scores, reverse=True)
      assert len({entry["label"] for entry in ranked}) == length
      if length == 3:
        assert sum(scores) == pytest.approx(1.0, abs=1e-5)


def test_batches_give_the_same_records(snips):
  one_call = predictor_lib.load_predictor(snips[1]).predict(QUERIES, top_k=2)
  in_pairs = predictor_lib.load_predictor(snips[1], batch_size=2)
  assert in_pairs.predict(QUERIES, top_k=2) == one_call
  assert in_pairs.predict([]) == []


def test_tflite_labels_from_the_file_beside_it(snips, tmp_path, monkeypatch):
  # A .tflite whose label table cannot be read: only its label output,
  # then the label list beside it.
  monkeypatch.setattr(predictor_lib, "tflite_label_table", lambda *args: None)
  path = str(tmp_path / "snips.tflite")
  shutil.copy(snips[1], path)
  want = predictor_lib.load_predictor(snips[0]).predict(QUERIES, top_k=2)
  alone = predictor_lib.load_predictor(path)
  assert alone.labels is None
  top_1 = alone.predict(QUERIES)
  assert [r["intent"] for r in top_1] == [r["intent"] for r in want]
  assert [len(r["top_k"]) for r in top_1] == [1] * len(QUERIES)
  with pytest.raises(ValueError, match=r"top_k=2 needs the model's label "
                     r"names.*snips\.tflite\.labels\.json"):
    alone.predict(QUERIES, top_k=2)

  labels = path + predictor_lib.TFLITE_LABELS_SUFFIX
  shutil.copy(os.path.join(snips[0], "assets.extra", "labels.json"), labels)
  beside = predictor_lib.load_predictor(path)
  assert beside.labels_source == labels
  _assert_same_predictions(beside.predict(QUERIES, top_k=2), want)

  # A list that is not the model's is refused, not trusted.
  for names, message in ((["a", "b", "c", "d"], "does not match"),
                         (INTENTS[:3], "names 3 labels but .* scores 4")):
    with open(labels, "w", encoding="utf-8") as f:
      json.dump({"intents": names, "slots": SLOTS}, f)
    with pytest.raises(ValueError, match=message):
      predictor_lib.load_predictor(path).predict(QUERIES, top_k=2)


# Rows and how many of their whitespace words the shipped student vocabulary
# turns wholly into [UNK].
UNREADABLE = [
    ("play norah jones on spotify", 0),
    ("rate this book 5 stars 😀", 1),
    ("Москва weather tomorrow", 1),
    ("北京 天气 怎么样", 3),
    ("مرحبا play", 1),
    ("naïve café 👍🏽 👨‍👩‍👧", 2),  # Accents are stripped; emoji are not read.
    ("Ørsted  pâté straße", 1),  # Ø has no decomposition.
    ("", 0),
]


def test_unreadable_words_count_what_the_student_cannot_read(
    snips, glue, tmp_path):
  rows = [row for row, _ in UNREADABLE]
  want = [count for _, count in UNREADABLE]
  # The in-graph tokenizer agrees, word by word.
  words = [word for row in rows for word in row.split()]
  assert sum(unreadable.unreadable_mask(
      words, assets.default_student_vocab())) == sum(want)
  for path in snips:
    predictor = predictor_lib.load_predictor(path)
    # The SavedModel's own vocabulary; the .tflite's, beside it in the
    # SavedModel it was converted from.
    assert predictor.vocab_source == os.path.join(snips[0], "assets",
                                                  "student_vocab.txt")
    assert [r["unreadable_words"] for r in predictor.predict(rows)] == want
  # Both texts of a pair.
  pairs = predictor_lib.load_predictor(glue[1]).predict(
      ["你好 world\t😀 😀", "a man sleeps\tнет"])
  assert [r["unreadable_words"] for r in pairs] == [3, 1]

  # A .tflite alone: the shipped vocabulary; then the one beside it, then
  # --vocab.
  path = str(tmp_path / "alone.tflite")
  shutil.copy(snips[1], path)
  assert predictor_lib.load_predictor(path).vocab_source == (
      assets.default_student_vocab())
  tiny = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "play", "北", "##京"]
  with open(path + predictor_lib.TFLITE_VOCAB_SUFFIX, "w", encoding="utf-8") as f:
    f.write("\n".join(tiny) + "\n")
  beside = predictor_lib.load_predictor(path)
  assert beside.vocab_source == path + predictor_lib.TFLITE_VOCAB_SUFFIX
  assert [r["unreadable_words"] for r in beside.predict(
      ["play 北京 天气", "play"])] == [1, 0]
  given = predictor_lib.load_predictor(path, vocab=assets.default_student_vocab())
  assert [r["unreadable_words"] for r in given.predict(rows)] == want
  with pytest.raises(FileNotFoundError, match="nope.txt does not exist"):
    predictor_lib.load_predictor(path, vocab=str(tmp_path / "nope.txt"))


def test_the_label_table_inside_a_tflite(glue, snips):
  with open(snips[1], "rb") as f:
    content = f.read()
  assert predictor_lib.tflite_label_table(content, "intent") == INTENTS
  # The tag table has the '' that padding reads.
  assert predictor_lib.tflite_label_table(content, "slot_tags") == SLOTS + [""]
  assert predictor_lib.tflite_label_table(content, "intent_probs") is None
  assert predictor_lib.tflite_label_table(content, "no_such_output") is None
  with open(glue[1], "rb") as f:
    assert predictor_lib.tflite_label_table(f.read(), "label") == list(
        glue_lib.LABEL_NAMES["mnli"])


def test_library_errors_say_what_was_expected(glue, tmp_path):
  with pytest.raises(FileNotFoundError, match=r"nope does not exist; "
                     "expected a SavedModel directory"):
    predictor_lib.load_predictor(str(tmp_path / "nope"))
  with pytest.raises(ValueError, match="is a directory but not a SavedModel"):
    predictor_lib.load_predictor(str(tmp_path))
  text = tmp_path / "model.txt"
  text.write_text("hello, not a model")
  with pytest.raises(ValueError, match="neither a SavedModel directory nor "
                     "a .tflite file"):
    predictor_lib.load_predictor(str(text))
  # Token ids in, but no vocabulary or labels to tokenize and name with.
  spec = tf.TensorSpec([1, 8], tf.int32)

  class TokenIds(tf.Module):

    @tf.function(input_signature=[spec] * 3)
    def serve(self, input_word_ids, input_mask, input_type_ids):
      ids = tf.cast(input_word_ids + input_mask + input_type_ids, tf.float32)
      return {"probabilities": tf.nn.softmax(ids[:, :2])}

  module = TokenIds()
  tf.saved_model.save(module, str(tmp_path / "ids"),
                      signatures={"serving_default": module.serve})
  ids = tmp_path / "ids.tflite"
  ids.write_bytes(tf.lite.TFLiteConverter.from_saved_model(
      str(tmp_path / "ids")).convert())
  with pytest.raises(ValueError, match=r"takes token ids \(input_word_ids, "
                     r"input_mask, input_type_ids\) but its metadata lacks "
                     r"vocab.txt, labels.txt"):
    predictor_lib.load_predictor(str(ids))
  predictor = predictor_lib.load_predictor(glue[1])
  with pytest.raises(ValueError, match=r"row 2: this sentence-pair model "
                     r"takes text_a and text_b separated by one tab; "
                     r"received 0 tabs"):
    predictor.predict(["a\tb", "no tab here"])
  with pytest.raises(ValueError, match="received 2 tabs"):
    predictor.predict(["a\tb\tc"])
  with pytest.raises(ValueError, match=r'takes "text_a" and "text_b".*'
                     r"keys \['text'\]"):
    predictor.predict([{"text": "a"}])
  with pytest.raises(ValueError, match="top_k must be at least 1"):
    predictor.predict(["a\tb"], top_k=0)


def test_read_rows_tells_text_from_json_and_refuses_bad_lines():
  lines = [b"\xef\xbb\xbfplay jazz\r\n", b"\n", b"   \n",
           b'{"text": "add {this}"}\n', "  caf\u00e9\tnoir".encode(),
           b"{not json\n", b"\xff\xfe\n"]
  rows = predict_cli.read_rows(lines, "q.txt")
  assert next(rows) == ("line 1 of q.txt", "play jazz")
  assert next(rows) == ("line 4 of q.txt", {"text": "add {this}"})
  assert next(rows) == ("line 5 of q.txt", "  caf\u00e9\tnoir")
  with pytest.raises(ValueError, match=r"line 6 of q.txt starts with '\{' "
                     "but is not a JSON object"):
    next(rows)
  rows = predict_cli.read_rows(lines[-1:], "q.txt")
  with pytest.raises(ValueError, match=r"line 1 of q.txt is not UTF-8 text"):
    next(rows)


# The command.


def _command(tmp_path, *argv):
  """(exit status, stdout, stderr) of the command run in this process."""
  values = flags.FlagValues()
  predict_cli.define_flags(values)
  values(["mixvocab-predict", *argv])
  stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
  with open(stdout, "w") as out, open(stderr, "w") as err:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
      try:
        predict_cli.main(["mixvocab-predict"], values)
        status = 0
      except SystemExit as e:
        status = e.code
  return status, stdout.read_text(), stderr.read_text()


def _start(*args):
  env = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.Popen(
      [sys.executable, "-m", "mixvocab_tf.cli.predict", *args],
      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      env=env, cwd=_ROOT)


def _finish(process, stdin=""):
  stdout, stderr = process.communicate(stdin.encode("utf-8"), timeout=600)
  return process.returncode, stdout.decode("utf-8"), stderr.decode("utf-8")


def test_command_on_stdin_and_stdout_and_its_errors(snips, glue, tmp_path):
  """`python -m mixvocab_tf.cli.predict` as a process: stdin to stdout, a
  one-line error, --help (absl's: exit status 1)."""
  pairs = tmp_path / "pairs.txt"
  pairs.write_text("a man sleeps\tnobody sleeps\njust one sentence\n")
  # Started together: each spends its time importing TensorFlow.
  processes = [
      _start(f"--model={snips[1]}", "--input=-", "--top_k=2"),
      _start(f"--model={glue[1]}", f"--input={pairs}"),
      _start("--help"),
  ]
  # Text and JSON lines and a blank line (skipped).
  stdin = "\n".join([QUERIES[0], json.dumps({"text": QUERIES[1]}), "",
                     QUERIES[3]]) + "\n"
  status, stdout, stderr = _finish(processes[0], stdin)
  assert status == 0, stderr
  got = [json.loads(line) for line in stdout.splitlines()]
  assert got == predictor_lib.load_predictor(snips[1]).predict(
      [QUERIES[0], QUERIES[1], QUERIES[3]], top_k=2)

  status, stdout, stderr = _finish(processes[1])
  assert status == 1 and not stdout
  assert "Traceback" not in stderr, stderr
  assert stderr.strip().splitlines()[-1] == (
      f"error: ValueError: line 2 of {pairs}: this sentence-pair model takes "
      "text_a and text_b separated by one tab; received 0 tabs in 'just one "
      "sentence'. Write 'text_a<TAB>text_b', or a JSON object with "
      '"text_a" and "text_b".')

  _, stdout, _ = _finish(processes[2])
  assert "JSON lines out" in stdout
  for flag in ("--model", "--input", "--output", "--top_k"):
    assert flag in stdout


def test_command_reads_a_file_and_writes_a_file(glue, tmp_path):
  pairs = tmp_path / "pairs.tsv"
  pairs.write_text("".join(f"{a}\t{b}\n" for a, b in PAIRS),
                   encoding="utf-8")
  output = tmp_path / "pairs.jsonl"
  # --vocab reaches `unreadable_words`: a vocabulary of three words.
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\na\nman\nis\n",
                   encoding="utf-8")
  status, stdout, stderr = _command(
      tmp_path, f"--model={glue[0]}", f"--input={pairs}",
      f"--output={output}", "--top_k=3", "--batch_size=3",
      f"--vocab={vocab}")
  assert (status, stdout) == (0, ""), stderr
  got = [json.loads(line)
         for line in output.read_text(encoding="utf-8").splitlines()]
  # The same batches as the command's: scores of other batchings differ in
  # the last bits.
  assert got == predictor_lib.load_predictor(
      glue[0], batch_size=3, vocab=str(vocab)).predict(
          ["\t".join(pair) for pair in PAIRS], top_k=3)
  # "A man is playing a guitar." / "Someone plays music.": 2 + 3.
  assert got[0]["unreadable_words"] == 5


def test_command_writes_doccano_records_and_prodigy_tasks(snips, glue,
                                                         tmp_path):
  """--output_format=doccano: the JSONL doccano imports; prodigy: the tasks
  Prodigy streams (spans as objects, the intent in "accept", the score in
  "meta"). The job's reader reads both back as the model's answers; refused
  for a pair model."""
  queries = tmp_path / "queries.txt"
  queries.write_text("".join(q + "\n" for q in QUERIES[:3]))
  records = predictor_lib.load_predictor(snips[1]).predict(QUERIES[:3])
  shapes = {
      "doccano": lambda g: (g["text"], g["cats"], g["entities"]),
      "prodigy": lambda g: (g["text"], g["accept"], [
          [s["start"], s["end"], s["label"]] for s in g["spans"]])}
  for output_format, shape in shapes.items():
    status, stdout, stderr = _command(
        tmp_path, f"--model={snips[1]}", f"--input={queries}",
        f"--output_format={output_format}")
    assert status == 0, stderr
    got = [json.loads(line) for line in stdout.splitlines()]
    assert [shape(g) for g in got] == [
        (r["text"], [r["intent"]],
         [[s["start"], s["end"], s["type"]] for s in r["slots"]])
        for r in records]
    if output_format == "prodigy":
      assert [g["meta"]["score"] for g in got] == [
          round(r["score"], 4) for r in records]
    answers = tmp_path / f"{output_format}.jsonl"
    answers.write_text(stdout)
    split = intent_slot_files.read_intent_slot(str(answers))
    assert split.intents == [r["intent"] for r in records]
    status, _, stderr = _command(tmp_path, f"--model={glue[1]}",
                                 f"--input={queries}",
                                 f"--output_format={output_format}")
    assert status == 1 and "hold one text" in stderr


def test_command_writes_label_studio_tasks(snips, glue, tmp_path):
  """--output_format=label_studio: one JSON list of tasks, each answer its
  prediction, under Label Studio's templates' names or the project's
  (`--label_studio_project`); read back as annotations, they are the
  answers; an empty input is an empty list."""
  queries = tmp_path / "queries.txt"
  queries.write_text("".join(q + "\n" for q in QUERIES[:3]))
  records = predictor_lib.load_predictor(snips[1]).predict(QUERIES[:3])
  project = tmp_path / label_studio.NAMES_JSON
  project.write_text(json.dumps({"text": "query", "to_name": "q",
                                 "labels": "slot", "choices": "goal"}))
  for names_flag, names in (
      ((), label_studio.template_names(intent_slot=True)),
      ((f"--label_studio_project={project}",),
       {"text": "query", "to_name": "q", "labels": "slot",
        "choices": "goal"})):
    status, stdout, stderr = _command(
        tmp_path, f"--model={snips[1]}", f"--input={queries}",
        "--output_format=label_studio", *names_flag)
    assert status == 0, stderr
    assert ("templates' names" in stderr) == (not names_flag)
    tasks = json.loads(stdout)
    assert [t["predictions"][0]["score"] for t in tasks] == [
        r["score"] for r in records]
    for task in tasks:  # Accepted as they are: annotations.
      task["annotations"] = [{"result": task.pop("predictions")[0][
          "result"]}]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    found = label_studio.read_export(str(export), names["text"])
    assert found["names"] == names
    assert found["records"] == [
        {"text": r["text"], "intent": r["intent"],
         "spans": [[s["start"], s["end"], s["type"]] for s in r["slots"]]}
        for r in records]
  empty = tmp_path / "empty.txt"
  empty.write_text("")
  status, stdout, stderr = _command(tmp_path, f"--model={snips[1]}",
                                    f"--input={empty}",
                                    "--output_format=label_studio")
  assert (status, stdout) == (0, "[]\n"), stderr
  status, _, stderr = _command(tmp_path, f"--model={snips[1]}",
                               f"--input={queries}",
                               f"--label_studio_project={project}")
  assert status == 1 and "give --output_format=label_studio" in stderr
  status, _, stderr = _command(tmp_path, f"--model={glue[1]}",
                               f"--input={queries}",
                               "--output_format=label_studio")
  assert status == 1 and "hold one text" in stderr


def test_command_writes_rasa_parse_results(snips, glue, tmp_path):
  """--output_format=rasa: the records in the shape of Rasa's parse result;
  refused for a pair model before anything runs."""
  queries = tmp_path / "queries.txt"
  queries.write_text("".join(q + "\n" for q in QUERIES[:3]))
  status, stdout, stderr = _command(
      tmp_path, f"--model={snips[1]}", f"--input={queries}", "--top_k=2",
      "--output_format=rasa")
  assert status == 0, stderr
  records = predictor_lib.load_predictor(snips[1]).predict(QUERIES[:3],
                                                           top_k=2)
  got = [json.loads(line) for line in stdout.splitlines()]
  assert [g["intent"] for g in got] == [
      {"name": r["intent"], "confidence": r["score"]} for r in records]
  assert [[(e["entity"], e["start"], e["end"], e["value"],
            e["confidence_entity"])
           for e in g["entities"]] for g in got] == [
               [(s["type"], s["start"], s["end"], s["text"], s["score"])
                for s in r["slots"]] for r in records]
  assert [len(g["intent_ranking"]) for g in got] == [2, 2, 2]
  # A synonym of the first slot's text maps its value, as Rasa's would.
  first = next(s["text"] for r in records for s in r["slots"])
  synonyms = tmp_path / "nlu.yml"
  synonyms.write_text(f"nlu:\n- synonym: canonical\n  examples: |\n"
                      f"    - {first.upper()}\n")
  status, stdout, stderr = _command(
      tmp_path, f"--model={snips[1]}", f"--input={queries}",
      "--output_format=rasa", f"--synonyms={synonyms}")
  assert status == 0, stderr
  values = [e["value"] for line in stdout.splitlines()
            for e in json.loads(line)["entities"]]
  assert "canonical" in values and first not in values
  status, _, stderr = _command(tmp_path, f"--model={glue[1]}",
                               f"--input={queries}", "--output_format=rasa")
  assert status == 1 and "sentence-pair model" in stderr
  status, _, stderr = _command(tmp_path, f"--model={snips[1]}",
                               f"--input={queries}", f"--synonyms={synonyms}")
  assert status == 1 and "give --output_format=rasa" in stderr
  status, _, stderr = _command(
      tmp_path, f"--model={snips[1]}", f"--input={queries}",
      "--output_format=rasa", f"--synonyms={tmp_path / 'none.yml'}")
  assert status == 1 and "none.yml does not exist" in stderr


def test_command_errors_are_one_line(snips, glue, tmp_path):
  no_tab = tmp_path / "no_tab.txt"
  no_tab.write_text("a man sleeps\tnobody sleeps\njust one sentence\n")
  latin1 = tmp_path / "latin1.txt"
  latin1.write_bytes("caf\u00e9 noir\n".encode("latin-1"))
  cases = {  # flags: message.
      (f"--model={tmp_path / 'missing'}", "--input=-"):
          r"FileNotFoundError: The model .*missing does not exist; "
          "expected a SavedModel directory",
      (f"--model={tmp_path}", "--input=-"):
          r"ValueError: .* is a directory but not a SavedModel",
      (f"--model={glue[1]}", f"--input={no_tab}"):
          r"ValueError: line 2 of .*no_tab.txt: this sentence-pair model "
          r"takes text_a and text_b separated by one tab; received 0 tabs",
      (f"--model={snips[0]}", f"--input={tmp_path / 'no_input.txt'}"):
          r"FileNotFoundError: Cannot read --input=.*no_input.txt: "
          "No such file or directory; expected a UTF-8 text file",
      (f"--model={snips[0]}", f"--input={tmp_path}"):
          r"IsADirectoryError: Cannot read --input=",
      (f"--model={snips[0]}", f"--input={latin1}"):
          r"ValueError: line 1 of .*latin1.txt is not UTF-8 text",
      (f"--model={glue[1]}", f"--input={no_tab}", "--top_k=0"):
          r"top_k must be at least 1|flag --top_k=0",
      (f"--model={snips[0]}",):
          r"ValueError: --input is required",
  }
  for argv, message in cases.items():
    try:
      status, stdout, stderr = _command(tmp_path, *argv)
    except flags.IllegalFlagValueError as e:  # absl refuses --top_k=0.
      assert re.search(message, str(e)), (argv, e)
      continue
    assert (status, stdout) == (1, ""), (argv, stderr)
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and re.search(message, last), (argv,
                                                                     last)


def test_console_script_help():
  script = shutil.which("mixvocab-predict")
  if script is None:
    pytest.skip("mixvocab-predict is not installed (pip install -e .).")
  result = subprocess.run([script, "--help"], capture_output=True, text=True,
                          timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert "JSON lines out" in result.stdout
  assert "--top_k" in result.stdout


# Scoring an export on labelled data: `mixvocab-evaluate --model`.


def _evaluate(*args):
  env = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.Popen(
      [sys.executable, "-m", "mixvocab_tf.cli.evaluate", *args],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=_ROOT)


def test_evaluate_scores_each_export_on_labelled_files(
    snips, snips_builtin, glue, tmp_path):
  """The command's scores are those of the predictor's answers, scored by
  hand here, for the SavedModel, the .tflite and the builtin file of an
  intent and slot model (a Goo split directory) and for a pair classifier
  (a CSV); a model given another task's data is refused in one line."""
  queries = [q for q in QUERIES if q.strip()][:5]
  answers = predictor_lib.load_predictor(snips[1]).predict(queries)
  # Gold: the model's own answer for the first three queries (one tag of
  # the third changed), another intent and all-'O' tags for the rest.
  gold = []
  for i, answer in enumerate(answers):
    tags = list(answer["tags"]) + ["O"] * (len(queries[i].split()) -
                                           len(answer["tags"]))
    if i == 2:
      tags[0] = "B-city" if tags[0] != "B-city" else "B-artist"
    intent = (answer["intent"] if i < 3 else
              next(n for n in INTENTS if n != answer["intent"]))
    gold.append((intent, tags if i < 3 else ["O"] * len(tags)))
  valid = tmp_path / "valid"
  valid.mkdir()
  (valid / "seq.in").write_text("".join(q + "\n" for q in queries),
                                encoding="utf-8")
  (valid / "seq.out").write_text("".join(" ".join(t) + "\n"
                                         for _, t in gold))
  (valid / "label").write_text("".join(i + "\n" for i, _ in gold))
  want_slot_f1 = metrics_lib.slot_f1(
      [t for _, t in gold],
      [list(a["tags"]) + ["O"] * (len(t) - len(a["tags"]))
       for a, (_, t) in zip(answers, gold)])

  # A file's empty text is refused, so the pairs without one; the second
  # of the three gold-labelled with the label the model does not answer.
  pairs = [p for p in PAIRS if all(p)]
  glue_predictor = predictor_lib.load_predictor(glue[1])
  pair_gold = [a["label"] if i != 1 else
               next(n for n in glue_predictor.labels if n != a["label"])
               for i, a in enumerate(glue_predictor.predict(
                   ["\t".join(p) for p in pairs]))]
  pairs_csv = tmp_path / "pairs.csv"
  pairs_csv.write_text("text_a,text_b,label\n" + "".join(
      f'"{a}","{b}",{label}\n' for (a, b), label in zip(pairs, pair_gold)),
                       encoding="utf-8")

  models = [snips[0], snips[1], snips_builtin]
  processes = [
      _evaluate(f"--model={m}", f"--data={valid}",
                f"--output_json={tmp_path / f'{i}.json'}",
                f"--predictions={tmp_path / f'{i}.jsonl'}")
      for i, m in enumerate(models)]
  processes.append(_evaluate(f"--model={glue[1]}", f"--data={pairs_csv}"))
  processes.append(_evaluate(f"--model={snips[1]}", f"--data={pairs_csv}"))
  processes.append(_evaluate(f"--model_dir={tmp_path}", f"--data={valid}"))
  # The .tflite against its SavedModel on the same examples; a baseline
  # of another task is refused before either answers.
  processes.append(_evaluate(f"--model={snips[1]}", f"--baseline={snips[0]}",
                             f"--data={valid}"))
  processes.append(_evaluate(f"--model={snips[1]}", f"--baseline={glue[1]}",
                             f"--data={valid}"))
  for i, process in enumerate(processes[:3]):
    status, stdout, stderr = _finish(process)
    assert status == 0, stderr
    record = json.loads((tmp_path / f"{i}.json").read_text())
    got = record["metrics"]
    assert record["examples"] == 5
    assert got["intent_accuracy"] == pytest.approx(3 / 5)
    assert got["slot_f1"] == pytest.approx(want_slot_f1)
    assert 0 < want_slot_f1 < 1
    # The floor: the most frequent gold intent (2 of 5 at most here).
    floor = max(collections.Counter(i for i, _ in gold).values()) / 5
    assert got["majority_accuracy"] == pytest.approx(floor)
    assert "| intent accuracy | 60.00 |" in stdout
    written = [json.loads(l) for l in
               (tmp_path / f"{i}.jsonl").read_text().splitlines()]
    assert [w["correct"] for w in written] == [True, True, False, False,
                                               False]
    assert [w["gold"]["intent"] for w in written] == [i for i, _ in gold]

  status, stdout, stderr = _finish(processes[3])
  assert status == 0, stderr
  assert "| accuracy | 66.67 |" in stdout
  assert json.loads(stdout[:stdout.rindex("}") + 1])["metrics"][
      "accuracy"] == pytest.approx(2 / 3)

  status, stdout, stderr = _finish(processes[4])
  assert status == 1 and "Traceback" not in stderr
  assert re.search(r"error: ValueError: .*model.tflite is an intent and slot "
                   r"model, but .*pairs.csv holds sentence pairs with labels",
                   stderr.strip().splitlines()[-1]), stderr

  status, stdout, stderr = _finish(processes[5])
  assert status == 1 and "Traceback" not in stderr
  assert stderr.strip().splitlines()[-1].startswith(
      "error: ValueError: --data goes with --model"), stderr

  status, stdout, stderr = _finish(processes[6])
  assert status == 0, stderr
  change = json.loads(stdout[:stdout.rindex("}") + 1])["baseline"]["change"]
  # Both exports answer three of the five intents right.
  assert change["intent_accuracy"]["before"] == pytest.approx(3 / 5)
  assert change["intent_accuracy"]["after"] == pytest.approx(3 / 5)
  assert change["slot_f1"]["after"] == pytest.approx(want_slot_f1)
  for found in change.values():
    assert found["low"] <= found["change"] <= found["high"]
  assert re.search(
      rf"Against --baseline={re.escape(str(snips[0]))}, on the same 5 "
      r"examples: intent acc\. 60\.0 -> 60\.0 \(\+0\.0; 95% interval "
      r"[+-][0-9.]+ to [+-][0-9.]+\), slot F1 ", stdout), stdout

  status, stdout, stderr = _finish(processes[7])
  assert status == 1 and "Traceback" not in stderr
  assert re.search(r"error: ValueError: .*\.tflite is a sentence-pair "
                   r"classifier, but .*valid holds intent and slot examples",
                   stderr.strip().splitlines()[-1]), stderr
