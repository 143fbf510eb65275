"""The browser demo (examples/web) answers as the Python predictor does.

`examples/web` is a static page: it reads a `model_builtin.tflite` (LiteRT
builtin operators, TFLite Model Metadata) from its server and runs it in the
browser, a text classifier through MediaPipe Tasks' TextClassifier and an
intent and slot model through LiteRT.js with the page's own tokenizer and
IOB decoder. Here the page is served by `python3.11 -m http.server` on
127.0.0.1 and driven in headless Chromium (Debian's `chromium`, through
`playwright-core`: `examples/web/test/drive.mjs`), on the exports of
`deploy_testing.deploy_models()`, a sentence-pair classifier
(`deploy_testing.tiny_pair_classifier()`, which the page runs through
LiteRT.js with two text boxes) and a slot tagger
(`deploy_testing.tiny_slot_tagger()`, an intent and slot model of the one
intent `none`):

- the page's tokenizer gives the ids and first-piece positions of the
  package's in-graph tokenizer (`ServingTokenizer.pack_words`), on
  validation queries and on text that exercises each normalization rule;
- its packing of one text and of a pair gives `ServingTokenizer.pack_sentences`'
  ids, mask and segment ids, the longer text cut first when a pair does not
  fit;
- its IOB decoder gives `iob_decoding.viterbi_decode_numpy`'s tags;
- 20 validation queries typed into the page give the labels (classifier),
  intents, per-word tags and slot scores (intent and slots) of
  `predictor.load_predictor(model_dynamic.tflite)`, and pairs typed into its
  two boxes the labels of the pair classifier's raw-string .tflite,
  probabilities within 0.01; the slot tagger's page shows its words, tags
  and slots as the predictor gives them, and no intent;
  the page makes no request outside its server and throws no error. A
  screenshot of each page goes to the test's temporary directory and to
  $MIXVOCAB_SCREENSHOT_DIR when set.

Needs `node`, `chromium` and `examples/web/node_modules` (`npm ci` there):
without them the tests skip, except under CI (CI=true), where they fail.
"""

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.export import serving_tokenizer
from mixvocab_tf.serving import predictor
from mixvocab_tf.tasks.finetuning import iob_decoding
from mixvocab_testing import deploy_testing

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEB = os.path.join(ROOT, "examples", "web")
CHROMIUM = "/usr/bin/chromium"
NODE_PACKAGES = ("playwright-core", "@litertjs/core", "@mediapipe/tasks-text",
                 "@huggingface/tokenizers", "fflate")
#: Queries typed into each page.
NUM_QUERIES = 20
#: Most a probability shown by the page may differ from Python's.
SCORE_TOLERANCE = 0.01

#: Text for each rule of the in-graph normalizer (`deploy_testing`).
TRICKY_TEXTS = deploy_testing.TRICKY_TEXTS

#: Sequence length of the pair classifier: short enough that some pairs are
#: cut.
PAIR_SEQ_LENGTH = 24
#: Pairs typed into the page, besides pairs of validation queries.
PAIRS = deploy_testing.PAIRS


def _missing_tools():
  """What the page tests lack, or None."""
  missing = []
  if not shutil.which("node"):
    missing.append("node (apt-get install -y nodejs npm)")
  if not os.path.exists(CHROMIUM):
    missing.append(f"{CHROMIUM} (apt-get install -y chromium)")
  absent = [name for name in NODE_PACKAGES if not os.path.isdir(
      os.path.join(WEB, "node_modules", name))]
  if absent:
    missing.append(f"examples/web/node_modules ({', '.join(absent)}; run "
                   "`npm ci` in examples/web)")
  return "; ".join(missing) or None


@pytest.fixture(scope="module")
def tools():
  reason = _missing_tools()
  if reason:
    message = f"The browser demo tests need {reason}."
    if os.environ.get("CI") == "true":
      pytest.fail(message + " (CI installs them in .ci/run.)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def models(tools):  # pylint: disable=unused-argument,redefined-outer-name
  return deploy_testing.deploy_models()


def _free_port():
  with contextlib.closing(socket.socket()) as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


@pytest.fixture(scope="module")
def pair(tools, tmp_path_factory):  # pylint: disable=unused-argument,redefined-outer-name
  return deploy_testing.tiny_pair_classifier(
      str(tmp_path_factory.mktemp("pair")), seq_length=PAIR_SEQ_LENGTH)


@pytest.fixture(scope="module")
def tagger(tools, tmp_path_factory):  # pylint: disable=unused-argument,redefined-outer-name
  return deploy_testing.tiny_slot_tagger(str(tmp_path_factory.mktemp("tagger")))


@pytest.fixture(scope="module")
def server(models, pair, tagger, tmp_path_factory):  # pylint: disable=redefined-outer-name
  """The base URL of a server of examples/web and the four models."""
  root = tmp_path_factory.mktemp("web_root")
  os.makedirs(root / "examples")
  os.symlink(WEB, root / "examples" / "web")
  for kind, files in [*models.items(), ("pair", pair), ("tagger", tagger)]:
    os.makedirs(root / "models" / kind)
    os.symlink(files["builtin"], root / "models" / kind / "model_builtin.tflite")
  port = _free_port()
  process = subprocess.Popen(
      [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
      cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  base = f"http://127.0.0.1:{port}"
  try:
    deadline = time.time() + 30
    while True:
      try:
        urllib.request.urlopen(f"{base}/examples/web/index.html", timeout=2)
        break
      except OSError:
        if time.time() > deadline or process.poll() is not None:
          raise
        time.sleep(0.2)
    yield base
  finally:
    process.terminate()
    try:
      process.wait(timeout=10)
    except subprocess.TimeoutExpired:
      process.kill()
      process.wait()


def _node(args, stdin=None, timeout=600):
  result = subprocess.run(["node", *args], cwd=WEB, input=stdin,
                          capture_output=True, text=True, timeout=timeout)
  lines = result.stdout.strip().splitlines()
  if not lines:
    pytest.fail(f"node {' '.join(args)} printed nothing (exit "
                f"{result.returncode}):\n{result.stderr[-4000:]}")
  output = json.loads(lines[-1])
  if result.returncode or (isinstance(output, dict) and "error" in output):
    pytest.fail(f"node {' '.join(args)} failed (exit {result.returncode}):\n"
                f"{json.dumps(output, indent=1)[-6000:]}\n{result.stderr[-2000:]}")
  return output


def _drive(base, query, queries, tmp_path, name=None):
  """Types `queries` (a pair: [a, b]) into the page at
  `base/examples/web/?query`; its screenshot is `web_demo_<name>.png`.
  Returns the page's answers and its model line."""
  queries_path = tmp_path / "queries.json"
  queries_path.write_text(json.dumps(queries), encoding="utf-8")
  screenshot = tmp_path / "page.png"
  output = _node(["test/drive.mjs", f"{base}/examples/web/?{query}",
                  str(queries_path), str(screenshot), CHROMIUM])
  directory = os.environ.get("MIXVOCAB_SCREENSHOT_DIR")
  if directory:
    os.makedirs(directory, exist_ok=True)
    shutil.copy(screenshot, os.path.join(
        directory, f"web_demo_{name or query.split('=')[0]}.png"))
  assert output["external"] == [], (
      f"The page requested other hosts: {output['external']}")
  errors = [m for m in output["console"] if m.startswith("pageerror")]
  assert not errors, errors
  assert [r["query"] for r in output["results"]] == [
      "\t".join(q) if isinstance(q, list) else q for q in queries]
  assert screenshot.stat().st_size > 0
  return output["results"], output["model"]


def test_tokenizer_matches_in_graph_tokenizer(models, tmp_path):  # pylint: disable=redefined-outer-name
  builtin = models["intent_slot"]["builtin"]
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("".join(line + "\n" for line in
                           deploy_testing.packed_files(builtin)["vocab.txt"]),
                   encoding="utf-8")
  tokenizer = serving_tokenizer.ServingTokenizer(str(vocab))
  texts = models["intent_slot"]["queries"][:NUM_QUERIES] + TRICKY_TEXTS
  for length in (deploy_testing.seq_length(builtin), 8):
    page = _node(["test/units.mjs", "tokenize", builtin, str(length)],
                 stdin=json.dumps(texts))
    for text, got in zip(texts, page):
      features, words = tokenizer.pack_words(
          tf.constant([text.encode("utf-8")]), length)
      expected = {name: np.pad(value.numpy()[0],
                               (0, length - value.shape[1])).tolist()
                  for name, value in features.items()}
      for name, value in expected.items():
        assert got[name] == value, (text, length, name)
      positions = words["positions"].numpy().tolist()
      assert got["positions"][:len(positions)] == positions, (text, length)
      assert all(p == -1 for p in got["positions"][len(positions):]), (
          text, length)


def _pairs(models):  # pylint: disable=redefined-outer-name
  queries = models["text_classification"]["queries"]
  return PAIRS + list(zip(queries[0:16:2], queries[1:16:2]))


def test_sentence_packing_matches_in_graph_tokenizer(models, pair):  # pylint: disable=redefined-outer-name
  builtin = pair["builtin"]
  tokenizer = serving_tokenizer.ServingTokenizer(
      deploy_testing.packed_files(builtin)["vocab.txt"])
  pairs = _pairs(models)
  texts = models["text_classification"]["queries"][:NUM_QUERIES] + [
      text for text in TRICKY_TEXTS if "\t" not in text]
  for length in (PAIR_SEQ_LENGTH, 8):
    for examples in (pairs, texts):
      page = _node(["test/units.mjs", "sentences", builtin, str(length)],
                   stdin=json.dumps(examples))
      columns = (list(zip(*examples)) if examples is pairs else [examples])
      features = tokenizer.pack_sentences(
          *[tf.constant([t.encode("utf-8") for t in column])
            for column in columns], seq_length=length)
      for i, (example, got) in enumerate(zip(examples, page)):
        for name, value in features.items():
          row = value.numpy()[i]
          expected = np.pad(row, (0, length - len(row))).tolist()
          assert got[name] == expected, (example, length, name)
  # Pairs that do not fit are cut, some in each text.
  cut = tokenizer.pack_sentences(
      *[tf.constant(column) for column in zip(*pairs)],
      seq_length=PAIR_SEQ_LENGTH)["input_mask"].numpy().sum(axis=1)
  assert (cut == PAIR_SEQ_LENGTH).sum() >= 4


def test_iob_decoder_matches_numpy(models):  # pylint: disable=redefined-outer-name
  tags = deploy_testing.packed_files(
      models["intent_slot"]["builtin"])["slot_tags.txt"]
  start, transitions = iob_decoding.allowed_transitions(tags)
  scores = deploy_testing.viterbi_cases(len(tags))
  page = _node(["test/units.mjs", "viterbi"], stdin=json.dumps(
      {"tags": tags, "scores": [s.tolist() for s in scores]}))
  for matrix, got in zip(scores, page):
    expected = iob_decoding.viterbi_decode_numpy(
        matrix[np.newaxis], [len(matrix)], start, transitions)[0]
    assert got == expected


def test_classifier_page(models, server, tmp_path):  # pylint: disable=redefined-outer-name
  files = models["text_classification"]
  queries = files["queries"][:NUM_QUERIES]
  page, _ = _drive(server, "classifier=models/text_classification/"
                   "model_builtin.tflite", queries, tmp_path)
  expected = predictor.load_predictor(files["tflite"]).predict(queries, top_k=2)
  for want, got in zip(expected, page):
    assert got["label"] == want["label"], (want, got)
    assert abs(got["score"] - want["score"]) < SCORE_TOLERANCE, (want, got)


def test_pair_classifier_page(models, pair, server, tmp_path):  # pylint: disable=redefined-outer-name
  pairs = _pairs(models)
  page, _ = _drive(server, "classifier=models/pair/model_builtin.tflite",
                   [list(p) for p in pairs], tmp_path, name="pair")
  assert {r["kind"] for r in page} == {"pair"}
  expected = predictor.load_predictor(pair["tflite"]).predict(
      ["\t".join(p) for p in pairs], top_k=2)
  for want, got in zip(expected, page):
    assert got["label"] == want["label"], (want, got)
    assert abs(got["score"] - want["score"]) < SCORE_TOLERANCE, (want, got)
  assert len({r["label"] for r in expected}) > 1


def test_intent_slot_page(models, server, tmp_path):  # pylint: disable=redefined-outer-name
  files = models["intent_slot"]
  queries = files["queries"][:NUM_QUERIES]
  page, model = _drive(
      server, "intent_slot=models/intent_slot/model_builtin.tflite", queries,
      tmp_path)
  assert "intents" in model, model
  expected = predictor.load_predictor(files["tflite"]).predict(queries, top_k=2)
  for want, got in zip(expected, page):
    assert got["kind"] == "intent_slot", got
    assert got["intent"] == want["intent"], (want, got)
    assert abs(got["score"] - want["score"]) < SCORE_TOLERANCE, (want, got)
    assert got["bars"] == 3, got
    _assert_same_slots(want, got)
  assert any(r["slots"] for r in expected)


def _assert_same_slots(want, got):
  """The page's words, tags and slots are the predictor's `want`."""
  words = [w["word"] for w in got["words"]]
  tags = [w["tag"] for w in got["words"]]
  assert words[:len(want["words"])] == want["words"], (want, got)
  assert tags[:len(want["tags"])] == want["tags"], (want, got)
  assert set(tags[len(want["tags"]):]) <= {"O"}, (want, got)
  # Each slot's score, as the predictor scores it (its least sure word).
  assert [s["type"] for s in got["slots"]] == [
      s["type"] for s in want["slots"]], (want, got)
  for g, w in zip(got["slots"], want["slots"]):
    assert abs(g["score"] - w["score"]) < SCORE_TOLERANCE, (want, got)


def test_slot_tagger_page(models, tagger, server, tmp_path):  # pylint: disable=redefined-outer-name
  # A slot tagger's page shows its slots alone: its intent (`none`, always
  # 1) is no answer.
  queries = models["intent_slot"]["queries"][:NUM_QUERIES]
  page, model = _drive(server, "intent_slot=models/tagger/model_builtin.tflite",
                       queries, tmp_path, name="slot_tagger")
  assert model.startswith("a slot tagger, 5 slot tags"), model
  expected = predictor.load_predictor(tagger["tflite"]).predict(queries)
  for want, got in zip(expected, page):
    assert want["intent"] == "none"
    assert got["kind"] == "slot_tagger", got
    assert "intent" not in got and "score" not in got, got
    assert got["bars"] == 0, got
    _assert_same_slots(want, got)
  assert sum(bool(r["slots"]) for r in expected) >= 5
