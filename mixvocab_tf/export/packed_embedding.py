"""Word tables at 4 bits per weight in the served signatures.

A 6 x 96 student's word table (4,929 x 96) is the largest tensor of its
.tflite: 473 KB at the converter's int8, a quarter of the file. Inside
`packed_word_tables` each large `OnDeviceEmbedding` of a model looks its rows
up in a copy of its table packed two weights to a byte, with one float scale
per row (symmetric, levels -7..7): 237 KB + 20 KB (5 KB once the
dynamic-range converter stores the scales at int8). The unpacking runs on
the gathered rows only, in builtin operators (GATHER, CAST, CONCATENATION,
EXPAND_DIMS, MUL), so the builtin-ops file
shrinks as much as the raw-string one and every runtime (MediaPipe Tasks,
LiteRT.js, stock LiteRT) runs it.

Measured on the own-data job's SNIPS students (`STUDENT_SIZE='auto'`),
exported with and without it, SNIPS valid: the 6 x 96's .tflite 1.69 ->
1.46 MB, slot F1 93.11 -> 93.08, intent accuracy 98.57 both; the 6 x 192's
4.30 -> 3.84 MB, slot F1 93.50 -> 93.80. The grid is coarser than the
converter's int8 one (a typical row's step 0.046 against 0.0058 for the
6 x 96's whole table), and the scores do not move beyond their noise.
A classifier whose answers sit near its decision boundary can lose more (a
6 x 96 student distilled on MRPC's sentence pairs: validation accuracy
71.8 -> 69.1), so the jobs' export scores both tables on validation first
and keeps the table whole where 4 bits cost more than 0.3 points and more
than one validation example's worth (`jobs.export_steps.word_table_check`).

The model itself is untouched: the Keras model saved as the SavedModel's root
keeps its float table for further fine-tuning, and so does the SavedModel's
`serving_default`; only the signatures converted to .tflite, traced inside
the context, read the packed copy (`saved_model_export.export_saved_model`,
`pack_word_tables=False` to keep them float too).
"""

import contextlib
from typing import Tuple

import numpy as np
from official.nlp.modeling import layers as nlp_layers
import tensorflow as tf

from mixvocab_tf.export import layer_calls

#: Weights per byte and the levels of one weight (-LEVEL..LEVEL).
BITS = 4
LEVEL = 2 ** (BITS - 1) - 1
#: Tables with fewer rows stay float (type embeddings: 2 rows).
MIN_ROWS = 1024


def pack(table: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
  """(packed, scales) of a float [rows, width] table, width even.

  `packed` is uint8 [rows, width / 2]: byte k holds weight k in its low 4
  bits and weight k + width / 2 in its high ones, each as its level + 8
  (1..15). `scales` is float32 [rows]: a row's largest magnitude / 7 (1 for
  a row of zeros). `unpack(packed, scales)` gives the table back to within
  half a level of each row.
  """
  table = np.asarray(table, np.float32)
  if table.ndim != 2 or table.shape[1] % 2:
    raise ValueError("pack needs a [rows, width] table of even width; "
                     f"received shape {table.shape}.")
  scales = np.abs(table).max(axis=1) / LEVEL
  scales[scales == 0] = 1.0
  levels = np.clip(np.rint(table / scales[:, None]), -LEVEL, LEVEL)
  nibbles = (levels + 8).astype(np.uint8)
  half = table.shape[1] // 2
  packed = nibbles[:, :half] | (nibbles[:, half:] << 4)
  return packed, scales.astype(np.float32)


#: The levels of a byte's low and high weights, indexed by the byte.
_LOW_LEVELS = (np.arange(256) % 16 - 8).astype(np.int32)
_HIGH_LEVELS = (np.arange(256) // 16 - 8).astype(np.int32)


def unpack(packed, scales, name="unpacked"):
  """Float rows [..., width] of `packed` rows (uint8 [..., width / 2]) and
  their `scales` ([...]): seven builtin operators, whatever the width.

  Each byte's two levels are looked up in two 256-entry int32 tables
  (GATHER) rather than computed with FLOOR_MOD, FLOOR_DIV and SUB, which
  TFLite runs in slow reference kernels. Integer tables, so that int8
  conversion leaves the levels exact. The same floats.
  """
  index = tf.cast(packed, tf.int32)
  levels = tf.concat([tf.gather(_LOW_LEVELS, index),
                      tf.gather(_HIGH_LEVELS, index)], axis=-1)
  return tf.multiply(tf.cast(levels, tf.float32), tf.expand_dims(scales, -1),
                     name=name)


def _packs(layer) -> bool:
  return (isinstance(layer, nlp_layers.OnDeviceEmbedding) and
          layer.built and not layer._use_one_hot and  # pylint: disable=protected-access
          layer.vocab_size >= MIN_ROWS and layer.embedding_width % 2 == 0)


def _packed_call(layer, packed, scales):
  """`OnDeviceEmbedding.call` reading the packed table."""
  def call(inputs):
    # Gathered at the ids' own shape: no flattening and reshaping back
    # (four operators fewer in TFLite).
    embeddings = unpack(tf.gather(packed, inputs), tf.gather(scales, inputs))
    embeddings = tf.cast(embeddings, layer.compute_dtype)
    embeddings.set_shape(inputs.shape.as_list() + [layer.embedding_width])
    if layer._scale_factor:  # pylint: disable=protected-access
      embeddings *= layer._scale_factor  # pylint: disable=protected-access
    return embeddings
  return call


@contextlib.contextmanager
def packed_word_tables(model):
  """Lets signatures traced inside read packed copies of the word tables.

  Every built `OnDeviceEmbedding` of `model` with at least `MIN_ROWS` rows
  (gather lookup, even width) is packed (`pack`) from its current weights;
  inside the context its `call` reads the copy, and afterwards its own
  table again. Only signatures traced inside read the copies: an export
  module's `signatures()` traces anew (`serving_contract.new_trace`).

  Yields:
    The copies' variables (the saved module must track them).
  """
  swapped = []
  copies = []
  for layer in model.submodules:
    if not _packs(layer):
      continue
    packed, scales = pack(layer.embeddings.numpy())
    # object.__setattr__ below: Keras tracking must not see the copy (the
    # model's weights stay as they are).
    packed = tf.Variable(packed, trainable=False, name="packed_word_table")
    scales = tf.Variable(scales, trainable=False, name="packed_word_scales")
    layer_calls.swap(layer, _packed_call(layer, packed, scales), swapped)
    copies += [packed, scales]
  try:
    yield copies
  finally:
    layer_calls.restore(swapped)
