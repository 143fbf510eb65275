"""Reads the student table that stage I trained, for stage II to start from.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 3: stage II initializes the student's word embeddings with the
student-vocabulary table the teacher learned in stage I (and may reuse the
up-projection). In a `tf.train.Checkpoint` a variable is stored once, under the
first object path that reaches it, and the student table is reachable both from
the encoder's `DualVocabEmbedding` and from the tied student MLM head; which one
names it depends on how the task wrapped the model. This reader accepts either.
"""

import tensorflow as tf

_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"
_STUDENT_TABLE_SUFFIXES = ("_student_embedding_layer/embeddings" + _VALUE,
                           "student_masked_lm/embedding_table" + _VALUE)
_UP_KERNEL_SUFFIX = "_embedding_layer/_up_projection/kernel" + _VALUE
_UP_BIAS_SUFFIX = "_embedding_layer/_up_projection/bias" + _VALUE


def _find(names, suffixes, what, path):
  found = [n for n in names if n.endswith(suffixes)
           and ".OPTIMIZER_SLOT" not in n]
  if len(found) > 1:
    raise ValueError(f"{path} holds {len(found)} candidates for the {what}: "
                     f"{found}; expected one.")
  return found[0] if found else None


def read_student_embeddings(checkpoint_path):
  """The stage I student table and up-projection from an object checkpoint.

  Args:
    checkpoint_path: A checkpoint prefix or a directory (its latest checkpoint)
      written by `tf.train.Checkpoint` around a `DualVocabPretrainer` or
      `DualVocabBertEncoder` (under any attribute names).

  Returns:
    A dict of NumPy arrays: `student_embeddings` [V_s, d_s],
    `up_projection_kernel` [d_s, d_t] and `up_projection_bias` [d_t] (the last
    two absent if the checkpoint has no up-projection).
  """
  path = checkpoint_path
  if tf.io.gfile.isdir(path):
    path = tf.train.latest_checkpoint(path)
    if path is None:
      raise ValueError(f"No checkpoint in {checkpoint_path}.")
  reader = tf.train.load_checkpoint(path)
  names = list(reader.get_variable_to_shape_map())
  table = _find(names, _STUDENT_TABLE_SUFFIXES, "student table", path)
  if table is None:
    raise ValueError(f"{path} has no student table (a variable ending in one "
                     f"of {_STUDENT_TABLE_SUFFIXES}); is it a stage I "
                     "checkpoint?")
  out = {"student_embeddings": reader.get_tensor(table)}
  kernel = _find(names, (_UP_KERNEL_SUFFIX,), "up-projection kernel", path)
  bias = _find(names, (_UP_BIAS_SUFFIX,), "up-projection bias", path)
  if kernel is not None:
    out["up_projection_kernel"] = reader.get_tensor(kernel)
  if bias is not None:
    out["up_projection_bias"] = reader.get_tensor(bias)
  return out
