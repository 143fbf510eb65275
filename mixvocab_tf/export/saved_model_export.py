"""Writes an export module as a SavedModel that Keras loads back.

The served student (Zhao et al., EACL 2021, §4.2) is saved so that one
directory serves three uses:

- TensorFlow serving and TFLite conversion read its string-in signatures
  (`serving_default`, `serving_tflite`);
- `tf_keras.models.load_model(export_dir)` gives back the fine-tuned
  tf_keras model (token features in, logits out), to continue fine-tuning;
- Keras 3's `keras.layers.TFSMLayer(export_dir, call_endpoint=
  "serving_default")` serves raw strings.

For the second use the SavedModel's root is the tf_keras model itself (saved
by tf_keras, with its Keras metadata), and the export module (tokenizer, the
student vocabulary as an asset) is saved as the model's `export_module`
attribute. `assets.extra/export_info.json` records what the conversion tool
needs to know without loading the model: the kind of module (`task`), the
registered task that owns it (`task_name`, whose serving hooks pick parity
examples and scores), sequence length, vocabulary, signatures and their
inputs, and the module's own fields (labels, ...).

Nothing here depends on the task: an export module (its task's
`export_module(model)`, or `EncoderExportModule`) brings everything that
differs, so a new fine-tuning task exports without changes to this file.
"""

import contextlib
import json
import os

from official.nlp.modeling import layers as nlp_layers
from official.nlp.modeling import networks as nlp_networks
import tensorflow as tf
import tf_keras

from mixvocab_tf.export import layer_calls
from mixvocab_tf.export import packed_embedding
from mixvocab_tf.export import tflite_conversion

#: Attribute of the saved model that holds the export module.
EXPORT_MODULE_ATTRIBUTE = "export_module"
EXPORT_INFO_FILE = os.path.join("assets.extra", "export_info.json")
LABELS_FILE = os.path.join("assets.extra", "labels.json")


def export_saved_model(module, export_dir, pack_word_tables=True):
  """Saves `module` (an export module) to `export_dir`.

  Args:
    module: a `tf.Module` with `model` (what it serves), `tokenizer` (a
      `ServingTokenizer`), `seq_length`, `task` (a short kind, e.g. "snips"),
      `signatures()` (string-in `serving_default` and `serving_tflite`),
      `labels_json()` (str or None) and `export_info()` (a dict of extra
      `export_info.json` fields); optionally `task_name`, the registered task
      that owns it. E.g. `IntentSlotTask.export_module(model)`,
      `EncoderExportModule`.
    export_dir: the SavedModel directory (created; must not hold a model).
    pack_word_tables: whether the signatures converted to .tflite (all but
      `serving_default`) read the word table at 4 bits per weight, a scale
      per row (`packed_embedding`). `module.signatures()` is then called a
      second time inside `packed_embedding.packed_word_tables`, and must
      trace anew (`serving_contract.new_trace`); a module that returns cached
      traces keeps its float tables. `serving_default` and the saved Keras
      model keep the float table either way.

  Returns:
    `export_dir`.
  """
  if tf.io.gfile.exists(os.path.join(export_dir, "saved_model.pb")):
    raise FileExistsError(
        f"{export_dir} already holds a SavedModel; export to a new directory.")
  model = module.model
  word_table_bits = 32
  with _served_position_tables(model, module.seq_length) as tables, \
      _served_layers(model):
    signatures = module.signatures()
    if pack_word_tables:
      # The signatures converted to .tflite, traced again on the packed word
      # tables; `serving_default` keeps the model's float ones.
      with packed_embedding.packed_word_tables(model) as copies:
        packed = module.signatures()
      retraced = {name: function for name, function in packed.items()
                  if name != "serving_default" and
                  function is not signatures.get(name)}
      if retraced:
        signatures.update(retraced)
        tables += copies
        word_table_bits = packed_embedding.BITS
  # Saved with the module, which the signatures capture them from.
  module.served_position_tables = tables
  if isinstance(model, tf_keras.Model):
    # Keeps the tokenizer and the vocabulary asset in the SavedModel; removed
    # again so that the caller's model is left as it was.
    setattr(model, EXPORT_MODULE_ATTRIBUTE, module)
    try:
      tf_keras.models.save_model(model, export_dir, save_format="tf",
                                 include_optimizer=False,
                                 signatures=signatures)
    finally:
      delattr(model, EXPORT_MODULE_ATTRIBUTE)
  else:
    tf.saved_model.save(module, export_dir, signatures=signatures)
  converted = signatures.get(tflite_conversion.TFLITE_SIGNATURE,
                             signatures.get("serving_default"))
  info = {
      "task": module.task,
      "seq_length": module.seq_length,
      "vocab_size": module.tokenizer.vocab_size,
      "lower_case": module.tokenizer.lower_case,
      # Of the signatures converted to .tflite.
      "word_table_bits": word_table_bits,
      "signatures": sorted(signatures),
      "inputs": sorted(spec.name for spec in tf.nest.flatten(
          converted.structured_input_signature)),
  }
  task_name = getattr(module, "task_name", None)
  if task_name:
    info["task_name"] = task_name
  info.update(module.export_info())
  tf.io.gfile.makedirs(os.path.join(export_dir, "assets.extra"))
  with tf.io.gfile.GFile(os.path.join(export_dir, EXPORT_INFO_FILE),
                         "w") as f:
    f.write(json.dumps(info, indent=1) + "\n")
  labels_json = module.labels_json()
  if labels_json is not None:
    with tf.io.gfile.GFile(os.path.join(export_dir, LABELS_FILE), "w") as f:
      f.write(labels_json + "\n")
  return export_dir


@contextlib.contextmanager
def _served_position_tables(model, seq_length):
  """Lets signatures traced inside read position tables of `seq_length` rows.

  Served inputs never exceed the module's `seq_length`, but the encoder's
  table has `max_sequence_length` rows (512), and the converter keeps a
  constant whole when a slice of it has a dynamic size: 172 KB of a 2.4 MB
  6 x 96 .tflite. Inside the context each `PositionEmbedding` layer reads a
  copy of its first `seq_length` rows; the model itself (the SavedModel's
  Keras root, which keeps every row for further fine-tuning) is untouched,
  and the layers read their own tables again afterwards. A signature traced
  before the export keeps the whole table (correct, only larger).

  Yields:
    The list of the cut copies (to be tracked by the saved module).
  """
  swapped = []
  for layer in model.submodules:
    table = getattr(layer, "_position_embeddings", None)
    if (isinstance(layer, nlp_layers.PositionEmbedding) and
        table is not None and table.shape[0] > seq_length):
      cut = tf.Variable(table[:seq_length], trainable=False,
                        name="served_position_embeddings")
      # object.__setattr__: Keras and checkpoint tracking must not see the
      # swap, so the model's weights and its saved variables stay as they are.
      object.__setattr__(layer, "_position_embeddings", cut)
      swapped.append((layer, table, cut))
  try:
    yield [cut for _, _, cut in swapped]
  finally:
    for layer, table, _ in swapped:
      object.__setattr__(layer, "_position_embeddings", table)


def _position_call(layer):
  """`PositionEmbedding.call` for [B, T, width] inputs, as [1, T, width]."""
  def call(inputs):
    length = tf.shape(inputs)[1]
    return tf.expand_dims(layer._position_embeddings[:length, :], 0)  # pylint: disable=protected-access
  return call


def _mask_call(inputs, to_mask=None):
  """`SelfAttentionMask.call` as [B, 1, T] instead of [B, T, T]."""
  if isinstance(inputs, list) and to_mask is None:
    inputs, to_mask = inputs
  return tf.cast(tf.expand_dims(to_mask, 1), inputs.dtype)


def _embedding_call(layer):
  """`OnDeviceEmbedding.call` as one gather at the ids' shape (also for its
  one-hot matmul, whose rows are the same values)."""
  def call(inputs):
    embeddings = tf.gather(layer.embeddings, inputs)
    if layer._scale_factor:  # pylint: disable=protected-access
      embeddings *= layer._scale_factor  # pylint: disable=protected-access
    return embeddings
  return call


def _dense_call(layer, call):
  """`Dense.call` that multiplies [B, T, width] inputs with one einsum."""
  def dense(inputs):
    if inputs.shape.rank != 3 or isinstance(inputs, tf.SparseTensor):
      return call(inputs)
    outputs = tf.einsum("btd,dk->btk", inputs, layer.kernel)
    if layer.use_bias:
      outputs = tf.nn.bias_add(outputs, layer.bias)
    return layer.activation(outputs) if layer.activation else outputs
  return dense


@contextlib.contextmanager
def _served_layers(model):
  """Lets signatures traced inside compute four kinds of layers leaner.

  The values are those of the model's own layers; the graph has fewer and
  cheaper operators where TFLite spends a 6x96 student's query on
  per-operator costs rather than arithmetic:

  - `BertEncoderV2` adds its position embeddings as a [B, T, width] tensor
    (`PositionEmbedding` ends in a `broadcast_to`) and gives every attention
    layer a [B, T, T] mask from `SelfAttentionMask` (another
    `broadcast_to`), although each is the same for every row: the sum and
    the masked softmax broadcast a [1, T, width] table and a [B, 1, T] mask
    to the same values. TFLite runs BROADCAST_TO in a slow reference kernel
    outside XNNPACK and re-prepares it at each new query length.
  - `OnDeviceEmbedding` flattens the ids, looks them up (the type
    embeddings: with a one-hot matmul) and reshapes back: one GATHER here.
  - A `Dense` head on [B, T, width] (the slot classifier) runs Keras's
    `tensordot`, eleven operators in TFLite; one einsum is one
    FULLY_CONNECTED.

  On the trained 6x96 SNIPS student's .tflite files (fp32 and dynamic-range)
  every output was the same to the bit on the 700 SNIPS valid queries (one
  by one and in batches of 50) except the slot logits, within 3e-6 (the
  slot classifier's bias is now added inside its FULLY_CONNECTED): the same
  intents and tags. TensorFlow's graph optimizer may also add the three
  embeddings in another order (last-bit differences). The model (trained,
  and saved as Keras) keeps its own layers.
  """
  swapped = []
  for layer in model.submodules:
    if isinstance(layer, nlp_networks.BertEncoderV2):
      position = layer._position_embedding_layer  # pylint: disable=protected-access
      mask = layer._attention_mask_layer  # pylint: disable=protected-access
      if (isinstance(position, nlp_layers.PositionEmbedding) and
          position._seq_axis == 1):  # pylint: disable=protected-access
        layer_calls.swap(position, _position_call(position), swapped)
      if isinstance(mask, nlp_layers.SelfAttentionMask):
        layer_calls.swap(mask, _mask_call, swapped)
    elif isinstance(layer, nlp_layers.OnDeviceEmbedding) and layer.built:
      layer_calls.swap(layer, _embedding_call(layer), swapped)
    elif (type(layer) is tf_keras.layers.Dense and layer.built and  # pylint: disable=unidiomatic-typecheck
          len(layer.kernel.shape) == 2):
      layer_calls.swap(layer, _dense_call(layer, layer.call), swapped)
  try:
    yield
  finally:
    layer_calls.restore(swapped)


def read_export_info(export_dir):
  """The `export_info.json` of a SavedModel written by `export_saved_model`."""
  path = os.path.join(export_dir, EXPORT_INFO_FILE)
  if not tf.io.gfile.isdir(export_dir):
    raise FileNotFoundError(
        f"The SavedModel directory {export_dir} does not exist; give the "
        "--export_dir of tools/export_saved_model.py (or of export_run).")
  if not tf.io.gfile.exists(path):
    raise FileNotFoundError(
        f"{path} does not exist; {export_dir} was not written by "
        "mixvocab_tf.export.export_saved_model.")
  with tf.io.gfile.GFile(path, "r") as f:
    return json.load(f)
