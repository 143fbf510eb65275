"""The shapes that the string-in serving signatures take, checked in the graph.

Every export module of the package (SNIPS, GLUE, the bare encoder, a task's
own) serves raw text through signatures built on this module, so the contract
is written once (docs/SERVING.md, "Serving contract"; docs/RELIABILITY.md):

- Each string input is a `tf.string` tensor of shape [batch], one string per
  example; a pair model's two inputs have the same batch. A single string is
  a batch of one (`["play some jazz"]`).
- An empty batch ([0]) gives empty outputs (batch dimension 0).
- In TensorFlow (the SavedModel's signatures, `TFSMLayer`), any other shape
  (a scalar, [1, 2], pair inputs of different lengths) is refused with an
  `InvalidArgumentError` that names the inputs, the shapes received and the
  shape expected.
- The .tflite cannot raise (TFLite has no Assert op; the converter drops
  it). Its graph reads the input's size at run time: a scalar is a batch of
  one and an [n, m] array the batch of its n*m strings in row-major order,
  so it never reads past its input; a pair of unequal batches is served on
  the shorter one. `tflite_conversion.TFLiteRunner` refuses
  those shapes with the SavedModel's message before running the model, and
  answers an empty batch with empty outputs (LiteRT's Python interpreter
  cannot take an empty string tensor: "Invalid tensor size.").
  LiteRT's Python signature runner also misreads a 0-d object or str array
  (measured: the model receives 8 bytes, or the UCS-4 bytes, whatever the
  string; a 0-d bytes array, dtype "S", arrives intact), so a raw
  interpreter's caller passes 1-d arrays.

Why the signatures declare unknown rank rather than [None]: with a static
[None] spec, TensorFlow knows the input is a vector, removes the flattening
reshape as a no-op, and a scalar fed to the loaded signature (whose calls are
not checked against the spec) reached the tokenizer kernels as a scalar: a
strided_slice error, then a segmentation fault of the process (issue 17).
"""

import tensorflow as tf


def text_spec(name):
  """The input spec of a string-in signature: any rank, checked at run time."""
  return tf.TensorSpec(None, tf.string, name=name)


def expected_shapes(names):
  """The contract's sentence for the inputs `names`, as error messages give it.
  """
  if len(names) == 1:
    return (f"the serving signature takes `{names[0]}` as a string tensor of "
            "shape [batch], one string per example (e.g. "
            "tf.constant([\"play some jazz\"]) for one; an empty batch gives "
            "empty outputs)")
  quoted = " and ".join(f"`{name}`" for name in names)
  return (f"the serving signature takes {quoted} as string tensors of shape "
          "[batch], one string per example and the same batch for each (an "
          "empty batch gives empty outputs)")


# Plain graph code (no tensor-dependent Python control flow), not converted
# by autograph.
@tf.autograph.experimental.do_not_convert
def check_text_batch(texts, names):
  """Checks the string inputs of a serving signature and flattens them.

  In TensorFlow a shape other than [batch] (or unequal batches of a pair)
  raises `tf.errors.InvalidArgumentError`; the message names the shapes
  received and `expected_shapes(names)`. The checks run before any op reads
  the text. The flattening reshape uses the input's run-time size (the
  input's rank is unknown when the signature is traced), which is what the
  .tflite, whose converter drops the checks, computes on.

  Args:
    texts: the signature's string tensors, in the order of `names`.
    names: their input names.

  Returns:
    The texts as rank-1 string tensors (static shape [None]).
  """
  texts = list(texts)
  shapes = [tf.shape(text, out_type=tf.int32) for text in texts]
  ok = tf.reduce_all(tf.stack([tf.equal(tf.size(s), 1) for s in shapes]))
  if len(texts) > 1:
    sizes = tf.stack([tf.size(text, out_type=tf.int32) for text in texts])
    ok = tf.logical_and(ok, tf.reduce_all(tf.equal(sizes, sizes[0])))
  data = [f"Bad serving input: {expected_shapes(names)}; received shapes"]
  for name, shape in zip(names, shapes):
    data += [f"{name}:", shape]
  data.append("(a shape [] is a single string: wrap it in a list; flatten an "
              "[n, m] array first).")
  check = tf.debugging.Assert(ok, data, summarize=8, name="serving_contract")
  with tf.control_dependencies([check]):
    texts = [tf.reshape(text, tf.reshape(tf.size(text, out_type=tf.int32),
                                         [1]))
             for text in texts]
  if len(texts) > 1:
    # Only the .tflite (no check) gets here with unequal batches: it serves
    # the shorter one (GATHER takes strings in TFLite).
    batch = tf.reduce_min(tf.stack([tf.size(text, out_type=tf.int32)
                                    for text in texts]))
    texts = [tf.gather(text, tf.range(batch)) for text in texts]
  return texts


def new_trace(function):
  """A concrete function of `function` (a `tf.function` with an input
  signature) traced now, not taken from its cache.

  Export modules' `signatures()` return these, so that signatures traced
  again read what the exporter swapped in meanwhile (the 4-bit word table
  of the TFLite signatures, `packed_embedding`).
  """
  return tf.function(function.python_function,
                     input_signature=function.input_signature
                     ).get_concrete_function()
