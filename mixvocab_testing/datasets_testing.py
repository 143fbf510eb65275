"""Helpers of the data layer's tests: files of a dataset, and its errors."""

import json
import os

import pytest

from mixvocab_tf.datasets.errors import DataError


def write(path, content):
  """Writes str (as UTF-8, newlines as given) or bytes to `path`."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  data = content.encode("utf-8") if isinstance(content, str) else content
  with open(path, "wb") as f:
    f.write(data)
  return str(path)


def write_jsonl(path, objects):
  return write(path, "".join(json.dumps(o) + "\n" for o in objects))


def write_goo(directory, seq_in, seq_out=None, label=None):
  """Writes a Goo et al. split directory; None leaves a file out."""
  files = {"seq.in": seq_in, "seq.out": seq_out, "label": label}
  for name, lines in files.items():
    if lines is not None:
      write(os.path.join(directory, name), "".join(l + "\n" for l in lines))
  return str(directory)


def raises(match, function, *args, **kwargs):
  """Calls `function`, expects a one-paragraph DataError; returns it."""
  with pytest.raises(DataError, match=match) as info:
    function(*args, **kwargs)
  assert "\n" not in str(info.value)
  return info.value



CSV = "text,label\ngood film,pos\nbad film,neg\n"
GOO_TRAIN = dict(
    seq_in=["play jazz", "book a table", "play  some rock"],
    seq_out=["O B-genre", "O O O", "O O B-genre"],
    label=["PlayMusic", "BookRestaurant", "PlayMusic"])
#: One intent-and-slot JSONL object.
GOOD_QUERY = {"tokens": ["in", "paris"], "tags": ["O", "B-city"],
              "intent": "Go"}
