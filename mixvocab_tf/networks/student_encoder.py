"""The student: a small BERT encoder, with the paper's size presets.

Zhao et al., "Extremely Small BERT Models from Mixed-Vocabulary Training" (EACL
2021), Section 4, distil into students of 6 or 12 layers and hidden
size 96 to 256 over a 4,928-token WordPiece vocabulary, reported as 1.2M, 3.6M,
6.2M and 10.9M parameters. The student is the stock
`official.nlp.modeling.networks.BertEncoderV2` (as `PlainBertEncoder`, which
creates its weights at construction); this module only names its sizes.
With 4 heads, a feed-forward width of 4x hidden and 512 positions the presets
count 1.20M, 3.75M, 6.20M and 10.94M parameters (embeddings, layers and pooler),
within 5% of the paper's numbers.
"""

import tf_keras

from mixvocab_tf.networks import plain_bert_encoder

#: The paper's student vocabulary size: the default of the builders below.
#: The shipped student vocabulary (`data.default_student_vocab()`) has
#: 4,929 tokens: give a vocabulary's own size, `len(load_vocab(path))`.
PAPER_STUDENT_VOCAB_SIZE = 4928

#: Preset name -> (num_layers, hidden_size). Heads and widths follow below.
STUDENT_PRESETS = {
    "L6-H96": dict(num_layers=6, hidden_size=96),
    "L6-H192": dict(num_layers=6, hidden_size=192),
    "L6-H256": dict(num_layers=6, hidden_size=256),
    "L12-H256": dict(num_layers=12, hidden_size=256),
}

#: Parameter counts reported by the paper for the presets.
PAPER_PARAMETER_COUNTS = {
    "L6-H96": 1.2e6,
    "L6-H192": 3.6e6,
    "L6-H256": 6.2e6,
    "L12-H256": 10.9e6,
}


def student_encoder_config(preset=None, vocab_size=PAPER_STUDENT_VOCAB_SIZE,
                           **overrides):
  """Keyword arguments of `BertEncoderV2` for a student.

  Args:
    preset: One of `STUDENT_PRESETS`, or None to give every size in `overrides`.
    vocab_size: Size of the student vocabulary (default: the paper's 4,928;
      the shipped vocabulary has 4,929, `len(load_vocab(path))` of yours).
    **overrides: Any `BertEncoderV2` argument (num_layers, hidden_size,
      num_attention_heads, inner_dim, max_sequence_length, inner_activation,
      output_dropout, ...), applied over the preset.

  Returns:
    A dict for `PlainBertEncoder(**config)` or `BertEncoderV2(**config)`.
  """
  if preset is not None and preset not in STUDENT_PRESETS:
    raise ValueError(f"preset must be one of {sorted(STUDENT_PRESETS)} or None; "
                     f"received {preset!r}.")
  config = dict(
      vocab_size=vocab_size,
      num_layers=None,
      hidden_size=None,
      num_attention_heads=4,
      inner_dim=None,
      max_sequence_length=512,
      type_vocab_size=2,
      # Exact GELU, as the Hugging Face teacher; keeps one activation across
      # teacher and student.
      inner_activation="gelu",
      output_dropout=0.1,
      attention_dropout=0.1,
      initializer=tf_keras.initializers.TruncatedNormal(stddev=0.02),
  )
  if preset is not None:
    config.update(STUDENT_PRESETS[preset])
  config.update(overrides)
  for key in ("num_layers", "hidden_size"):
    if not config[key]:
      raise ValueError(f"{key} must be given when preset is None; received "
                       f"{config[key]!r}.")
  if config["inner_dim"] is None:
    config["inner_dim"] = 4 * config["hidden_size"]
  if config["hidden_size"] % config["num_attention_heads"]:
    raise ValueError(
        "hidden_size must be divisible by num_attention_heads; received "
        f"{config['hidden_size']} and {config['num_attention_heads']}.")
  return config


def build_student_encoder(preset=None, vocab_size=PAPER_STUDENT_VOCAB_SIZE,
                          **overrides):
  """A student `PlainBertEncoder`; see `student_encoder_config` for arguments.

  Example:
  ```python
  encoder = build_student_encoder("L6-H96", vocab_size=4928)
  outputs = encoder(dict(input_word_ids=ids, input_mask=mask,
                         input_type_ids=types))
  ```

  Extra features in the input dict (such as `input_vocab_ids`) are ignored, so the
  student reads the same feature dict as the teacher.
  """
  return plain_bert_encoder.PlainBertEncoder(
      **student_encoder_config(preset, vocab_size, **overrides))
