"""Where apps run: the builtin-ops .tflite that every export writes.

The own-data job is run on the repository's two example datasets with the
real teacher and the shipped student (`deploy_testing`, short budgets), and
its builtin file is checked the way each runtime takes it:

- its operators are LiteRT builtins only, and it loads with the builtin op
  resolver; its inputs are BERT's three int32 [1, n] tensors, any n
  (default [1, seq_length]), and a query at its own length gets the outputs
  it gets padded;
- its TFLite Model Metadata holds the run's student vocabulary as a
  BertTokenizer process unit and the run's labels (and slot tags);
- MediaPipe Tasks' TextClassifier loads the classifier file unchanged, in a
  process without TensorFlow, and its top-1 label agrees with the raw-string
  .tflite (in-graph tokenizer) on >= 99.5% of validation (and of SST-2 dev
  where `../shared` has it);
- the intent + slot file runs in a process that never imports
  tensorflow-text, through `examples/builtin_reference.py` (LiteRT's builtin
  resolver, Hugging Face `tokenizers` WordPiece on the metadata's vocabulary,
  first-piece alignment, valid-IOB decoding), and agrees with the raw-string
  .tflite on >= 99.5% of intents and of words' tags on SNIPS valid (the
  example's validation split without `../shared`); a sentence-pair
  classifier's file (`deploy_testing.tiny_pair_classifier`: the examples hold
  no pairs) runs there too (`PairClassifier`: both texts packed, the longer
  cut first) and gives the raw-string .tflite's labels.

MediaPipe's Python package (`mediapipe==1.2.3`, installed with --no-deps:
its absl-py pin conflicts with tf-models-official's) is needed; without it
the MediaPipe test skips, except under CI, where it fails.
"""

import csv
import importlib.util
import json
import os
import subprocess
import sys
import unicodedata

import numpy as np
import pytest

from mixvocab_testing import deploy_testing
from mixvocab_testing import testing_utils

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
MIN_AGREEMENT = 0.995


@pytest.fixture(scope="module")
def models():
  return deploy_testing.deploy_models()


def _read(path):
  with open(path, "rb") as f:
    return f.read()


def _raw_predictions(model, texts):
  from mixvocab_tf.serving import predictor  # pylint: disable=g-import-not-at-top
  return predictor.load_predictor(model).predict(texts)


def test_builtin_files_hold_builtin_operators_only(models):
  from mixvocab_tf.export import builtin_model  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import tflite_conversion  # pylint: disable=g-import-not-at-top
  outputs = {"intent_slot": {"intent_probs", "slot_probs"},
             "text_classification": {"probabilities"}}
  for kind, model in models.items():
    content = _read(model["builtin"])
    assert builtin_model.non_builtin_operators(content) == [], kind
    assert "FULLY_CONNECTED" in builtin_model.operators(content)
    # The raw-string file beside it is the one with tensorflow_text's ops.
    assert "FastWordpieceTokenizeWithOffsets" in tflite_conversion.custom_ops(
        _read(model["tflite"]))
    runner = builtin_model.BuiltinRunner(model_content=content)
    inputs = runner.runner.get_input_details()
    assert sorted(inputs) == sorted(builtin_model.INPUT_NAMES)
    for detail in inputs.values():
      assert list(detail["shape"]) == [1, runner.seq_length]
      assert list(detail["shape_signature"]) == [1, -1]
      assert detail["dtype"].__name__ == "int32"
    assert set(runner.runner.get_output_details()) == outputs[kind]
    # As stored in the file (LiteRT.js compiles what is stored): inputs and
    # outputs of any length, their default length the export's.
    from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
    graph = schema.Model.GetRootAsModel(bytearray(content), 0).Subgraphs(0)
    stored = [graph.Tensors(graph.Inputs(i))
              for i in range(graph.InputsLength())] + [
                  graph.Tensors(graph.Outputs(i))
                  for i in range(graph.OutputsLength())]
    dynamic = [(list(t.ShapeAsNumpy()), list(t.ShapeSignatureAsNumpy()))
               for t in stored if t.ShapeSignatureLength()]
    assert len(dynamic) == 3 + (kind == "intent_slot"), dynamic
    for shape, signature in dynamic:
      assert shape[:2] == [1, runner.seq_length] and signature[:2] == [1, -1]
    # A query at its own length gets the outputs it gets padded, at its
    # positions (float32: dynamic-range activations take their scale from
    # every position, the padding's too).
    float32 = builtin_model.BuiltinRunner(model_content=(
        builtin_model.convert_builtin(model["saved_model"], "none")))
    (features,) = builtin_model.features(model["saved_model"],
                                         model["queries"][:1])
    own = float32.fit(features)
    length = own["input_word_ids"].shape[1]
    assert 2 < length == features["input_mask"].sum() < float32.seq_length
    padded = {name: np.pad(value, ((0, 0), (0, float32.seq_length - length)))
              for name, value in own.items()}
    got, want = float32.runner(**own), float32.runner(**padded)
    for name, value in got.items():
      if name == "slot_probs":
        assert value.shape[1] == length
        want[name] = want[name][:, :length]
      np.testing.assert_allclose(value, want[name], atol=1e-5)
    # Size and latency stand beside the raw-string file's in the report.
    summary = testing_utils.read_json(
        os.path.join(model["job"], "export", "summary.json"))
    assert summary["builtin"]["bytes"] == len(content)
    assert summary["builtin"]["custom_ops"] == []
    # Scored as an app feeds it (the predictor tokenizes), the builtin file
    # scores what the raw-string file scores.
    raw = summary["tflite"]["dynamic"]["splits"]["validation"]["scores"]
    scored = summary["builtin"]["splits"]["validation"]["scores"]
    assert scored == pytest.approx(raw, abs=0.01), kind
    report = _read(os.path.join(model["job"], "report.md")).decode()
    assert "model_builtin.tflite" in report and "examples/web" in report


def test_metadata_holds_the_runs_vocabulary_and_labels(models):
  from mixvocab_tf.export import builtin_model  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import saved_model_export  # pylint: disable=g-import-not-at-top
  for kind, model in models.items():
    content = _read(model["builtin"])
    read = builtin_model.read_metadata(content)
    info = saved_model_export.read_export_info(model["saved_model"])
    with open(model["vocab"], encoding="utf-8") as f:
      assert read["files"]["vocab.txt"].splitlines() == f.read().splitlines()
    metadata = read["metadata"]
    assert metadata["license"] == "Apache-2.0" and metadata["version"]
    assert metadata["name"] and metadata["description"]
    seq_length = builtin_model.BuiltinRunner(model_content=content).seq_length
    assert f"seq_length={seq_length}" in metadata["description"]
    (subgraph,) = metadata["subgraph_metadata"]
    (unit,) = subgraph["input_process_units"]
    assert unit["options_type"] == "BertTokenizerOptions"
    assert sorted(t["name"] for t in subgraph["input_tensor_metadata"]) == [
        "ids", "mask", "segment_ids"]
    if kind == "intent_slot":
      assert read["files"]["intents.txt"].splitlines() == info["intents"]
      assert read["files"]["slot_tags.txt"].splitlines() == info["slots"]
    else:
      assert read["files"]["labels.txt"].splitlines() == info["labels"]


def _agreement(a, b):
  assert len(a) == len(b) and a
  return sum(x == y for x, y in zip(a, b)) / len(a)


def _mediapipe_labels(model, texts, tmp_path):
  texts_json = tmp_path / "texts.json"
  output_json = tmp_path / "mediapipe.json"
  texts_json.write_text(json.dumps(texts), encoding="utf-8")
  result = subprocess.run(
      [sys.executable, os.path.join(_HERE, "deploy", "mediapipe_classify.py"),
       model, str(texts_json), str(output_json)],
      capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stderr[-3000:]
  output = json.loads(output_json.read_text(encoding="utf-8"))
  assert not output["tensorflow_loaded"]
  assert not output["tensorflow_text_loaded"]
  return [r["label"] for r in output["results"]]


def test_mediapipe_text_classifier_agrees_with_the_raw_string_model(
    models, tmp_path):
  if importlib.util.find_spec("mediapipe") is None:
    message = ("MediaPipe is not installed: python3.11 -m pip install "
               "--no-deps mediapipe==1.2.3")
    if os.environ.get("CI"):
      pytest.fail(message)
    pytest.skip(message)
  model = models["text_classification"]
  sets = {"examples/text_classification validation": model["queries"]}
  sst2 = testing_utils.shared_data("glue", "SST-2", "dev.tsv")
  if os.path.exists(sst2):
    with open(sst2, encoding="utf-8", newline="") as f:
      sets["SST-2 dev"] = [row["sentence"] for row in
                           csv.DictReader(f, delimiter="\t")]
  for name, texts in sets.items():
    raw = [p["label"] for p in _raw_predictions(model["tflite"], texts)]
    # As given, and with accents stripped by the app first (docs/SERVING.md:
    # MediaPipe's tokenizer keeps accents, the student's strips them).
    stripped = ["".join(c for c in unicodedata.normalize("NFD", text)
                        if unicodedata.category(c) != "Mn") for text in texts]
    for how, given in (("as given", texts), ("accents stripped", stripped)):
      agreement = _agreement(
          raw, _mediapipe_labels(model["builtin"], given, tmp_path))
      print(f"MediaPipe against the raw-string .tflite, {name}, {how}: "
            f"{100 * agreement:.2f}% of {len(texts)}")
      assert agreement >= MIN_AGREEMENT, (name, how)


_REFERENCE_RUNNER = """
import json, sys
sys.path.insert(0, {examples!r})
import builtin_reference
model = builtin_reference.{kind}({model!r})
with open({queries!r}, encoding="utf-8") as f:
  queries = json.load(f)
results = [model(*query) if isinstance(query, list) else model(query)
           for query in queries]
with open({output!r}, "w", encoding="utf-8") as f:
  json.dump({{"results": results,
             "tensorflow_text": "tensorflow_text" in sys.modules,
             "tensorflow": "tensorflow" in sys.modules}}, f)
"""


def _run_reference(kind, builtin, queries, tmp_path):
  """`examples/builtin_reference.py`'s `kind` on `queries` (a pair: a list
  of two texts), in a process that must not import TensorFlow."""
  queries_json = tmp_path / "queries.json"
  output_json = tmp_path / "reference.json"
  queries_json.write_text(json.dumps(queries), encoding="utf-8")
  script = _REFERENCE_RUNNER.format(
      examples=os.path.join(_ROOT, "examples"), kind=kind, model=builtin,
      queries=str(queries_json), output=str(output_json))
  result = subprocess.run([sys.executable, "-c", script],
                          capture_output=True, text=True, timeout=900)
  assert result.returncode == 0, result.stderr[-3000:]
  output = json.loads(output_json.read_text(encoding="utf-8"))
  assert not output["tensorflow_text"] and not output["tensorflow"]
  return output["results"]


def test_intent_slot_runs_without_tensorflow_text(models, tmp_path):
  model = models["intent_slot"]
  queries = model["queries"]
  snips = testing_utils.shared_data("snips", "valid", "seq.in")
  if os.path.exists(snips):
    with open(snips, encoding="utf-8") as f:
      queries = [" ".join(line.split()) for line in f if line.strip()]
  reference = _run_reference("IntentSlotModel", model["builtin"], queries,
                             tmp_path)
  raw = _raw_predictions(model["tflite"], queries)
  intents = _agreement([p["intent"] for p in raw],
                       [intent for intent, _, _ in reference])
  raw_tags = [tag for p in raw for tag in p["tags"]]
  reference_tags = [tag for _, tags, _ in reference for tag in tags]
  tags = _agreement(raw_tags, reference_tags)
  # Each tag's probability, where both give the word the same tag: the
  # scores an app reads a slot's from (its words' lowest).
  same = [abs(a - b) for p, (_, tags_b, sure) in zip(raw, reference)
          for a, b, t, u in zip(p["tag_scores"], sure, p["tags"], tags_b)
          if t == u]
  close = sum(d < 0.01 for d in same) / len(same)
  print(f"Reference (no tensorflow-text) against the raw-string .tflite on "
        f"{len(queries)} queries: intents {100 * intents:.2f}%, words' tags "
        f"{100 * tags:.2f}% of {len(raw_tags)}, their probabilities within "
        f"0.01 for {100 * close:.2f}%")
  assert intents >= MIN_AGREEMENT
  assert tags >= MIN_AGREEMENT
  assert close >= MIN_AGREEMENT


def test_pair_classifier_runs_without_tensorflow_text(models, tmp_path):
  # Short enough that the long pairs are cut, some in each text.
  pair = deploy_testing.tiny_pair_classifier(str(tmp_path), seq_length=24)
  queries = models["text_classification"]["queries"]
  pairs = [[a, b] for a, b in zip(queries[0::2], queries[1::2])] + [
      ["play " * 30, "a short second text"],
      ["a short first text", "rate this book " * 10],
      ["book a table for two " * 5, "what is the weather in paris " * 5],
      ["", "nothing in the first text"]]
  reference = _run_reference("PairClassifier", pair["builtin"], pairs,
                             tmp_path)
  raw = _raw_predictions(pair["tflite"], ["\t".join(p) for p in pairs])
  labels = _agreement([p["label"] for p in raw],
                      [label for label, _ in reference])
  print(f"Reference (no tensorflow-text) against the raw-string .tflite on "
        f"{len(pairs)} pairs: labels {100 * labels:.2f}%")
  assert labels >= MIN_AGREEMENT
  assert len({p["label"] for p in raw}) > 1
  for want, (_, score) in zip(raw, reference):
    assert abs(want["score"] - score) < 1e-4, (want, score)


def test_serving_doc_shows_the_reference_implementation():
  with open(os.path.join(_ROOT, "examples", "builtin_reference.py"),
            encoding="utf-8") as f:
    reference = f.read()
  with open(os.path.join(_ROOT, "docs", "SERVING.md"), encoding="utf-8") as f:
    doc = f.read()
  body = reference[reference.index("class IntentSlotModel"):
                   reference.index('if __name__ == "__main__":')].strip()
  assert body in doc
