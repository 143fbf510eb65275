"""Tests for the packer's ragged helpers (packing itself: pretraining_input_test)."""

import hypothesis
from hypothesis import strategies as st
import numpy as np
import tensorflow as tf

from mixvocab_tf.text import packing


def _row_ids(lengths):
  ragged = tf.RaggedTensor.from_row_lengths(
      tf.zeros([sum(lengths)], tf.int32), tf.constant(lengths, tf.int64))
  splits = tf.cast(ragged.row_splits, tf.int32)
  return packing.row_ids(splits, splits[-1]), ragged.value_rowids()


def test_row_ids_match_value_rowids_with_empty_rows():
  got, want = _row_ids([0, 2, 0, 0, 1, 0])
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(got, [1, 1, 4])


def test_row_ids_of_no_rows_and_no_values():
  for lengths in ([], [0], [0, 0, 0]):
    got, want = _row_ids(lengths)
    assert got.shape == [0]
    np.testing.assert_array_equal(got, want)


@hypothesis.settings(max_examples=50, deadline=None)
@hypothesis.given(st.lists(st.integers(0, 6), max_size=30))
def test_row_ids_match_value_rowids(lengths):
  got, want = _row_ids(lengths)
  np.testing.assert_array_equal(got, want)
