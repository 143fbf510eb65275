"""End to end: the serving contract of the string-in signatures (issue 17).

A SNIPS export and a GLUE sentence-pair export (tiny random students) are
fed the shapes of the contract (`export/serving_contract.py`): a [batch] of
strings and an empty batch are served; a scalar, a [1, 2] array and pair
inputs of different lengths are refused by the SavedModel (both signatures,
and Keras 3's `TFSMLayer`) with an `InvalidArgumentError` that names the
shape expected; the .tflite answers a scalar as a batch of one, [1, 2] as a
batch of two (it reads its input's run-time size) and unequal pairs on the
shorter batch; `TFLiteRunner` refuses those with the SavedModel's message and
answers an empty batch with empty outputs.

Before the fix a scalar crashed the process (SIGSEGV) in TensorFlow, so every
model runs in a child process (`_serve`): a crash fails the test with its
exit status instead of killing pytest.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf import export
from mixvocab_tf.datasets import glue as glue_lib
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.models import sentence_classifier
from mixvocab_tf.networks import student_encoder
from mixvocab_tf.tasks.finetuning.text_classification import export_module as text_classification_export
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning.intent_slot import export_module as intent_slot_export

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

SEQ_LENGTH = 16
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Runs each case on one model and prints one JSON line per case, so that a
#: crash names the case it happened in (the last line printed before it).
_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # The tokenizer ops.
    kind, path, cases = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

    if kind in ("serving_default", "serving_tflite"):
      function = tf.saved_model.load(path).signatures[kind]
      call = lambda inputs: function(**{
          k: tf.constant(v, tf.string) for k, v in inputs.items()})
    elif kind == "tfsm_layer":
      import keras
      layer = keras.layers.TFSMLayer(path, call_endpoint="serving_default")
      call = lambda inputs: layer(*[tf.constant(v, tf.string)
                                    for v in inputs.values()])
    elif kind == "tflite":
      from mixvocab_tf.export import tflite_conversion
      runner = tflite_conversion.make_interpreter(path).get_signature_runner()
      # Fixed-width bytes: LiteRT's Python wrapper misreads a 0-d object
      # array (it passes 8 bytes, whatever the string).
      encode = np.vectorize(lambda v: v.encode(), otypes=[object])
      call = lambda inputs: runner(**{
          k: np.array(encode(np.array(v, dtype=object)).tolist())
          for k, v in inputs.items()})
    else:  # tflite_runner
      from mixvocab_tf.export import tflite_conversion
      runner = tflite_conversion.TFLiteRunner(path)
      call = lambda inputs: runner(*[inputs[k] for k in runner.input_names])
    for name, inputs in cases.items():
      print(json.dumps({"case": name, "started": True}), flush=True)
      try:
        outputs = call(inputs)
        result = {k: np.asarray(v).tolist() if np.asarray(v).dtype != object
                  else [str(x) for x in np.asarray(v).ravel()]
                  for k, v in outputs.items()}
        result = {"outputs": result,
                  "shapes": {k: list(np.shape(v)) for k, v in outputs.items()}}
      except Exception as e:  # pylint: disable=broad-except
        result = {"error": type(e).__name__, "message": str(e)}
      print(json.dumps({"case": name, **result}), flush=True)
""")


def _serve(kind, path, cases):
  """{case: result} of running `cases` on a model in a child process."""
  result = subprocess.run(
      [sys.executable, "-c", _CHILD, kind, path, json.dumps(cases)],
      capture_output=True, text=True, timeout=600,
      env=dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2"))
  lines = [json.loads(line) for line in result.stdout.splitlines()
           if line.startswith("{")]
  last = lines[-1]["case"] if lines else None
  assert result.returncode == 0, (
      f"{kind} ended with status {result.returncode} in case {last!r}: "
      f"{result.stderr[-2000:]}")
  return {line["case"]: line for line in lines if "started" not in line}


def _encoder():
  tf_keras.utils.set_random_seed(5)
  vocab_size = len(open(assets.default_student_vocab(),
                        encoding="utf-8").read().splitlines())
  return student_encoder.build_student_encoder(
      None, vocab_size=vocab_size, num_layers=1, hidden_size=32,
      num_attention_heads=2, max_sequence_length=SEQ_LENGTH)


def _export_and_convert(module, directory):
  export_dir = str(directory / "saved_model")
  export.export_saved_model(module, export_dir)
  tflite = str(directory / "model.tflite")
  with open(tflite, "wb") as f:
    f.write(tflite_conversion.convert_saved_model(export_dir))
  return export_dir, tflite


@pytest.fixture(scope="module")
def snips(tmp_path_factory):
  labels = intent_slot_data.IntentSlotLabels(["AddToPlaylist", "PlayMusic"],
                                  ["O", "B-artist", "I-artist"])
  model = joint_intent_slot_model.JointIntentSlotModel(
      _encoder(), num_intents=2, num_slots=3)
  module = intent_slot_export.IntentSlotExportModule(
      model, labels, assets.default_student_vocab(), seq_length=SEQ_LENGTH)
  return _export_and_convert(module, tmp_path_factory.mktemp("snips"))


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
  model = sentence_classifier.SentenceClassifier(_encoder(), num_classes=3)
  module = text_classification_export.TextClassificationExportModule(
      model, glue_lib.LABEL_NAMES["mnli"], assets.default_student_vocab(),
      pair=True, seq_length=SEQ_LENGTH)
  return _export_and_convert(module, tmp_path_factory.mktemp("glue"))


SNIPS_CASES = {
    "batch": {"text": ["play jazz", "add this song"]},
    "one": {"text": ["play jazz"]},
    "scalar": {"text": "play jazz"},
    "rank2": {"text": [["play some", "jazz now"]]},
    "empty": {"text": []},
}
PAIR_CASES = {
    "batch": {"sentence_a": ["a man sleeps", "it rains"],
              "sentence_b": ["nobody sleeps", "it is wet"]},
    "scalars": {"sentence_a": "a man sleeps", "sentence_b": "nobody sleeps"},
    "rank2": {"sentence_a": [["a man sleeps", "it rains"]],
              "sentence_b": [["nobody sleeps", "it is wet"]]},
    "unequal": {"sentence_a": ["a man sleeps", "it rains"],
                "sentence_b": ["nobody sleeps"]},
    "empty": {"sentence_a": [], "sentence_b": []},
}


def _assert_refused(result, error, *fragments):
  assert result.get("error") == error, result
  for fragment in fragments:
    assert fragment in result["message"], result["message"]


@pytest.mark.parametrize("kind", ["serving_default", "serving_tflite",
                                  "tfsm_layer"])
def test_saved_model_serves_a_batch_and_refuses_other_shapes(snips, kind):
  results = _serve(kind, snips[0], SNIPS_CASES)
  assert results["batch"]["shapes"]["num_words"] == [2]
  assert results["batch"]["outputs"]["num_words"] == [2, 3]
  one = results["one"]["outputs"]
  assert one["intent_logits"][0] == pytest.approx(
      results["batch"]["outputs"]["intent_logits"][0], abs=1e-5)
  shapes = results["empty"]["shapes"]
  assert shapes["intent_probs"] == [0, 2] and shapes["slot_tags"] == [0, 1]
  expected = "takes `text` as a string tensor of shape [batch]"
  _assert_refused(results["scalar"], "InvalidArgumentError", expected,
                  "received shapes] [text:] []")
  _assert_refused(results["rank2"], "InvalidArgumentError", expected,
                  "[text:] [1 2]")


def test_saved_model_refuses_pairs_of_other_shapes(glue):
  results = _serve("serving_default", glue[0], PAIR_CASES)
  assert results["batch"]["shapes"]["logits"] == [2, 3]
  assert results["empty"]["shapes"]["logits"] == [0, 3]
  expected = ("takes `sentence_a` and `sentence_b` as string tensors of "
              "shape [batch], one string per example and the same batch")
  _assert_refused(results["scalars"], "InvalidArgumentError", expected)
  _assert_refused(results["rank2"], "InvalidArgumentError", expected,
                  "[sentence_a:] [1 2]")
  _assert_refused(results["unequal"], "InvalidArgumentError", expected,
                  "[sentence_a:] [2] [sentence_b:] [1]")


def test_tflite_reads_its_inputs_run_time_size(snips):
  """A scalar is a batch of one and [1, 2] a batch of two, never garbage."""
  cases = dict(SNIPS_CASES, **{
      "x": {"text": ["x"]},
      "scalar_x": {"text": "x"},
      "pair": {"text": ["play some", "jazz now"]}})
  cases.pop("empty")
  results = _serve("tflite", snips[1], cases)
  for scalar, batch in (("scalar", "one"), ("scalar_x", "x")):
    got, want = results[scalar]["outputs"], results[batch]["outputs"]
    assert results[scalar]["shapes"]["intent_logits"] == [1, 2]
    for key in ("num_words", "word_starts", "word_ends", "slot_tags"):
      assert got[key] == want[key], (scalar, key)
    np.testing.assert_allclose(got["intent_logits"], want["intent_logits"],
                               atol=1e-5)
  # A 1-byte text ends at byte 1 (it was read as 8 bytes before the fix).
  assert results["scalar_x"]["outputs"]["word_ends"] == [[1]]
  got, want = results["rank2"]["outputs"], results["pair"]["outputs"]
  assert got["num_words"] == want["num_words"] == [2, 2]
  np.testing.assert_allclose(got["intent_logits"], want["intent_logits"],
                             atol=1e-5)


def test_tflite_serves_unequal_pairs_on_the_shorter_batch(glue):
  cases = {"first": {"sentence_a": ["a man sleeps"],
                     "sentence_b": ["nobody sleeps"]},
           "longer_a": PAIR_CASES["unequal"],
           "longer_b": {"sentence_a": ["a man sleeps"],
                        "sentence_b": ["nobody sleeps", "it is wet"]}}
  results = _serve("tflite", glue[1], cases)
  want = results["first"]["outputs"]["logits"]
  for case in ("longer_a", "longer_b"):
    np.testing.assert_allclose(results[case]["outputs"]["logits"], want,
                               atol=1e-6)


#: Queries of changing batch sizes and lengths, shapes coming back.
SEQUENCE_CASES = {
    "one": {"text": ["play jazz"]},
    "long": {"text": ["add this song by the rolling stones to my road trip "
                      "playlist please"]},
    "two": {"text": ["play jazz", "add this song"]},
    "one_again": {"text": ["play jazz"]},
    "same_shape": {"text": ["add it"]},
    "letter": {"text": ["x"]},
    "long_again": {"text": ["add this song by the rolling stones to my road "
                            "trip playlist please"]},
    "cut": {"text": [" ".join(["jazz"] * 3 * SEQ_LENGTH)]},
    "short": {"text": ["play some jazz now"]},
}


def test_tflite_runner_answers_every_call_as_a_fresh_plan(snips, glue):
  """`TFLiteRunner` allocates again only for new input shapes; each query's
  outputs are still those of LiteRT's runner, which allocates every call."""
  pair_cases = {
      "first": PAIR_CASES["batch"],
      "one": {"sentence_a": ["a man sleeps"], "sentence_b": ["nobody"]},
      "longer": {"sentence_a": ["a man sleeps on the old green sofa today"],
                 "sentence_b": ["nobody sleeps"]},
      "first_again": PAIR_CASES["batch"],
  }
  for path, cases in ((snips[1], SEQUENCE_CASES), (glue[1], pair_cases)):
    got = _serve("tflite_runner", path, cases)
    want = _serve("tflite", path, cases)
    for case in cases:
      assert "outputs" in got[case], got[case]
      assert got[case]["outputs"] == want[case]["outputs"], case


def test_tflite_runner_holds_the_saved_models_contract(snips, glue):
  results = _serve("tflite_runner", snips[1], SNIPS_CASES)
  assert results["batch"]["outputs"]["num_words"] == [2, 3]
  shapes = results["empty"]["shapes"]
  assert shapes["intent_probs"] == [0, 2] and shapes["slot_tags"] == [0, 1]
  expected = "takes `text` as a string tensor of shape [batch]"
  _assert_refused(results["scalar"], "ValueError", expected, "text: []")
  _assert_refused(results["rank2"], "ValueError", expected, "text: [1, 2]")
  results = _serve("tflite_runner", glue[1], PAIR_CASES)
  assert results["batch"]["shapes"]["logits"] == [2, 3]
  assert results["empty"]["shapes"]["logits"] == [0, 3]
  _assert_refused(results["unequal"], "ValueError", "the same batch",
                  "sentence_a: [2], sentence_b: [1]")
  _assert_refused(results["scalars"], "ValueError", "the same batch")
