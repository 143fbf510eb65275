"""Tests for the student presets."""

import pytest

from mixvocab_tf.networks import plain_bert_encoder
from mixvocab_tf.networks import student_encoder


@pytest.mark.parametrize("preset", sorted(student_encoder.STUDENT_PRESETS))
def test_preset_parameter_counts_are_within_5_percent_of_the_paper(preset):
  encoder = student_encoder.build_student_encoder(preset, vocab_size=4928)
  assert isinstance(encoder, plain_bert_encoder.PlainBertEncoder)
  count = encoder.count_params()
  paper = student_encoder.PAPER_PARAMETER_COUNTS[preset]
  assert abs(count / paper - 1) < 0.05, (preset, count, paper)


def test_preset_sizes_and_overrides():
  config = student_encoder.student_encoder_config(
      "L12-H256", vocab_size=100, max_sequence_length=64)
  assert (config["num_layers"], config["hidden_size"],
          config["num_attention_heads"], config["inner_dim"],
          config["max_sequence_length"]) == (12, 256, 4, 1024, 64)
  custom = student_encoder.student_encoder_config(
      None, vocab_size=100, num_layers=2, hidden_size=32)
  assert custom["inner_dim"] == 128


def test_errors_name_what_was_received():
  with pytest.raises(ValueError, match="received 'L3-H7'"):
    student_encoder.student_encoder_config("L3-H7")
  with pytest.raises(ValueError, match="hidden_size must be given"):
    student_encoder.student_encoder_config(None, num_layers=2)
  with pytest.raises(ValueError, match="received 30 and 4"):
    student_encoder.student_encoder_config(None, num_layers=2, hidden_size=30)


def test_the_default_is_the_papers_size_not_the_shipped_vocabularys():
  """As the docstrings and README say: the builders default to the paper's
  4,928 tokens; the shipped vocabulary has 4,929, so its students are built
  with `len(load_vocab(...))`."""
  from mixvocab_tf import assets  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.text import vocab  # pylint: disable=g-import-not-at-top
  assert student_encoder.PAPER_STUDENT_VOCAB_SIZE == 4928
  assert student_encoder.student_encoder_config("L6-H96")["vocab_size"] == 4928
  assert len(vocab.load_vocab(assets.default_student_vocab())) == 4929
