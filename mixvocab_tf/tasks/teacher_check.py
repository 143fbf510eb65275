"""A pretrained BERT given as a task's teacher, checked before it trains.

The own-data job fine-tunes the package's default teacher (all-MiniLM-L6-v2)
unless it is given another one (`TEACHER`): a Hugging Face BERT directory
(`config.json`, `model.safetensors`, `vocab.txt`) or a google-research/bert
one (`bert_config.json`, `bert_model.ckpt.*`, `vocab.txt`), e.g. BERT-base,
or a BERT already fine-tuned on the user's domain. `check_teacher` reads it
the way the teacher's fine-tuning will (config, vocabulary, every weight into
an encoder) and stops with the path and the fix on what that fine-tuning, or
the task distillation after it, could not use, so that nothing trains first.
"""

import dataclasses
import json
import os
from typing import Optional

import tensorflow as tf

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import flops
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.models import teacher_loader
from mixvocab_tf.tasks import teacher_spec

#: The default teacher's dimensions (all-MiniLM-L6-v2), against which
#: another teacher's arithmetic per token is told (`flops.encoder_macs`).
DEFAULT_DIMENSIONS = {"layers": 6, "hidden": 384, "inner": 1536}

#: More than this share of a vocabulary's words with capitals: a cased
#: vocabulary (bert-base-cased: 'The', 'London'; an uncased one has none).
CASED_SHARE = 0.01

_GENERIC_NAMES = ("model", "checkpoint", "weights", "best", "final")

_LAYOUTS = ("a Hugging Face BERT directory (config.json, model.safetensors, "
            "vocab.txt) or a google-research/bert one (bert_config.json, "
            "bert_model.ckpt.*, vocab.txt)")


@dataclasses.dataclass(frozen=True)
class Teacher:
  """A checked teacher.

  Attributes:
    path: its absolute path.
    name: what reports call it: its directory's name (a config's
      `_name_or_path` names the model a fine-tuned one started from).
    format: 'huggingface' or 'google'.
    num_layers, hidden_size: its dimensions.
    parameters: its encoder's parameter count.
    cost: its multiply-adds per token over the default teacher's.
  """
  path: str
  name: str
  format: str
  num_layers: int
  hidden_size: int
  parameters: int
  cost: float

  def describe(self) -> str:
    return (f"{self.name} ({self.num_layers}x{self.hidden_size}, "
            f"{self.parameters / 1e6:.1f}M parameters)")


def _name(path: str) -> str:
  """The directory's name (its parent's too when it is a generic one)."""
  parent, name = os.path.split(os.path.normpath(path))
  if name.lower() in _GENERIC_NAMES and os.path.basename(parent):
    return f"{os.path.basename(parent)}/{name}"
  return name


def _lowercases(directory: str, tokens) -> Optional[str]:
  """None, or why the teacher's vocabulary reads cased text."""
  config = os.path.join(directory, "tokenizer_config.json")
  if tf.io.gfile.exists(config):
    with tf.io.gfile.GFile(config) as f:
      if json.load(f).get("do_lower_case") is False:
        return f"{config} says do_lower_case false"
  words = [t.removeprefix("##") for t in tokens
           if not (t.startswith("[") and t.endswith("]"))]
  cased = [w for w in words if w.lower() != w]
  if len(cased) > CASED_SHARE * max(1, len(words)):
    return (f"{len(cased):,} of its {len(words):,} tokens have capitals "
            f"(e.g. {', '.join(repr(w) for w in cased[:3])})")
  return None


def check_teacher(path: str, min_positions: int = 128,
                  what: str = "TEACHER") -> Teacher:
  """Reads the teacher at `path` as its fine-tuning will, or says why not.

  Args:
    path: a Hugging Face or google-research/bert BERT directory.
    min_positions: the longest sequence the job gives it.
    what: the setting that named it, for messages.

  Returns:
    The `Teacher`.

  Raises:
    FileNotFoundError: `path` or its vocab.txt does not exist.
    ValueError: it is not a BERT the package can load (format, config,
      weights), its vocabulary does not fit its config or reads cased text,
      or it has fewer positions than `min_positions`.
  """
  path = os.path.abspath(os.fspath(path))
  head = f"{what} = {path!r}"
  if not tf.io.gfile.exists(path):
    raise FileNotFoundError(
        f"{head} does not exist; give {_LAYOUTS}, or None for the default "
        "teacher.")
  # A run of this package (or an own-data job, whose teacher is one) given
  # for the BERT it tuned.
  for run in (path, os.path.join(path, "teacher")):
    if tf.io.gfile.exists(os.path.join(run, trainer_lib.OPERATIVE_CONFIG)):
      raise ValueError(
          f"{head} is a {'run' if run == path else 'job'} of this package, "
          "not a BERT directory: write the BERT its teacher tuned with "
          f"`mixvocab-export --model_dir={run} --bert --export_dir=DIR` and "
          "give DIR.")
  try:
    checkpoint_format, config = teacher_loader.read_bert_config(path)
  except (ValueError, FileNotFoundError) as e:
    raise ValueError(f"{head} is not a BERT the package can load: {e} "
                     f"Give {_LAYOUTS}.") from e
  vocab_path = teacher_spec.vocab_beside(path)
  if not tf.io.gfile.exists(vocab_path):
    fast = os.path.join(os.path.dirname(vocab_path), "tokenizer.json")
    raise FileNotFoundError(
        f"{head} has no vocab.txt beside its weights ({vocab_path}): the "
        "teacher tokenizes with its own WordPiece vocabulary. " + (
            "Its tokenizer.json holds it: `python -c \"import json; v = "
            "json.load(open('tokenizer.json'))['model']['vocab']; "
            "open('vocab.txt', 'w').write(''.join(t + chr(10) for t in "
            "sorted(v, key=v.get)))\"` in that directory writes it."
            if tf.io.gfile.exists(fast) else
            "Copy it there (a Hugging Face model keeps it with its "
            "tokenizer files)."))
  try:
    tokens = text_lib.load_vocab(vocab_path)
  except ValueError as e:
    raise ValueError(f"{head}: its vocabulary cannot be read: {e}") from e
  if len(tokens) != config["vocab_size"]:
    raise ValueError(
        f"{head}: vocab.txt has {len(tokens):,} tokens but its config "
        f"{config['vocab_size']:,} (vocab_size): give the vocabulary the "
        "model was trained with.")
  cased = _lowercases(os.path.dirname(vocab_path), tokens)
  if cased:
    raise ValueError(
        f"{head} is a cased model: {cased}. The package lowercases every "
        "text before WordPiece, as uncased BERTs read it, so a cased "
        "teacher would see words it was not trained on. Give an uncased "
        "model (e.g. bert-base-uncased).")
  if config["max_sequence_length"] < min_positions:
    raise ValueError(
        f"{head} has {config['max_sequence_length']} positions "
        f"(max_position_embeddings); the job gives its teacher sequences of "
        f"up to {min_positions}.")
  try:
    encoder = teacher_loader.load_bert_encoder(path)
  except ValueError as e:
    raise ValueError(f"{head}: its weights do not make the BERT its config "
                     f"describes: {e}") from e
  parameters = encoder.count_params()
  del encoder
  return Teacher(
      path=path, name=_name(path), format=checkpoint_format,
      num_layers=config["num_layers"], hidden_size=config["hidden_size"],
      parameters=parameters,
      cost=flops.encoder_macs(config["num_layers"], config["hidden_size"],
                              config["inner_dim"], tokens=1) /
      flops.encoder_macs(**DEFAULT_DIMENSIONS, tokens=1))
