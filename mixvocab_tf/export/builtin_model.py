"""The student without its tokenizer: a .tflite of LiteRT builtins only.

The raw-string .tflite (`tflite_conversion`) tokenizes inside the model with
three tensorflow_text custom ops, which only a runtime built with
tensorflow_text's kernels can load (Python's LiteRT with
`tensorflow_text.tflite_registrar`). MediaPipe Tasks (Android, iOS, Web,
Python), LiteRT.js in a browser and a stock LiteRT app cannot. For them every
export also writes this file:

- **Inputs**: BERT's three int32 tensors (`input_word_ids`, `input_mask`,
  `input_type_ids`; in the metadata `ids`, `mask`, `segment_ids`, as
  MediaPipe Model Maker names them): `[CLS]`, the student WordPieces of the
  text, `[SEP]`, then `[PAD]` (id 0) with mask 0.
  They are [1, n], any n (shape signature [1, -1], default shape
  [1, seq_length]): MediaPipe Tasks and a LiteRT that resizes feed each text
  at its own length, faster than padded to seq_length (the same outputs at
  the text's positions); LiteRT.js, which compiles fixed shapes only, runs a
  copy whose inputs are fixed at [1, seq_length] and pads. The model reads
  at most seq_length positions: a longer input keeps its first
  seq_length - 1 and its last token (`cut_to_length`).
- **Outputs**: class probabilities `probabilities` [1, labels] for a text
  classifier; `intent_probs` [1, intents] and `slot_probs` [1, n, tags]
  (per WordPiece; a word's tag is read at its first piece) for intent and
  slots.
- **Operators**: LiteRT builtins only (`operators` lists them); weights
  dynamic-range quantized like the raw-string file.
- **TFLite Model Metadata** (`write_metadata`), in the form MediaPipe Tasks
  reads: the student vocabulary as a BertTokenizer process unit, the label
  file (`labels.txt`, or `intents.txt`) on the class output and, for intent
  and slots, `slot_tags.txt` on the tag output; name, description, version,
  licence, and the input length in the description. A .tflite with metadata
  is also a zip archive of those files, each stamped 1980-01-01 00:00 (the
  zip format's earliest time), so that the same model always gives the same
  bytes.

The export modules define the signature (`BUILTIN_SIGNATURE`, traced by
`input_signature`); `convert` turns a SavedModel's into the file. The
tokenization contract, a 30-line reference tokenizer and decoder, and the
runtimes that load the file are in docs/SERVING.md.
"""

import contextlib
import ctypes
import io
import json
import os
import struct
import tempfile
import time
from typing import Dict, List, Optional, Sequence
import zipfile

import numpy as np
import tensorflow as tf

from mixvocab_tf.export import tflite_conversion

#: The SavedModel signature of the token-id model.
BUILTIN_SIGNATURE = "serving_builtin"
#: Its inputs, in the order of their metadata.
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
VOCAB_FILE = "vocab.txt"
LABELS_FILE = "labels.txt"
INTENTS_FILE = "intents.txt"
SLOT_TAGS_FILE = "slot_tags.txt"
#: What the metadata's description says of a sentence-pair classifier (the
#: predictor reads it to take two texts).
PAIR_DESCRIPTION = "the label of a pair of texts"
#: Suffix of the builtin file beside a raw-string `<name>.tflite`.
BUILTIN_SUFFIX = "_builtin.tflite"
#: The quantization of the builtin file for each of the raw-string file's:
#: int8 would need calibration on token ids; it gets dynamic-range weights.
QUANTIZE_FOR = {"none": "none", "dynamic": "dynamic", "float16": "float16",
                "int8": "dynamic"}
LICENSE = "Apache-2.0"
AUTHOR = "mixvocab_tf"
#: The modification time of every file packed in the metadata's zip.
PACKED_FILE_TIME = (1980, 1, 1, 0, 0, 0)

_METADATA_INSTALL = (
    "Writing TFLite Model Metadata needs tflite-support's metadata writer: "
    "`python3.11 -m pip install --no-deps tflite-support==0.4.4` (--no-deps: "
    "its protobuf<4 pin conflicts with TensorFlow 2.20; the writer does not "
    "use protobuf) and `python3.11 -m pip install libusb-package` (its "
    "library needs libusb-1.0, which that package ships).")


def input_signature(seq_length: int, dynamic: bool = False
                    ) -> List[tf.TensorSpec]:
  """The signature's inputs: int32 [1, seq_length] each, in `INPUT_NAMES`.

  With `dynamic` the length is dynamic, [1, n]: a runtime feeds each text at
  its own length (the converted file's default shape is [1, seq_length],
  `convert_builtin`), and the module bounds it with `cut_to_length`.
  """
  length = None if dynamic else int(seq_length)
  return [tf.TensorSpec([1, length], tf.int32, name=name)
          for name in INPUT_NAMES]


def cut_to_length(inputs: Sequence[tf.Tensor], seq_length: int
                  ) -> List[tf.Tensor]:
  """The [1, n] inputs cut to at most `seq_length` positions, in the graph.

  Positions past the text (padding) go first. A text longer than
  `seq_length` (a runtime that does not cut, as MediaPipe Tasks feeding a
  model with dynamic inputs) keeps its first `seq_length - 1` positions and
  its last token, `[SEP]`: what the raw-string model's packing keeps. The
  text's length is the sum of `input_mask` (its tokens come first).

  Args:
    inputs: the three [1, n] int32 inputs (`INPUT_NAMES` order; the mask is
      the second).
    seq_length: the most positions the model serves (its position table).
  """
  length = tf.shape(inputs[0])[1]
  real = tf.reduce_sum(inputs[1], axis=1)[0]
  keep = tf.minimum(length, seq_length)
  last = tf.where(real > seq_length, real - 1, keep - 1)
  positions = tf.concat([tf.range(keep - 1), tf.reshape(last, [1])], axis=0)
  return [tf.gather(x, positions, axis=1) for x in inputs]


def _set_default_length(model: bytes, seq_length: int) -> bytes:
  """`model` with the default shape of its inputs [1, seq_length] and of its
  outputs' length axis seq_length (their shape signatures keep the -1):
  runtimes that read a fixed shape (MediaPipe's static path, LiteRT.js on a
  copy fixed at it, `withFixedShapes` of `examples/web`) get the served
  length, not the converter's placeholder 1 (LiteRT.js wrote [1, 48, tags]
  slot probabilities into the room of [1, 1, tags]: "memory access out of
  bounds")."""
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  buffer = bytearray(model)
  subgraph = schema.Model.GetRootAsModel(buffer, 0).Subgraphs(0)
  for i in range(subgraph.InputsLength()):
    tensor = subgraph.Tensors(subgraph.Inputs(i))
    shape = tensor.ShapeAsNumpy()
    if len(shape) != 2 or shape[0] != 1:
      raise ValueError(f"Builtin inputs are [1, n]; found shape {shape}.")
    if tensor.ShapeSignatureLength() == 2 and tensor.ShapeSignature(1) == -1:
      shape[1] = seq_length  # a view into `buffer`
  for i in range(subgraph.OutputsLength()):
    tensor = subgraph.Tensors(subgraph.Outputs(i))
    if tensor.ShapeSignatureLength() == tensor.ShapeLength():
      shape = tensor.ShapeAsNumpy()
      for axis in range(tensor.ShapeLength()):
        if tensor.ShapeSignature(axis) == -1:
          shape[axis] = seq_length
  return bytes(buffer)


def builtin_path(path: str) -> str:
  """`x.tflite` -> `x_builtin.tflite`: where the builtin file goes."""
  stem = path[:-len(".tflite")] if path.endswith(".tflite") else path
  return stem + BUILTIN_SUFFIX


def operators(model: bytes) -> List[str]:
  """Sorted names of the operators of a .tflite: builtin names (`GATHER`,
  `FULLY_CONNECTED`, ...) and custom op names as they are."""
  return sorted({builtin or custom for builtin, custom in
                 tflite_conversion.operator_codes(model)})


def non_builtin_operators(model: bytes) -> List[str]:
  """The custom (including Flex) operators of a .tflite; [] for a builtin one."""
  return tflite_conversion.custom_ops(model)


@contextlib.contextmanager
def _metadata_modules():
  """tflite-support's metadata modules, with libusb loaded for their library.

  tflite-support's compiled metadata helpers link libusb-1.0 (for its audio
  tasks); `libusb-package` ships that library, loaded globally first so that
  the dynamic linker finds it by name.
  """
  try:
    import libusb_package  # pylint: disable=g-import-not-at-top
    library = libusb_package.get_library_path()
    if library:
      ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
  except ImportError:
    pass  # A system libusb-1.0 may be there.
  try:
    # pylint: disable=g-import-not-at-top
    from tensorflow_lite_support.metadata.python import metadata
    from tensorflow_lite_support.metadata.python.metadata_writers import metadata_info
    from tensorflow_lite_support.metadata.python.metadata_writers import metadata_writer
    from tensorflow_lite_support.metadata.python.metadata_writers import writer_utils
    # pylint: enable=g-import-not-at-top
  except ImportError as e:
    raise ImportError(f"{_METADATA_INSTALL} ({e})") from e
  yield metadata, metadata_info, metadata_writer, writer_utils


def _tensor_names(model: bytes):
  """Signature input and output names -> the model's tensor names."""
  from ai_edge_litert import interpreter as litert  # pylint: disable=g-import-not-at-top
  interpreter = litert.Interpreter(model_content=bytes(model))
  runner = interpreter.get_signature_runner()
  by_index = {d["index"]: d["name"] for d in interpreter.get_tensor_details()}
  inputs = {k: by_index[v["index"]]
            for k, v in runner.get_input_details().items()}
  outputs = {k: by_index[v["index"]]
             for k, v in runner.get_output_details().items()}
  return inputs, outputs


def _write_lines(directory, name, lines):
  path = os.path.join(directory, name)
  with open(path, "w", encoding="utf-8") as f:
    f.write("".join(f"{line}\n" for line in lines))
  return path


def write_metadata(model: bytes, info: dict, vocab: Sequence[str],
                   name: Optional[str] = None,
                   version: Optional[str] = None) -> bytes:
  """Returns `model` with TFLite Model Metadata, in MediaPipe Tasks' form.

  Args:
    model: a builtin .tflite of `convert_builtin` (its signature's names).
    info: the SavedModel's `export_info.json`: `task` ('glue' for a text
      classifier with `labels`, 'snips' for intent and slots with `intents`
      and `slots`), `seq_length`, `lower_case`, `inputs` (two for a
      sentence-pair classifier, which the description then names).
    vocab: the student vocabulary, one token per id.
    name: the model's name in the metadata.
    version: its version (default: the package's).

  Returns:
    The .tflite with metadata and its associated files packed in.
  """
  from mixvocab_tf import __version__  # pylint: disable=g-import-not-at-top
  intent_slot = info["task"] == "snips"
  seq_length = int(info["seq_length"])
  inputs, outputs = _tensor_names(model)
  pair = len(info.get("inputs", ())) == 2
  what = ("the intent of a query and an IOB slot tag per WordPiece"
          if intent_slot else
          f"{PAIR_DESCRIPTION} (segment ids 1 on the second text and its "
          "[SEP])" if pair else "the label of a text")
  description = (
      f"A mixvocab_tf student that predicts {what}. Inputs: [CLS] student "
      f"WordPieces [SEP] as int32 ids, mask and segment ids of shape "
      f"[1, n], any n (default {seq_length}): the text at its own "
      f"length, or padded with [PAD]=0 and mask 0; at most "
      f"seq_length={seq_length} positions are read (a longer text keeps "
      f"its first {seq_length - 1} and its [SEP]). "
      f"lower_case={bool(info.get('lower_case', True))}, accents stripped, "
      "punctuation split. Only LiteRT builtin operators.")
  with _metadata_modules() as (_, metadata_info, metadata_writer,
                               writer_utils), \
      tempfile.TemporaryDirectory() as directory:
    vocab_path = _write_lines(directory, VOCAB_FILE, vocab)
    tokenizer = metadata_info.BertTokenizerMd(vocab_path)
    bert_inputs = metadata_info.BertInputTensorsMd(
        model, inputs["input_word_ids"], inputs["input_mask"],
        inputs["input_type_ids"], tokenizer_md=tokenizer)
    general = metadata_info.GeneralMd(
        name=name or ("mixvocab_tf intent and slot student" if intent_slot
                      else "mixvocab_tf text classifier student"),
        version=version or f"mixvocab_tf {__version__}",
        description=description, author=AUTHOR, licenses=LICENSE)
    float32 = writer_utils.get_output_tensor_types(model)[0]
    if intent_slot:
      labels = [
          (outputs["intent_probs"], "intent_probs",
           "Probabilities of the intents.",
           _write_lines(directory, INTENTS_FILE, info["intents"])),
          (outputs["slot_probs"], "slot_probs",
           "Probabilities of the IOB slot tags at each WordPiece (a word's "
           "tag is read at its first piece).",
           _write_lines(directory, SLOT_TAGS_FILE, info["slots"]))]
    else:
      labels = [(outputs["probabilities"], "probability",
                 "Probabilities of the labels.",
                 _write_lines(directory, LABELS_FILE, info["labels"]))]
    output_md = {
        tensor: metadata_info.ClassificationTensorMd(
            name=md_name, description=text,
            label_files=[metadata_info.LabelFileMd(file_path=path)],
            tensor_type=float32, tensor_name=tensor)
        for tensor, md_name, text, path in labels}
    order = writer_utils.get_output_tensor_names(model)
    writer = metadata_writer.MetadataWriter.create_from_metadata(
        model, model_metadata=general.create_metadata(),
        input_metadata=bert_inputs.create_input_tesnor_metadata(),
        output_metadata=[output_md[t].create_metadata() for t in order],
        associated_files=[path for _, _, _, path in labels] +
        bert_inputs.get_tokenizer_associated_files(),
        input_process_units=bert_inputs.create_input_process_unit_metadata())
    return _fixed_packed_file_times(bytes(writer.populate()))


def _fixed_packed_file_times(model: bytes) -> bytes:
  """`model` with its packed files' time stamps set to `PACKED_FILE_TIME`.

  tflite-support's populator appends the associated files to the flatbuffer
  as a zip archive and stamps each with the time of packing, so two exports
  of the same model differed in a few bytes. The stamps (2 x 2 bytes in each
  file's local header and in its central-directory entry) are rewritten in
  place; every other byte stays.

  Raises:
    ValueError: `model` holds no zip archive where its directory says.
  """
  year, month, day, hour, minute, second = PACKED_FILE_TIME
  stamp = struct.pack("<HH", hour << 11 | minute << 5 | second // 2,
                      (year - 1980) << 9 | month << 5 | day)
  buffer = bytearray(model)
  with zipfile.ZipFile(io.BytesIO(model)) as archive:
    # Positions in `model` (zipfile adds the bytes before the archive).
    headers = [info.header_offset for info in archive.infolist()]
    entry = archive.start_dir
  for header in headers:
    if buffer[header:header + 4] != b"PK\x03\x04":
      raise ValueError(f"No zip file header at byte {header} of the model.")
    buffer[header + 10:header + 14] = stamp  # After version, flags, method.
  for _ in headers:
    if buffer[entry:entry + 4] != b"PK\x01\x02":
      raise ValueError(f"No zip directory entry at byte {entry} of the model.")
    buffer[entry + 12:entry + 16] = stamp
    name, extra, comment = struct.unpack_from("<HHH", buffer, entry + 28)
    entry += 46 + name + extra + comment
  return bytes(buffer)


def read_metadata(model: bytes) -> dict:
  """The metadata of a .tflite: {'metadata': its JSON as a dict, 'files':
  {associated file name: its text}}."""
  with _metadata_modules() as (metadata, _, _, _):
    displayer = metadata.MetadataDisplayer.with_model_buffer(bytearray(model))
    files = {name: displayer.get_associated_file_buffer(name).decode("utf-8")
             for name in displayer.get_packed_associated_file_list()}
    return {"metadata": json.loads(displayer.get_metadata_json()),
            "files": files}


def convert_builtin(saved_model_dir: str, quantize: str = "dynamic") -> bytes:
  """The SavedModel's `BUILTIN_SIGNATURE` as a builtin-only .tflite with
  metadata.

  Args:
    saved_model_dir: an export of a fine-tuned student (`export_run`).
    quantize: 'none', 'dynamic' or 'float16' (`QUANTIZE_FOR` maps the
      raw-string file's choice).

  Raises:
    ValueError: the export has no builtin signature (an encoder export, or
      one written before the signature existed: export the run again).
  """
  from mixvocab_tf.export import saved_model_export  # pylint: disable=g-import-not-at-top
  info = saved_model_export.read_export_info(saved_model_dir)
  if BUILTIN_SIGNATURE not in info.get("signatures", ()):
    raise ValueError(
        f"{saved_model_dir} has no {BUILTIN_SIGNATURE!r} signature (it has "
        f"{info.get('signatures')}); it is an encoder export or predates "
        "builtin-only models: export the fine-tuned run again.")
  model = tflite_conversion.convert_saved_model(
      saved_model_dir, QUANTIZE_FOR.get(quantize, quantize),
      signature=BUILTIN_SIGNATURE, builtin_only=True)
  model = _set_default_length(model, int(info["seq_length"]))
  vocab = os.path.join(saved_model_dir, "assets", VOCAB_FILE)
  if not tf.io.gfile.exists(vocab):
    candidates = tf.io.gfile.glob(os.path.join(saved_model_dir, "assets",
                                               "*.txt"))
    if len(candidates) != 1:
      raise FileNotFoundError(
          f"No vocabulary in {saved_model_dir}/assets (found {candidates}).")
    vocab = candidates[0]
  with tf.io.gfile.GFile(vocab, "r") as f:
    tokens = f.read().splitlines()
  return write_metadata(model, info, tokens)


def has_builtin_signature(saved_model_dir: str) -> bool:
  from mixvocab_tf.export import saved_model_export  # pylint: disable=g-import-not-at-top
  info = saved_model_export.read_export_info(saved_model_dir)
  return BUILTIN_SIGNATURE in info.get("signatures", ())


class BuiltinRunner:
  """Runs a builtin .tflite on token ids with LiteRT's builtin op resolver.

  No tensorflow_text kernel is registered: the file must load without them.
  Each text is fed at its own length (at most `seq_length`); a file with
  fixed-length inputs (exported before they became dynamic) gets them padded.

  Args:
    model_path: path of the .tflite, or None with `model_content`.
    model_content: its bytes.
    num_threads: interpreter threads.
  """

  def __init__(self, model_path=None, model_content=None, num_threads=1):
    from ai_edge_litert import interpreter as litert  # pylint: disable=g-import-not-at-top
    self.interpreter = litert.Interpreter(
        model_path=model_path, model_content=model_content,
        num_threads=num_threads)
    self.runner = self.interpreter.get_signature_runner()
    details = self.runner.get_input_details()["input_word_ids"]
    self.seq_length = int(details["shape"][1])
    self.dynamic = int(details["shape_signature"][1]) == -1

  def fit(self, features: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """int32 [1, n] inputs from features of any length: the text's own
    positions (mask 1), at most `seq_length` (a longer text is cut as
    `cut_to_length` cuts); [1, seq_length], padded, for fixed-length
    inputs."""
    values = {name: np.asarray(features[name], np.int32).reshape(1, -1)
              for name in INPUT_NAMES}
    if self.dynamic:
      length = max(1, int(values["input_mask"].sum()))
      if length > self.seq_length:
        keep = np.r_[0:self.seq_length - 1, length - 1]
        return {name: value[:, keep] for name, value in values.items()}
      return {name: value[:, :length] for name, value in values.items()}
    return {name: np.pad(value[:, :self.seq_length],
                         ((0, 0), (0, self.seq_length -
                                   min(value.shape[1], self.seq_length))))
            for name, value in values.items()}

  def __call__(self, features: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    return self.runner(**self.fit(features))


def p50_ms(runner: BuiltinRunner, features: Sequence[Dict[str, np.ndarray]]
           ) -> float:
  """Median milliseconds of one invocation over `features` (model only)."""
  fitted = [runner.fit(f) for f in features]
  times = []
  for inputs in fitted:
    start = time.perf_counter()
    runner.runner(**inputs)
    times.append(time.perf_counter() - start)
  return 1000 * float(np.median(times)) if times else float("nan")


def features(saved_model_dir: str, rows: Sequence[Sequence[str]]
             ) -> List[Dict[str, np.ndarray]]:
  """Token-id inputs of the builtin file for `rows`, one dict per row.

  Tokenized by the export's own in-graph tokenizer (`ServingTokenizer`, the
  SavedModel's vocabulary), as the raw-string model tokenizes: the ids a
  runtime's tokenizer must give (docs/SERVING.md).

  Args:
    saved_model_dir: the export.
    rows: one text, a tuple of texts (a pair) or a {'text_a', 'text_b'}
      dict per example.
  """
  from mixvocab_tf.export import saved_model_export  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import serving_tokenizer  # pylint: disable=g-import-not-at-top
  info = saved_model_export.read_export_info(saved_model_dir)
  vocab = tf.io.gfile.glob(os.path.join(saved_model_dir, "assets", "*.txt"))
  tokenizer = serving_tokenizer.ServingTokenizer(
      vocab[0], info.get("lower_case", True))
  seq_length = int(info["seq_length"])

  # One graph for every row (traced once per number of texts): eagerly, the
  # tokenizer's few dozen operations took ~25 ms a row.
  @tf.function(autograph=False)
  def pack(texts):
    if info["task"] == "snips":
      return tokenizer.pack_words(texts[0], seq_length)[0]
    return tokenizer.pack_sentences(*texts, seq_length=seq_length)

  result = []
  for row in rows:
    if isinstance(row, str):
      row = (row,)
    elif isinstance(row, dict):
      row = (row["text_a"], row["text_b"])
    packed = pack(tuple(tf.constant([text]) for text in row))
    result.append({k: v.numpy() for k, v in packed.items()})
  return result


def summary(path: str, saved_model_dir: str,
            latency_rows: Sequence[Sequence[str]]) -> dict:
  """Size, operators and model-only p50 latency of a builtin file.

  Returns:
    {'path', 'bytes', 'operators', 'custom_ops' (must be []), 'seq_length',
    'dynamic' (inputs of any length up to it), 'p50_ms' (one invocation on
    `latency_rows`' ids, one thread; the runtime's tokenization not
    included)}.
  """
  with tf.io.gfile.GFile(path, "rb") as f:
    content = f.read()
  runner = BuiltinRunner(model_content=content)
  return {"path": path, "bytes": len(content),
          "operators": operators(content),
          "custom_ops": non_builtin_operators(content),
          "seq_length": runner.seq_length, "dynamic": runner.dynamic,
          "p50_ms": p50_ms(runner, features(saved_model_dir, latency_rows))}
