"""The Java tokenizer and decoder (examples/android) answer as the package does.

An Android app runs the builtin-ops .tflite in stock LiteRT and tokenizes,
packs and decodes itself: `examples/android/src/mixvocab` does that in plain
Java. Compiled here with the JDK (`javac`) and run through
`examples/android/test/Units.java` (JSON in and out), on the exports of
`deploy_testing.deploy_models()`:

- its WordPiece gives the ids and first-piece positions of the package's
  in-graph tokenizer (`ServingTokenizer.pack_words`) on every validation
  query and on text that exercises each normalization rule, and its sentence
  packing `ServingTokenizer.pack_sentences`' ids, mask and segment ids,
  single texts and pairs, the longer text cut first;
- its Viterbi gives `iob_decoding.viterbi_decode_numpy`'s tags;
- the app end to end: Java packs each validation query, LiteRT (the
  interpreter an Android app links, here its Python binding) runs the
  builtin file on those ids at the query's own length, Java decodes the
  outputs; intents, tags and every word's and slot's score are the
  predictor's on the builtin file, and agree with the raw-string .tflite's;
  a slot tagger's (`deploy_testing.tiny_slot_tagger()`) the same, the
  decoder saying it is one.

Only LiteRT's Java binding is not run here (no Android device or SDK).
Needs `javac` and `java` (Debian's `openjdk-17-jdk-headless`): without them
the tests skip, except under CI (CI=true), where they fail.
"""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_testing import deploy_testing
from mixvocab_tf.export import serving_tokenizer
from mixvocab_tf.serving import predictor
from mixvocab_tf.tasks.finetuning import iob_decoding

# Runs only with --run_large (the full suite): jobs, exports.
pytestmark = pytest.mark.large

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANDROID = os.path.join(ROOT, "examples", "android")
#: Most a probability may differ from the raw-string .tflite's.
SCORE_TOLERANCE = 0.01
#: Short enough that some pairs and queries are cut.
SHORT_LENGTH = 8


@pytest.fixture(scope="module")
def java(tmp_path_factory):
  """The classpath of the compiled example and its test harness."""
  missing = [tool for tool in ("javac", "java") if not shutil.which(tool)]
  if missing:
    message = (f"The Android example's tests need {' and '.join(missing)} "
               "(apt-get install -y openjdk-17-jdk-headless).")
    if os.environ.get("CI") == "true":
      pytest.fail(message + " (CI installs it in .ci/run.)")
    pytest.skip(message)
  classes = str(tmp_path_factory.mktemp("java_classes"))
  sources = [os.path.join(ANDROID, "src", "mixvocab", name) for name in
             sorted(os.listdir(os.path.join(ANDROID, "src", "mixvocab")))]
  # The library against Java 8's API, what Android 7.0 (API 24) offers;
  # every warning an error.
  for command in (
      ["javac", "-Xlint:all,-options", "-Werror", "--release", "8", "-d",
       classes, *sources],
      ["javac", "-Xlint:all", "-Werror", "-cp", classes, "-d", classes,
       os.path.join(ANDROID, "test", "Units.java")]):
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
  return classes


@pytest.fixture(scope="module")
def models(java):  # pylint: disable=unused-argument,redefined-outer-name
  return deploy_testing.deploy_models()


def _units(classes, args, request):
  result = subprocess.run(["java", "-cp", classes, "Units", *args],
                          input=json.dumps(request), capture_output=True,
                          text=True, timeout=600)
  if result.returncode:
    pytest.fail(f"java Units {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stderr[-4000:]}")
  return json.loads(result.stdout)


def test_tokenizer_matches_in_graph_tokenizer(java, models):  # pylint: disable=redefined-outer-name
  builtin = models["intent_slot"]["builtin"]
  tokenizer = serving_tokenizer.ServingTokenizer(
      deploy_testing.packed_files(builtin)["vocab.txt"])
  texts = models["intent_slot"]["queries"] + deploy_testing.TRICKY_TEXTS
  for length in (deploy_testing.seq_length(builtin), SHORT_LENGTH):
    got_all = _units(java, ["tokenize", builtin, str(length)], texts)
    for text, got in zip(texts, got_all, strict=True):
      features, words = tokenizer.pack_words(
          tf.constant([text.encode("utf-8")]), length)
      for name, value in features.items():
        expected = np.pad(value.numpy()[0], (0, length - value.shape[1]))
        assert got[name] == expected.tolist(), (text, length, name)
      positions = words["positions"].numpy().tolist()
      assert got["positions"][:len(positions)] == positions, (text, length)
      assert all(p == -1 for p in got["positions"][len(positions):]), (
          text, length)


def test_sentence_packing_matches_in_graph_tokenizer(java, models):  # pylint: disable=redefined-outer-name
  builtin = models["text_classification"]["builtin"]
  tokenizer = serving_tokenizer.ServingTokenizer(
      deploy_testing.packed_files(builtin)["vocab.txt"])
  queries = models["text_classification"]["queries"]
  pairs = deploy_testing.PAIRS + list(zip(queries[0:40:2], queries[1:40:2]))
  texts = queries + [t for t in deploy_testing.TRICKY_TEXTS if "\t" not in t]
  for length in (24, SHORT_LENGTH):
    for examples in (pairs, texts):
      got_all = _units(java, ["sentences", builtin, str(length)],
                       [list(e) if examples is pairs else e
                        for e in examples])
      columns = list(zip(*examples)) if examples is pairs else [examples]
      features = tokenizer.pack_sentences(
          *[tf.constant([t.encode("utf-8") for t in column])
            for column in columns], seq_length=length)
      for i, (example, got) in enumerate(zip(examples, got_all, strict=True)):
        for name, value in features.items():
          row = value.numpy()[i]
          expected = np.pad(row, (0, length - len(row))).tolist()
          assert got[name] == expected, (example, length, name)
  # Pairs that do not fit are cut.
  cut = tokenizer.pack_sentences(
      *[tf.constant(column) for column in zip(*pairs)],
      seq_length=24)["input_mask"].numpy().sum(axis=1)
  assert (cut == 24).sum() >= 4


def test_viterbi_matches_numpy(java, models):  # pylint: disable=redefined-outer-name
  tags = deploy_testing.packed_files(
      models["intent_slot"]["builtin"])["slot_tags.txt"]
  start, transitions = iob_decoding.allowed_transitions(tags)
  scores = deploy_testing.viterbi_cases(len(tags))
  got_all = _units(java, ["viterbi"],
                   {"tags": tags, "scores": [s.tolist() for s in scores]})
  for matrix, got in zip(scores, got_all, strict=True):
    assert got == iob_decoding.viterbi_decode_numpy(
        matrix[np.newaxis], [len(matrix)], start, transitions)[0]


def _run_builtin(model, packed):
  """The builtin file's outputs on Java's ids, each at its own length."""
  from ai_edge_litert.interpreter import Interpreter  # pylint: disable=g-import-not-at-top
  run = Interpreter(model_path=model).get_signature_runner()
  outputs = []
  for features in packed:
    length = sum(features["input_mask"])
    one = lambda name: np.array([features[name][:length]], np.int32)  # pylint: disable=cell-var-from-loop
    out = run(input_word_ids=one("input_word_ids"),
              input_mask=one("input_mask"),
              input_type_ids=one("input_type_ids"))
    outputs.append({"intent_probs": out["intent_probs"][0].tolist(),
                    "slot_probs": out["slot_probs"][0].tolist()})
  return outputs


def _app_answers(java, builtin, queries):  # pylint: disable=redefined-outer-name
  """Java packs `queries`, LiteRT runs `builtin` on its ids, Java decodes:
  the answers, checked against the predictor's on the same file."""
  length = deploy_testing.seq_length(builtin)
  packed = _units(java, ["tokenize", builtin, str(length)], queries)
  outputs = _run_builtin(builtin, packed)
  got_all = _units(java, ["decode", builtin, str(length)], [
      dict(text=text, **out) for text, out in zip(queries, outputs)])
  # The predictor on the same file: the same model outputs, decoded in
  # Python (the in-graph tokenizer, NumPy's Viterbi).
  same = predictor.load_predictor(builtin).predict(queries)
  for want, got in zip(same, got_all, strict=True):
    assert got["intent"] == want["intent"], (want, got)
    assert got["score"] == pytest.approx(want["score"], abs=1e-5)
    # The predictor gives the words the model could read (the first
    # `length - 2`); the app gives every word, those after them O.
    read = len(want["words"])
    assert [w["text"] for w in got["words"][:read]] == want["words"]
    assert [w["tag"] for w in got["words"][:read]] == want["tags"], (want, got)
    assert [w["score"] for w in got["words"][:read]] == pytest.approx(
        want["tag_scores"], abs=1e-5)
    assert {w["tag"] for w in got["words"][read:]} <= {"O"}
    assert [(s["type"], s["start"], s["end"]) for s in got["slots"]] == [
        (s["type"], s["start_word"], s["end_word"]) for s in want["slots"]], (
            want, got)
    assert [s["score"] for s in got["slots"]] == pytest.approx(
        [s["score"] for s in want["slots"]], abs=1e-5)
  return got_all


def test_app_answers_as_the_predictor(java, models):  # pylint: disable=redefined-outer-name
  files = models["intent_slot"]
  builtin = files["builtin"]
  queries = files["queries"] + [
      "play " * 60, "", "find the \ufb02ight to İstanbul", "emoji 😀 ok"]
  got_all = _app_answers(java, builtin, queries)
  assert not any(r["slot_tagger"] for r in got_all)
  assert sum(len(r["slots"]) for r in got_all) >= len(files["queries"])
  # The words past the cut are O and score 1 over the tags.
  tags = len(deploy_testing.packed_files(builtin)["slot_tags.txt"])
  long_query = got_all[len(files["queries"])]["words"]
  assert len(long_query) == 60 and long_query[-1]["tag"] == "O"
  assert long_query[-1]["score"] == pytest.approx(1 / tags)
  # Against the raw-string .tflite (its own tokenizer, in the graph).
  raw = predictor.load_predictor(files["tflite"]).predict(queries)
  agree = np.mean([g["intent"] == w["intent"] and
                   [x["tag"] for x in g["words"]] == w["tags"]
                   for g, w in zip(got_all, raw)])
  assert agree >= 0.99, agree
  for g, w in zip(got_all, raw):
    assert abs(g["score"] - w["score"]) < SCORE_TOLERANCE, (w, g)


def test_a_slot_taggers_answers(java, models, tmp_path):  # pylint: disable=redefined-outer-name
  # A model of data without intents (its one intent `none`): the decoder
  # says so, and its words, tags and slots are the predictor's.
  tagger = deploy_testing.tiny_slot_tagger(str(tmp_path))
  queries = models["intent_slot"]["queries"][:40] + ["play " * 60, ""]
  got_all = _app_answers(java, tagger["builtin"], queries)
  assert all(r["slot_tagger"] and r["intent"] == "none" for r in got_all)
  assert sum(bool(r["slots"]) for r in got_all) >= 10


def test_bad_input_gets_a_clear_error(java):  # pylint: disable=redefined-outer-name
  # A vocabulary of five tokens, intents a and b, tags O B-x I-x, and
  # "play play" packed in 4 positions (Units.java).
  messages = _units(java, ["errors"], None)
  assert messages == [
      "no vocab.txt: give the vocabulary packed in the metadata of "
      "model_builtin.tflite (ModelFiles.read)",
      "vocab.txt has no [CLS]",
      "no intents.txt or slot_tags.txt: give those of an intent-and-slot "
      "model's model_builtin.tflite (a classifier has labels.txt instead)",
      "the model has no packed files: export it again with metadata "
      "(model_builtin.tflite)",
      "the model's packed files are damaged (a cut or edited file?)",
      "intent_probs has 3 values; intents.txt has 2 intents",
      "slot_probs has 2 positions; the packed query has 4: run the model on "
      "this query's packed inputs",
      "slot_probs has 5 tags a position; slot_tags.txt has 3",
      "cannot pad 4 tokens to 2",
      None,  # The right sizes.
  ]
