"""Converts an exported student to TFLite and runs it in the LiteRT interpreter.

The point of the tiny students of Zhao et al. (EACL 2021) is to run on
phones; this module turns the SavedModel of `export_saved_model` into a
.tflite that answers raw strings with TFLite builtins plus tensorflow_text's
TFLite kernels only (no Flex / select TF ops), as tensorflow_text's guide
"Converting TensorFlow Text operators to TensorFlow Lite" describes.

Quantization (`quantize`):

- `none`: float32 weights and activations.
- `dynamic`: int8 weights, float activations (dynamic-range quantization).
- `float16`: float16 weights, computed in float32.
- `int8`: int8 weights and int8 activations where TFLite has int8 kernels,
  calibrated on representative text (the tokenizer and the string outputs stay
  as they are: the model takes and gives strings). The position-embedding
  lookup stays in float (`INT8_FLOAT_NODES`): TensorFlow 2.20's quantizer gives
  its BROADCAST_TO an output scale other than its input's, and TFLite's int8
  BROADCAST_TO copies values without rescaling, so every position embedding
  came out wrong (measured on the quickstart's 6x96 SNIPS student with nothing
  kept in float: intent agreement with fp32 89.4%, slot F1 42.4 against 51.0).
  Exports now add the position table by broadcasting (no BROADCAST_TO,
  `saved_model_export`), and that sum of word and position embeddings
  (`bert_encoder/add`) stays in float too: quantized, the broadcasting ADD
  cost the test model of tests/test_export_snips_tflite.py 0.12 slot F1; in
  float its int8 file is 0.16 above fp32, against 0.40 below before. (The
  next sum, with the type embeddings, kept in float as well, moved a random
  sentence-pair model's int8 logits by 5% of their scale.)
  The valid-IOB decoder of slot tags (name scope `iob_viterbi`) stays in float
  too: its forbidden-transition scores (-1e4) and its log-probabilities share
  no useful int8 scale (quantized, slot F1 fell from 58.0 to 22.8 on the test
  model of tests/test_export_snips_tflite.py).
  Calibration text reaches the calibrator as fixed-width bytes: given object
  arrays of bytes, TensorFlow 2.20's calibrator ran on other text than given,
  so every activation range was off (10-20% relative error in every layer) and
  differed from one conversion to the next. Fed fixed-width bytes, a conversion
  is reproducible byte for byte and, on the quickstart's 6x96 SNIPS student,
  keeps 99.6% of intents and slot F1 (51.10 against fp32's 51.04 on SNIPS
  valid).

The converter is TensorFlow's (`tf.lite.TFLiteConverter`); the interpreter is
LiteRT's (`ai_edge_litert.interpreter.InterpreterWithCustomOps`) with
`tensorflow_text.tflite_registrar.SELECT_TFTEXT_OPS`, which is also what
int8 calibration runs under.
"""

import re

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from mixvocab_tf.export import serving_contract

QUANTIZATIONS = ("none", "dynamic", "float16", "int8")

#: The TFLite custom ops that tensorflow_text's registrar provides
#: (`tflite_registrar.SELECT_TFTEXT_OPS`); a converted model may use no other.
TFTEXT_CUSTOM_OPS = frozenset({
    "FastBertNormalize",
    "FastWordpieceTokenizeWithOffsets",
    "RaggedTensorToTensor",
    "TFText>ByteSplitByOffsets",
    "TFText>ByteSplitWithOffsets",
    "TFText>FastSentencepieceDetokenize",
    "TFText>FastSentencepieceTokenize",
    "TFText>FastWordpieceDetokenize",
    "TFText>NgramsStringJoin",
    "TFText>RoundRobinGenerateMasks",
    "TFText>RoundRobinTrim",
    "TFText>Utf8Binarize",
    "TFText>WhitespaceTokenizeWithOffsetsV2",
})

#: Regex of the tensors kept in float by int8 quantization (see above).
INT8_FLOAT_NODES = r"position_embedding/|bert_encoder/add$|iob_viterbi"

#: The SavedModel signature converted by default (see the export modules).
TFLITE_SIGNATURE = "serving_tflite"
#: The signature key inside the .tflite.
SIGNATURE_KEY = "serving_default"


class UnsupportedOpsError(ValueError):
  """A converted model uses custom ops that tensorflow_text does not serve."""


def custom_ops(tflite_model):
  """Sorted names of the custom ops in a .tflite (bytes).

  Flex ops (select TF ops) are custom ops whose names start with "Flex".
  """
  return sorted({custom for _, custom in operator_codes(tflite_model)
                 if custom is not None})


def operator_codes(tflite_model):
  """(builtin operator name or None, custom op name or None) of each
  operator code of a .tflite (bytes)."""
  # Imported here: the schema module is large and only this needs it.
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  builtin_names = {value: key for key, value in
                   vars(schema.BuiltinOperator).items()
                   if not key.startswith("_")}
  model = schema.Model.GetRootAsModel(tflite_model, 0)
  codes = []
  for i in range(model.OperatorCodesLength()):
    code = model.OperatorCodes(i)
    builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
    if builtin == schema.BuiltinOperator.CUSTOM:
      codes.append((None, code.CustomCode().decode("utf-8")))
    else:
      codes.append((builtin_names[builtin], None))
  return codes


def operator_outputs(tflite_model):
  """Names of the tensors that the operators of a .tflite (bytes) write.

  Every subgraph's, so that ops inside control flow (a WHILE loop's body)
  are named too.
  """
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  model = schema.Model.GetRootAsModel(tflite_model, 0)
  names = []
  for s in range(model.SubgraphsLength()):
    subgraph = model.Subgraphs(s)
    for i in range(subgraph.OperatorsLength()):
      operator = subgraph.Operators(i)
      for j in range(operator.OutputsLength()):
        names.append(subgraph.Tensors(operator.Outputs(j)).Name().decode())
  return names


def check_custom_ops(tflite_model):
  """Raises `UnsupportedOpsError` for custom ops beyond tensorflow_text's."""
  unsupported = [op for op in custom_ops(tflite_model)
                 if op not in TFTEXT_CUSTOM_OPS]
  if unsupported:
    raise UnsupportedOpsError(
        f"The converted model uses custom ops {unsupported} that neither "
        "TFLite builtins nor tensorflow_text's TFLite kernels provide; "
        f"allowed custom ops: {sorted(TFTEXT_CUSTOM_OPS)}. Express the "
        "serving graph with other ops (e.g. no ragged slicing, which gives "
        "RaggedRange).")


def _representative_dataset(input_names, examples):
  """Yields one calibration sample per example, as the signature's inputs."""
  def generate():
    for example in examples:
      if isinstance(example, str):
        example = (example,)
      if len(example) != len(input_names):
        raise ValueError(
            f"Representative examples must give the inputs {input_names}; "
            f"received {example!r}.")
      # Fixed-width bytes (dtype "S"), not dtype=object: TensorFlow 2.20's
      # calibrator does not read object arrays of bytes correctly, and
      # calibrated on other text than given (measured: activation ranges
      # that no input produces, different on every conversion).
      yield {name: np.array([value.encode("utf-8")])
             for name, value in zip(input_names, example)}
  return generate


def _make_converter(loaded, function, quantize, dataset, builtin_only=False):
  """A TFLiteConverter for `function` (a converter converts only once)."""
  converter = tf.lite.TFLiteConverter.from_concrete_functions([function],
                                                              loaded)
  # Builtins only; tensorflow_text's ops pass as custom ops (checked after
  # conversion), never as Flex ops. A builtin-only model allows none.
  converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
  converter.allow_custom_ops = not builtin_only
  if quantize != "none":
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
  if quantize == "float16":
    converter.target_spec.supported_types = [tf.float16]
  if quantize == "int8":
    converter.representative_dataset = dataset
    # Calibration runs the model, tokenizer included.
    converter.target_spec._experimental_custom_op_registerers = (  # pylint: disable=protected-access
        list(tf_text.tflite_registrar.SELECT_TFTEXT_OPS))
  return converter


def convert_saved_model(saved_model_dir, quantize="none",
                        representative_examples=None,
                        signature=TFLITE_SIGNATURE,
                        int8_float_nodes=INT8_FLOAT_NODES,
                        builtin_only=False):
  """Converts the `signature` of a SavedModel to a .tflite (bytes).

  Args:
    saved_model_dir: a SavedModel from `export_saved_model`.
    quantize: one of `QUANTIZATIONS`.
    representative_examples: for `int8`, the calibration inputs: strings
      (one-input signatures) or tuples of strings (sentence pairs). A few
      hundred task queries are enough.
    signature: the SavedModel signature to convert.
    int8_float_nodes: for `int8`, a regex of the tensor names (as in the
      .tflite) whose ops stay in float; default `INT8_FLOAT_NODES`.
    builtin_only: allow no custom op at all (the token-id signature of
      `builtin_model`, for runtimes without tensorflow_text's kernels).

  Returns:
    The .tflite flatbuffer, checked to need no custom op beyond
    `TFTEXT_CUSTOM_OPS` (none with `builtin_only`). Its one signature is
    `SIGNATURE_KEY`.

  Raises:
    ValueError: an unknown `quantize`, or `int8` without examples.
    UnsupportedOpsError: the graph needs ops TFLite cannot run.
  """
  if quantize not in QUANTIZATIONS:
    raise ValueError(f"quantize must be one of {QUANTIZATIONS}; received "
                     f"{quantize!r}.")
  loaded = tf.saved_model.load(saved_model_dir)
  if signature not in loaded.signatures:
    raise ValueError(f"{saved_model_dir} has no signature {signature!r}; it "
                     f"has {sorted(loaded.signatures)}.")
  function = loaded.signatures[signature]
  dataset = None
  if quantize == "int8":
    if not representative_examples:
      raise ValueError("quantize='int8' needs representative_examples (text "
                       "to calibrate activation ranges on).")
    input_names = sorted(function.structured_input_signature[1])
    dataset = _representative_dataset(input_names,
                                      list(representative_examples))
  tflite_model = _make_converter(loaded, function, quantize, dataset,
                                 builtin_only).convert()
  if quantize == "int8":
    float_nodes = [name for name in operator_outputs(tflite_model)
                   if int8_float_nodes and re.search(int8_float_nodes, name)]
    if float_nodes:
      # Quantized again, with those nodes in float. The debugger is the
      # converter's API for a per-node denylist; it calibrates anew.
      debugger = tf.lite.experimental.QuantizationDebugger(
          converter=_make_converter(loaded, function, quantize, dataset,
                                    builtin_only),
          debug_dataset=dataset,
          debug_options=tf.lite.experimental.QuantizationDebugOptions(
              denylisted_nodes=float_nodes))
      tflite_model = debugger.get_nondebug_quantized_model()
  if builtin_only and custom_ops(tflite_model):
    raise UnsupportedOpsError(
        f"The builtin-only model uses custom ops {custom_ops(tflite_model)}; "
        "its signature must hold no tokenizer or string op.")
  check_custom_ops(tflite_model)
  return tflite_model


def make_interpreter(model_path=None, model_content=None, num_threads=1):
  """A LiteRT interpreter with tensorflow_text's TFLite kernels registered.

  Example:
  ```python
  runner = make_interpreter("snips_int8.tflite").get_signature_runner()
  runner(text=np.array([b"play some jazz"], dtype=object))["intent"]
  ```
  """
  # Imported here: LiteRT is only needed to run .tflite files.
  from ai_edge_litert import interpreter as litert  # pylint: disable=g-import-not-at-top
  return litert.InterpreterWithCustomOps(
      custom_op_registerers=list(tf_text.tflite_registrar.SELECT_TFTEXT_OPS),
      model_path=model_path, model_content=model_content,
      num_threads=num_threads)


class TFLiteRunner:
  """Calls a .tflite's signature on Python strings, one batch at a time.

  Holds the serving contract (`serving_contract`) that the .tflite itself
  cannot raise on: inputs other than one [batch] of strings each (the same
  batch for a pair) are refused with the SavedModel's message, and an empty
  batch gives empty outputs, as the SavedModel does.

  Args:
    model_path: path of a .tflite, or None with `model_content`.
    model_content: the .tflite bytes.
    num_threads: interpreter threads.
  """

  def __init__(self, model_path=None, model_content=None, num_threads=1):
    self.interpreter = make_interpreter(model_path, model_content,
                                        num_threads)
    self.runner = self.interpreter.get_signature_runner(SIGNATURE_KEY)
    self.input_names = sorted(self.runner.get_input_details())
    self._planned_shapes = None  # The input shapes the plan was made for.

  def _check(self, arrays):
    shapes = [array.shape for array in arrays]
    if (any(len(shape) != 1 for shape in shapes) or
        len({shape[0] for shape in shapes}) != 1):
      received = ", ".join(f"{name}: {list(shape)}"
                           for name, shape in zip(self.input_names, shapes))
      raise ValueError(
          f"Bad serving input: "
          f"{serving_contract.expected_shapes(self.input_names)}; received "
          f"shapes {received} (a shape [] is a single string: wrap it in a "
          "list; flatten an [n, m] array first).")

  def __call__(self, *texts):
    """Runs one batch: one list of strings (or bytes) per input, in
    `input_names` order (sorted names, e.g. sentence_a, sentence_b).

    Returns:
      The signature's outputs as NumPy arrays (strings as bytes).

    Raises:
      ValueError: the inputs break the serving contract.
    """
    if len(texts) != len(self.input_names):
      raise ValueError(f"The model takes {self.input_names}; received "
                       f"{len(texts)} inputs.")
    arrays = []
    for values in texts:
      if isinstance(values, (str, bytes)):
        values = np.array(values, dtype=object)
      values = np.asarray(values, dtype=object)
      # Element by element (np.vectorize costs 0.05 ms a call, 5% of a 6x96
      # student's query); other shapes than [batch] are refused below.
      encoded = np.empty(values.shape, dtype=object)
      for index, value in np.ndenumerate(values):
        encoded[index] = (value.encode("utf-8") if isinstance(value, str)
                          else value)
      arrays.append(encoded)
    self._check(arrays)
    if not arrays[0].shape[0]:
      # LiteRT cannot set an empty string tensor ("Invalid tensor size."):
      # the outputs of one empty string, cut to none, have the SavedModel's
      # shapes for an empty batch.
      outputs = self.runner(**{name: np.array([b""], dtype=object)
                               for name in self.input_names})
      self._planned_shapes = None
      return {key: value[:0] for key, value in outputs.items()}
    return self._invoke(arrays)

  def _invoke(self, arrays):
    """The signature runner's call, re-planning only for new input shapes.

    LiteRT's Python `SignatureRunner` resizes the inputs and calls
    `AllocateTensors` at every call: with string inputs (dynamic tensors)
    that re-prepares every operator of the graph and its XNNPACK delegate,
    about 0.1 ms a query for the 6x96 student, a sixth of its time. LiteRT's
    Java and C++ APIs allocate again only after a resize, and so does this:
    operators whose shapes change from one query to the next are resized
    by the interpreter inside `Invoke`, as in every call after the first.
    The outputs are the same (tested).
    """
    runner = self.runner
    wrapper = getattr(runner, "_interpreter_wrapper", None)
    if wrapper is None:  # Another LiteRT than the pinned one.
      return runner(**dict(zip(self.input_names, arrays)))
    # pylint: disable=protected-access
    subgraph, indices = runner._subgraph_index, runner._inputs
    shapes = [array.shape for array in arrays]
    try:
      if shapes != self._planned_shapes:
        self._planned_shapes = None
        for name, array in zip(self.input_names, arrays):
          wrapper.ResizeInputTensor(indices[name],
                                    np.array(array.shape, dtype=np.int32),
                                    False, subgraph)
        wrapper.AllocateTensors(subgraph)
        self._planned_shapes = shapes
      for name, array in zip(self.input_names, arrays):
        wrapper.SetTensor(indices[name], array, subgraph)
      wrapper.Invoke(subgraph)
    except Exception:
      self._planned_shapes = None  # Plan again at the next call.
      raise
    return {name: wrapper.GetTensor(index, subgraph)
            for name, index in runner._outputs}
