"""Analytic FLOPs of a BERT masked-LM training step and of an encoder's pass.

Used by `bench/train_step_bench.py` (achieved FLOP/s against the matmul peak),
by `bench/tflite_bench.py` (the multiply-adds of a served query, beside its
latency) and by the scaling study (`jobs/scaling.py`), which gives NoKD the
FLOPs of stage I as extra steps.
"""

from typing import Sequence, Tuple


def bert_train_flops(layers: int, hidden: int, inner: int, seq_length: int,
                     batch: int, predictions: int,
                     vocab_heads: Sequence[Tuple[int, int]],
                     extra_token_macs: int = 0) -> int:
  """FLOPs of one training step of a BERT with masked-LM heads.

  Per token and layer: Q, K, V, output projections (4 d^2), feed-forward
  (2 d inner), scores and weighted sum (2 L d). Per masked position and head:
  transform (d x width) and output (width x vocab). A training step is taken
  as 3x the forward pass, 2 FLOPs per multiply-add.

  Args:
    layers, hidden, inner: encoder sizes.
    seq_length, batch: tokens per sequence, sequences per step.
    predictions: masked positions per sequence.
    vocab_heads: (width, vocabulary size) of each MLM output head.
    extra_token_macs: further multiply-adds per token (e.g. an up-projection).
  """
  macs = batch * (encoder_macs(layers, hidden, inner, seq_length) +
                  seq_length * extra_token_macs)
  for width, vocab in vocab_heads:
    macs += batch * predictions * (hidden * width + width * vocab)
  return 3 * 2 * macs


def encoder_macs(layers: int, hidden: int, inner: int, tokens: int) -> int:
  """Multiply-adds of an encoder's layers on one sequence of `tokens`.

  Per token and layer, as in `bert_train_flops`: the Q, K, V and output
  projections (4 d^2), the feed-forward (2 d inner), the scores and the
  weighted sum (2 tokens d). Embedding lookups and task heads are left out.
  """
  return tokens * layers * (4 * hidden * hidden + 2 * hidden * inner +
                            2 * tokens * hidden)
