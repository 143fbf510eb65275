"""Analytic FLOPs of a BERT masked-LM training step.

Used by `bench/train_step_bench.py` (achieved FLOP/s against the matmul peak)
and by the scaling study (`jobs/scaling.py`), which gives NoKD the FLOPs of
stage I as extra steps.
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
  per_token = layers * (4 * hidden * hidden + 2 * hidden * inner +
                        2 * seq_length * hidden) + extra_token_macs
  macs = batch * seq_length * per_token
  for width, vocab in vocab_heads:
    macs += batch * predictions * (hidden * width + width * vocab)
  return 3 * 2 * macs
