"""End to end: a briefly fine-tuned tiny SNIPS student, exported and converted.

The student is fine-tuned by the trainer (in process, with the shipped
`finetune_snips_small.gin` shrunk by bindings), exported from the run's
model_dir by `tools/export_saved_model.py` (which calls
`serving.export_run`) and converted by the library and by
`tools/convert_tflite.py`. Checks the serving criteria of the export (issue 6) on SNIPS valid (700
queries): the fp32 .tflite gives the SavedModel's logits within 1e-4; the
dynamic-range and int8 .tflite agree with fp32 on at least 99% of intents and
stay within 0.5 points of its slot F1; the .tflite needs no custom op beyond
tensorflow_text's; tf_keras and Keras 3 load the SavedModel and answer as the
export module does; bad input (empty, whitespace, 100,000 characters, invalid
UTF-8, emoji, mixed scripts) gives defined outputs in TensorFlow and TFLite.

The model (2 layers, hidden 32, the shipped student vocabulary) is fine-tuned
for a few hundred steps so that its predictions are not near ties, which
would make the agreement criteria meaningless.

int8 is held to the same criteria. It met them only after the calibration
text was passed as fixed-width bytes (see
`tflite_conversion._representative_dataset`): TensorFlow 2.20's calibrator
misreads object arrays of bytes, calibrated on other text than given, and
int8 drifted (89% to 97.4% intent agreement here, up to 3 slot-F1 points on
the 6x96 student). `test_int8_calibration_sees_the_given_text` guards that.
"""

import json
import os
import re
import subprocess
import sys

import gin
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text
import tf_keras

from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.export import parity
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.models import joint_intent_slot_model
from mixvocab_tf.tasks.finetuning.intent_slot import data as intent_slot_data
from mixvocab_tf.tasks.finetuning.intent_slot import export_module as intent_slot_export
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import trainer as trainer_lib

# Runs only with --run_large (the full suite): jobs, exports, a browser.
pytestmark = pytest.mark.large

SEQ_LENGTH = 48
TRAIN_STEPS = 400
CALIBRATION_EXAMPLES = 100
QUANTIZATIONS = ("none", "dynamic", "int8")
#: The issue's criteria for quantized models.
MIN_AGREEMENT = 0.99
MAX_F1_DROP = 0.005

BAD_INPUTS = [
    b"",
    b"   \t\n ",
    ("play " * 20_000).encode(),  # 100,000 characters.
    b"x" * 100_000,
    b"\xff\xfe\xc3 play \x80jazz \xed\xa0\x80",  # Invalid UTF-8.
    "play 😀🎶 now 👍🏽".encode(),
    "book a table in Москва for 東京 y Ελλάδα".encode(),
    "\x00\x01 \u200b".encode(),  # Words of deleted characters only.
]
#: Whitespace words of BAD_INPUTS, at most SEQ_LENGTH - 2.
BAD_INPUT_WORDS = [0, 0, SEQ_LENGTH - 2, 1, 4, 4, 9, 2]


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Bindings that shrink finetune_snips_small.gin to a tiny quick run.
TINY_RUN = [
    "IntentSlotTask.student_preset = None",
    "IntentSlotTask.num_layers = 2",
    "IntentSlotTask.hidden_size = 32",
    "IntentSlotTask.num_attention_heads = 2",
    "IntentSlotTask.dropout_rate = 0.0",
    f"IntentSlotTask.seq_length = {SEQ_LENGTH}",
    "IntentSlotTask.global_batch_size = 32",
    "IntentSlotTask.shuffle_buffer = 2000",
    # A constant 3e-3: the quickest way for a tiny model to learn something.
    "optimization_config.learning_rate = 3e-3",
    "optimization_config.end_learning_rate = 3e-3",
    "optimization_config.warmup_fraction = 0.0",
    f"Trainer.train_steps = {TRAIN_STEPS}",
    f"Trainer.checkpoint_every = {TRAIN_STEPS}",
    f"Trainer.log_every = {TRAIN_STEPS}",
    "Trainer.evaluate_every = None",
]


def _tool(name, *flags):
  # The tool imports this checkout's package, not another installed copy.
  result = subprocess.run(
      [sys.executable, os.path.join(_ROOT, "tools", name), *flags],
      capture_output=True, text=True, timeout=900,
      env=dict(os.environ, PYTHONPATH=_ROOT))
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout[result.stdout.index("{"):])


def _fine_tune(model_dir):
  """The trainer's run of finetune_snips_small.gin, tiny; returns its task."""
  gin.clear_config()
  try:
    gin_utils.parse(["finetune_snips_small.gin"], TINY_RUN)
    trainer = trainer_lib.Trainer(model_dir=model_dir)
    trainer.train()
    return trainer.task
  finally:
    gin.clear_config()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
  root = tmp_path_factory.mktemp("export")
  model_dir = str(root / "run")
  task = _fine_tune(model_dir)
  export_dir = str(root / "snips")
  summary = _tool("export_saved_model.py", f"--model_dir={model_dir}",
                  f"--export_dir={export_dir}")
  assert summary["checkpoint"].endswith(f"ckpt-{TRAIN_STEPS}")
  model = tf_keras.models.load_model(export_dir)
  module = intent_slot_export.IntentSlotExportModule(
      model, task.labels, task.vocab_path, seq_length=SEQ_LENGTH)
  calibration = [" ".join(w) for w in intent_slot_files.read_intent_slot(
      assets.snips_dir("train")).words[:CALIBRATION_EXAMPLES]]
  tflite = {q: tflite_conversion.convert_saved_model(export_dir, q,
                                                     calibration)
            for q in QUANTIZATIONS}
  valid = intent_slot_files.read_intent_slot(assets.snips_dir("valid"))
  return dict(task=task, model=model, module=module, export_dir=export_dir,
              tflite=tflite, valid=valid, root=root,
              texts=[" ".join(w) for w in valid.words])


@pytest.fixture(scope="module")
def predictions(exported):
  loaded = tf.saved_model.load(exported["export_dir"])
  inputs = {"text": exported["texts"]}
  out = {"saved_model": parity.predict_saved_model(
      loaded.signatures["serving_tflite"], inputs)}
  for quantize, content in exported["tflite"].items():
    runner = tflite_conversion.TFLiteRunner(model_content=content)
    out[quantize] = parity.predict_tflite(runner, inputs)
  return out


def _scores(exported, predictions):
  valid = exported["valid"]
  return intent_slot_export.intent_slot_scores(predictions, valid.intents,
                                          valid.tags)


def test_fp32_tflite_gives_the_saved_model_logits(exported, predictions):
  summary = parity.compare(predictions["saved_model"], predictions["none"])
  assert summary["num_examples"] == 700
  assert summary["max_abs_diff/intent_logits"] <= 1e-4
  assert summary["max_abs_diff/slot_logits"] <= 1e-4
  assert summary["agreement/intent"] == 1.0
  assert summary["agreement/slot_tags"] == 1.0
  # The model learnt something, so agreement below means something.
  scores = _scores(exported, predictions["none"])
  assert scores["intent_accuracy"] > 0.8, scores


@pytest.mark.parametrize("quantize,min_agreement,max_f1_drop", [
    ("dynamic", MIN_AGREEMENT, MAX_F1_DROP),
    ("int8", MIN_AGREEMENT, MAX_F1_DROP)])
def test_quantized_tflite_agrees_with_fp32(exported, predictions, quantize,
                                           min_agreement, max_f1_drop):
  summary = parity.compare(predictions["none"], predictions[quantize])
  assert summary["agreement/intent"] >= min_agreement, summary
  fp32 = _scores(exported, predictions["none"])["slot_f1"]
  quantized = _scores(exported, predictions[quantize])["slot_f1"]
  assert abs(fp32 - quantized) <= max_f1_drop, (fp32, quantized)


def _calibrated_range(export_dir, text, tensor_pattern):
  """The (min, max) that int8 calibration on `text` records for a tensor."""
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  loaded = tf.saved_model.load(export_dir)
  function = loaded.signatures[tflite_conversion.TFLITE_SIGNATURE]
  converter = tflite_conversion._make_converter(  # pylint: disable=protected-access
      loaded, function, "int8",
      tflite_conversion._representative_dataset(["text"], [text]))  # pylint: disable=protected-access
  # The converter's switch for a float model annotated with the ranges.
  converter._experimental_calibrate_only = True  # pylint: disable=protected-access
  subgraph = schema.Model.GetRootAsModel(converter.convert(), 0).Subgraphs(0)
  for i in range(subgraph.TensorsLength()):
    tensor = subgraph.Tensors(i)
    if re.search(tensor_pattern, tensor.Name().decode()):
      quantization = tensor.Quantization()
      return quantization.MinAsNumpy()[0], quantization.MaxAsNumpy()[0]
  raise AssertionError(f"No tensor matches {tensor_pattern}.")


def test_int8_calibration_sees_the_given_text(exported):
  from ai_edge_litert import interpreter as litert  # pylint: disable=g-import-not-at-top
  text = "play some jazz music by miles davis on spotify"
  pattern = r"word_embeddings/unpacked"
  interpreter = litert.InterpreterWithCustomOps(
      custom_op_registerers=list(tf_text.tflite_registrar.SELECT_TFTEXT_OPS),
      model_content=exported["tflite"]["none"],
      experimental_preserve_all_tensors=True)
  interpreter.get_signature_runner()(
      text=np.array([text.encode()], dtype=object))
  (index,) = [d["index"] for d in interpreter.get_tensor_details()
              if re.search(pattern, d["name"])]
  looked_up = interpreter.get_tensor(index)
  calibrated = _calibrated_range(exported["export_dir"], text, pattern)
  np.testing.assert_allclose(calibrated, (looked_up.min(), looked_up.max()),
                             rtol=1e-6)


def test_tflite_needs_only_tensorflow_text_custom_ops(exported):
  for content in exported["tflite"].values():
    ops = tflite_conversion.custom_ops(content)
    assert set(ops) <= tflite_conversion.TFTEXT_CUSTOM_OPS, ops
    assert not any(op.startswith("Flex") for op in ops)
    assert "FastWordpieceTokenizeWithOffsets" in ops


def test_saved_model_decodes_like_the_training_featurizer(exported):
  """Intent and word tags equal evaluation's on training features."""
  valid, module = exported["valid"], exported["module"]
  dataset, _ = intent_slot_data.load_intent_slot(
      assets.snips_dir("valid"), exported["task"].labels,
      assets.default_student_vocab(), SEQ_LENGTH)
  features = next(iter(dataset.take(64).batch(64)))
  logits = exported["model"](features, training=False)
  task = exported["task"]
  labels = task.labels
  positions = features["word_start_positions"]
  # Decoded as evaluation decodes (the valid-IOB Viterbi by default).
  word_logits = tf.gather(logits["slot_logits"], tf.maximum(positions, 0),
                          batch_dims=1)
  tags = task.decode_word_tags(word_logits.numpy(), positions.numpy(),
                               features["num_words"].numpy())
  served = parity.split_examples(
      {k: v.numpy() for k, v in module.serve(
          tf.constant(exported["texts"][:64])).items()})
  for i, example in enumerate(served):
    assert example["intent"].decode() == labels.intents[
        int(np.argmax(logits["intent_logits"][i]))]
    assert [t.decode() for t in example["slot_tags"]] == tags[i]
    assert [w.decode() for w in example["words"]] == valid.words[i]


def test_keras_loaders_give_the_export_module_predictions(exported):
  export_dir, module = exported["export_dir"], exported["module"]
  texts = tf.constant(exported["texts"][:16])
  served = module.serve(texts)
  features, _ = module.tokenizer.pack_words(texts, SEQ_LENGTH)

  # tf_keras: the fine-tuned model itself, to continue fine-tuning.
  restored = tf_keras.models.load_model(export_dir)
  assert isinstance(restored, joint_intent_slot_model.JointIntentSlotModel)
  logits = restored(features, training=False)
  np.testing.assert_allclose(logits["intent_logits"], served["intent_logits"],
                             atol=1e-5)
  before = [w.numpy().copy() for w in restored.trainable_weights]
  restored.compile(optimizer=tf_keras.optimizers.Adam(1e-3), loss={
      "intent_logits": tf_keras.losses.SparseCategoricalCrossentropy(
          from_logits=True)})
  restored.fit(features, {"intent_logits": served["intent_id"]}, epochs=1,
               verbose=0)
  assert any(not np.array_equal(b, w.numpy())
             for b, w in zip(before, restored.trainable_weights))

  # Keras 3: strings in, the serving signature's outputs.
  import keras  # pylint: disable=g-import-not-at-top
  layer = keras.layers.TFSMLayer(export_dir, call_endpoint="serving_default")
  outputs = layer(texts)
  for key in ("intent", "slot_tags", "words"):
    np.testing.assert_array_equal(np.asarray(outputs[key]), served[key])
  np.testing.assert_allclose(np.asarray(outputs["intent_probs"]),
                             served["intent_probs"], atol=1e-6)


def _check_defined(outputs, num_intents):
  """Outputs of a batch of BAD_INPUTS: shapes, finite values, valid labels."""
  batch = len(BAD_INPUTS)
  probs = np.asarray(outputs["intent_probs"])
  assert probs.shape == (batch, num_intents)
  assert np.all(np.isfinite(probs))
  # int8 softmax outputs are multiples of 1/256.
  np.testing.assert_allclose(probs.sum(-1), 1.0, atol=2e-2)
  num_words = np.asarray(outputs["num_words"])
  # Empty and whitespace-only input have no word; a long text is cut to
  # seq_length - 2 words; a 100,000-character word is one word ([UNK]).
  np.testing.assert_array_equal(num_words, BAD_INPUT_WORDS)
  tags = np.asarray(outputs["slot_tags"])
  assert tags.shape == (batch, SEQ_LENGTH - 2)
  for row, count in zip(tags, num_words):
    assert all(t != b"" for t in row[:count])
    assert all(t == b"" for t in row[count:])
  assert all(i != b"" for i in np.asarray(outputs["intent"]))
  assert np.all(np.isfinite(np.asarray(outputs["slot_logits"])))


def test_bad_input_gives_defined_outputs_in_tensorflow_and_tflite(exported):
  num_intents = exported["task"].labels.num_intents
  served = exported["module"].serve(tf.constant(BAD_INPUTS))
  _check_defined(served, num_intents)
  assert served["words"][5, 1].numpy().decode() == "😀🎶"
  # What the .tflite is converted from (its word table at 4 bits).
  converted = tf.saved_model.load(exported["export_dir"]).signatures[
      "serving_tflite"](text=tf.constant(BAD_INPUTS))
  for quantize in ("none", "int8"):
    runner = tflite_conversion.TFLiteRunner(
        model_content=exported["tflite"][quantize])
    outputs = runner(BAD_INPUTS)
    _check_defined(outputs, num_intents)
    np.testing.assert_array_equal(outputs["word_starts"],
                                  served["word_starts"])
    if quantize == "none":
      np.testing.assert_allclose(outputs["intent_logits"],
                                 converted["intent_logits"], atol=1e-4)
    # One at a time, as a phone calls it.
    for text in BAD_INPUTS:
      single = runner([text])
      assert single["intent_probs"].shape == (1, num_intents)


def test_convert_tool_prints_size_and_parity(exported):
  output = str(exported["root"] / "snips.tflite")
  converted = _tool("convert_tflite.py",
                    f"--saved_model={exported['export_dir']}",
                    f"--output={output}", "--parity_examples=30")
  assert converted["size_bytes"] == os.path.getsize(output)
  assert set(converted["custom_ops"]) == {
      "FastBertNormalize", "FastWordpieceTokenizeWithOffsets",
      "TFText>WhitespaceTokenizeWithOffsetsV2"}
  summary = converted["parity"]
  assert summary["num_examples"] == 30
  assert summary["max_abs_diff/intent_logits"] <= 1e-4
  assert summary["agreement/slot_tags"] == 1.0
  assert summary["tflite/slot_f1"] == summary["saved_model/slot_f1"]
  # The builtin file beside it, tokenized by the predictor as an app would,
  # answers as the raw-string file on the first 200 valid queries.
  builtin = converted["builtin"]["parity"]
  assert builtin["examples"] == 200
  assert builtin["agreement/intent"] >= 0.99
  assert builtin["agreement/slot_tags"] >= 0.99
  with open(output + ".labels.json", encoding="utf-8") as f:
    labels = json.load(f)
  assert labels["intents"] == list(exported["task"].labels.intents)
  assert labels["slots"] == list(exported["task"].labels.slots)


def _float_constant_shapes(content):
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  model = schema.Model.GetRootAsModel(content, 0)
  shapes = []
  for s in range(model.SubgraphsLength()):
    subgraph = model.Subgraphs(s)
    for i in range(subgraph.TensorsLength()):
      tensor = subgraph.Tensors(i)
      if (tensor.Type() == schema.TensorType.FLOAT32 and
          model.Buffers(tensor.Buffer()).DataLength()):
        shapes.append(tuple(tensor.ShapeAsNumpy()))
  return shapes


def test_the_served_layers_are_leaner_with_the_same_outputs(exported):
  # The .tflite has neither [B, T, width] positions nor a [B, T, T] mask ...
  outputs = tflite_conversion.operator_outputs(exported["tflite"]["none"])
  assert not [name for name in outputs if re.search(
      r"(position_embedding|self_attention_mask)/BroadcastTo|Tensordot", name)]
  # ... and the encoder's outputs are the same (up to the order in which
  # TensorFlow's graph optimizer adds three [B, T, width] terms), here on a
  # batch of queries of several lengths (padding: the mask matters).
  module = exported["module"]
  features, _ = module.tokenizer.pack_words(
      tf.constant(exported["texts"][:32]), SEQ_LENGTH)
  assert len(set(features["input_mask"].numpy().sum(1))) > 1
  run = lambda: tf.function(lambda f: module.model(f, training=False))(
      features)
  plain = run()
  with saved_model_export._served_layers(module.model):  # pylint: disable=protected-access
    served = run()
  for key in ("intent_logits", "slot_logits"):
    np.testing.assert_allclose(served[key].numpy(), plain[key].numpy(),
                               rtol=1e-5, atol=1e-5)


def test_served_position_table_is_cut_to_the_sequence_length(exported):
  restored = tf_keras.models.load_model(exported["export_dir"])
  hidden = restored.encoder_network.get_config()["hidden_size"]
  # The Keras model keeps every position, for further fine-tuning ...
  assert (512, hidden) in [tuple(w.shape) for w in restored.weights]
  # ... the .tflite only the served ones ...
  shapes = _float_constant_shapes(exported["tflite"]["none"])
  assert (SEQ_LENGTH, hidden) in shapes
  assert (512, hidden) not in shapes
  # ... and the cut changes no output of the SavedModel's signature.
  texts = exported["texts"][:32]
  features, _ = exported["module"].tokenizer.pack_words(tf.constant(texts),
                                                        SEQ_LENGTH)
  logits = restored(features, training=False)["intent_logits"].numpy()
  served = tf.saved_model.load(exported["export_dir"]).signatures[
      "serving_default"](text=tf.constant(texts))["intent_logits"]
  np.testing.assert_allclose(served.numpy(), logits, atol=1e-5)
