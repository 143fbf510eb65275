"""The in-graph checks of the serving contract, on a signature without a model.

No tokenizer kernel runs here, so nothing can crash the process; the end to
end checks on exported models (in child processes) are in
tests/test_serving_contract.py.
"""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf.export import serving_contract


@tf.function(input_signature=[serving_contract.text_spec("text")])
def _lengths(text):
  (text,) = serving_contract.check_text_batch([text], ["text"])
  return tf.strings.length(text)


@tf.function(input_signature=[serving_contract.text_spec("sentence_a"),
                              serving_contract.text_spec("sentence_b")])
def _pair(sentence_a, sentence_b):
  a, b = serving_contract.check_text_batch([sentence_a, sentence_b],
                                           ["sentence_a", "sentence_b"])
  return tf.strings.length(a) + tf.strings.length(b)


def test_a_batch_is_served_and_an_empty_one_gives_empty_outputs():
  np.testing.assert_array_equal(_lengths(tf.constant(["ab", "c"])), [2, 1])
  assert _lengths(tf.constant([], tf.string)).shape == (0,)
  assert _pair(tf.constant([], tf.string),
               tf.constant([], tf.string)).shape == (0,)


def test_the_signature_accepts_any_rank_and_checks_it_in_the_graph():
  spec = _lengths.get_concrete_function().structured_input_signature[0][0]
  assert spec.shape.rank is None
  # The flattened text is a vector for the ops after the check.
  graph = _lengths.get_concrete_function().graph
  assert any(op.type == "Assert" for op in graph.get_operations())


@pytest.mark.parametrize("text,received", [
    ("play jazz", r"\[text:\] \[\]"),
    ([["play some", "jazz now"]], r"\[text:\] \[1 2\]")])
def test_other_shapes_are_refused_naming_the_expected_one(text, received):
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"takes `text` as a string tensor of shape "
                     r"\[batch\], one string per example(.|\n)*" + received):
    _lengths(tf.constant(text))


def test_pairs_need_the_same_batch():
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"the same batch for each(.|\n)*"
                     r"\[sentence_a:\] \[2\] \[sentence_b:\] \[1\]"):
    _pair(tf.constant(["a", "b"]), tf.constant(["c"]))
  with pytest.raises(tf.errors.InvalidArgumentError, match="the same batch"):
    _pair(tf.constant("a"), tf.constant("c"))


def test_expected_shapes_names_every_input():
  assert "`text` as a string tensor of shape [batch]" in (
      serving_contract.expected_shapes(["text"]))
  assert "`sentence_a` and `sentence_b` as string tensors" in (
      serving_contract.expected_shapes(["sentence_a", "sentence_b"]))
