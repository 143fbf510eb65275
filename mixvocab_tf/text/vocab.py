"""WordPiece vocabularies at run time: loading, writing, fingerprinting.

The student vocabulary of Zhao et al., "Extremely Small BERT Models from
Mixed-Vocabulary Training" (EACL 2021), Section 3, and the teacher's are
plain vocab.txt files; every stage reads them through `load_vocab`, which
checks them (UTF-8, no blank, duplicate or whitespace token, the special
tokens present), and checkpoints record their `vocab_fingerprint` so that a
run never resumes or fine-tunes with another vocabulary. Learning a student
vocabulary is offline work and lives in `vocab_learning`.

A vocabulary is a list of tokens whose ids are their positions (the line
numbers of a vocab.txt file, from 0).
"""

import hashlib
import os
from typing import Sequence, Union

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP, MASK)
SUFFIX_INDICATOR = "##"

PathOrTokens = Union[str, os.PathLike, Sequence[str]]


def _read_vocab_file(path) -> list[str]:
  if not os.path.isfile(path):
    raise FileNotFoundError(f"Vocabulary file not found: {path}")
  with open(path, "rb") as f:
    data = f.read()
  try:
    text = data.decode("utf-8")
  except UnicodeDecodeError as e:
    line = data[:e.start].count(b"\n") + 1
    raise ValueError(
        f"Vocabulary file {path} is not UTF-8: byte {data[e.start]:#04x} at "
        f"offset {e.start} (line {line}).") from e
  if not text.strip():
    raise ValueError(f"Vocabulary file {path} is empty.")
  lines = text.split("\n")
  if lines[-1] == "":  # The newline that ends the last line.
    lines.pop()
  # Files written on Windows: the \r is no part of the token.
  return [l[:-1] if l.endswith("\r") else l for l in lines]


def load_vocab(path_or_tokens: PathOrTokens,
               required_tokens: Sequence[str] = SPECIAL_TOKENS) -> list[str]:
  """Reads and checks a vocabulary; token ids are line numbers from 0.

  Args:
    path_or_tokens: a vocab.txt path (one token per line, UTF-8) or a sequence
      of tokens.
    required_tokens: tokens that must be present (anywhere).

  Returns:
    The tokens, in id order.

  Raises:
    FileNotFoundError: the file does not exist.
    ValueError: the file is not UTF-8 or is empty; a token is blank, holds
      whitespace or appears twice; a required token is missing.
  """
  if isinstance(path_or_tokens, (str, os.PathLike)):
    source = os.fspath(path_or_tokens)
    tokens = _read_vocab_file(source)
  else:
    source = "the token list"
    tokens = list(path_or_tokens)
    bad = [t for t in tokens if not isinstance(t, str)]
    if bad:
      raise ValueError(f"Vocabulary tokens must be str; received {bad[0]!r} "
                       f"of type {type(bad[0]).__name__}.")
    if not tokens:
      raise ValueError("Vocabulary is empty; expected at least the special "
                       f"tokens {list(required_tokens)}.")
  first_id = {}
  for i, token in enumerate(tokens):
    if not token.strip():
      raise ValueError(f"Blank token at id {i} (line {i + 1}) of {source}.")
    if token != token.strip() or len(token.split()) != 1:
      raise ValueError(f"Token {token!r} at id {i} (line {i + 1}) of {source} "
                       "contains whitespace.")
    if token in first_id:
      raise ValueError(
          f"Duplicate token {token!r} in {source}: ids {first_id[token]} and "
          f"{i} (lines {first_id[token] + 1} and {i + 1}).")
    first_id[token] = i
  missing = [t for t in required_tokens if t not in first_id]
  if missing:
    raise ValueError(f"{source} lacks the required tokens {missing}; expected "
                     f"all of {list(required_tokens)}.")
  return tokens


def write_vocab(tokens: Sequence[str], path) -> None:
  """Writes one token per line; `vocab_fingerprint` equals the file's sha256."""
  tokens = load_vocab(tokens, required_tokens=())
  directory = os.path.dirname(os.fspath(path))
  if directory:
    os.makedirs(directory, exist_ok=True)
  with open(path, "w", encoding="utf-8", newline="\n") as f:
    f.write("\n".join(tokens) + "\n")


def vocab_fingerprint(tokens: Sequence[str]) -> str:
  """SHA-256 (hex) of the tokens joined by newlines, with a final newline.

  That is the byte content `write_vocab` produces, so the fingerprint of a
  vocabulary equals `sha256sum vocab.txt`; checkpoints record it to refuse a
  vocabulary they were not trained with.
  """
  return hashlib.sha256(
      ("\n".join(tokens) + "\n").encode("utf-8")).hexdigest()
