"""Tests for the analytic FLOPs: counted against the encoder's own graph."""

import numpy as np
import pytest
import tensorflow as tf

from mixvocab_tf import networks
from mixvocab_tf.core import flops


def _graph_macs(function, scope):
  """Multiply-adds of the matmuls and einsums under `scope` in a traced
  function with static shapes."""
  total = 0
  for op in function.graph.get_operations():
    if scope not in op.name:
      continue
    if op.type == "Einsum":
      inputs, _ = op.get_attr("equation").decode().split("->")
      sizes = {}
      for letters, tensor in zip(inputs.split(","), op.inputs):
        sizes.update(zip(letters, tensor.shape.as_list()))
      total += int(np.prod(list(sizes.values())))
    elif op.type in ("MatMul", "BatchMatMulV2"):
      a = op.inputs[0].shape.as_list()
      transposed = op.get_attr("transpose_a" if op.type == "MatMul" else
                               "adj_x")
      contracted = a[-2] if transposed else a[-1]
      total += int(np.prod(op.outputs[0].shape.as_list())) * contracted
  return total


@pytest.mark.parametrize("layers,hidden,heads,tokens", [
    (2, 32, 4, 7), (1, 96, 4, 20), (3, 48, 2, 1)])
def test_encoder_macs_counts_the_encoder_layers(layers, hidden, heads,
                                                tokens):
  encoder = networks.build_student_encoder(
      None, vocab_size=100, num_layers=layers, hidden_size=hidden,
      num_attention_heads=heads)
  spec = {name: tf.TensorSpec([1, tokens], tf.int32) for name in (
      "input_word_ids", "input_mask", "input_type_ids")}
  function = tf.function(encoder, autograph=False).get_concrete_function(spec)
  counted = _graph_macs(function, "/transformer/")
  assert counted > 0
  assert flops.encoder_macs(layers, hidden, 4 * hidden, tokens) == counted


def test_train_flops_is_three_forward_passes_of_the_encoder_and_heads():
  encoder = flops.encoder_macs(6, 96, 384, 128)
  heads = 20 * (96 * 96 + 96 * 30522)
  assert flops.bert_train_flops(6, 96, 384, 128, 64, 20, [(96, 30522)]) == (
      6 * 64 * (encoder + heads))
  assert flops.bert_train_flops(
      6, 96, 384, 128, 64, 20, [], extra_token_macs=5) == (
          6 * 64 * (encoder + 128 * 5))
