"""Errors of the data contract, and the pieces their messages are made of.

A file that breaks the data contract (`user_dataset`'s docstring) raises
`DataError`, whose message is one paragraph: the file and the line, what was
found there, what was expected, and how to fix it. Files go through
`tf.io.gfile`, as everywhere in the package: a dataset may be on any file
system TensorFlow reads (a local disk, gs://).
"""

import os
from typing import Any

import tensorflow as tf

# Characters of a value quoted in a message, and entries of a directory listed.
MAX_SHOWN = 80
_MAX_LISTED = 30


class DataError(ValueError):
  """A dataset breaks the data contract of `mixvocab_tf.datasets`.

  The message is one paragraph: the file (and the 1-based line, when there is
  one), what was found, what is expected, and how to fix it. `path` and `line`
  hold the place for programs (`line` is None for a whole file or directory).
  """

  def __init__(self, message: str, path: str | None = None,
               line: int | None = None):
    super().__init__(message)
    self.path = path
    self.line = line


def data_error(path: str, line: int | None, found: str, expected: str,
               fix: str | None = None) -> DataError:
  """A `DataError`: '<path>, line <n>: <found>. Expected <expected>. <fix>'."""
  where = path if line is None else f"{path}, line {line}"
  message = f"{where}: {found}. Expected {expected}."
  if fix:
    message += f" {fix}"
  # One paragraph, whatever the values quoted.
  message = message.replace("\r", "\\r").replace("\n", "\\n")
  return DataError(message, path=path, line=line)


def show(value: Any, limit: int = MAX_SHOWN) -> str:
  """`repr(value)`, cut to `limit` characters."""
  text = repr(value)
  return text if len(text) <= limit else text[:limit - 3] + "..."


def plural(count: int, noun: str) -> str:
  """'1 word', '2 words'."""
  return f"{count} {noun}" + ("" if count == 1 else "s")


def json_type(value: Any) -> str:
  """The JSON name of a decoded value's type ('array', 'number', ...)."""
  if value is None:
    return "null"
  if isinstance(value, bool):
    return "boolean"
  if isinstance(value, (int, float)):
    return "number"
  if isinstance(value, str):
    return "string"
  if isinstance(value, list):
    return "array"
  return "object"


def isfile(path: str) -> bool:
  return tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path)


def listdir(directory: str) -> list[str]:
  # Object stores list sub-directories with a trailing '/'.
  return [name.rstrip("/") for name in tf.io.gfile.listdir(directory)]


def list_directory(directory: str) -> str:
  """'a.csv, b/' (directories end in '/'), or 'nothing'."""
  try:
    names = sorted(listdir(directory))
  except (OSError, tf.errors.OpError):
    return "nothing readable"
  if not names:
    return "nothing"
  shown = [
      name + "/" if tf.io.gfile.isdir(os.path.join(directory, name)) else name
      for name in names[:_MAX_LISTED]
  ]
  if len(names) > _MAX_LISTED:
    shown.append(f"and {len(names) - _MAX_LISTED} more")
  return ", ".join(shown)
