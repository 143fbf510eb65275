"""The files of a job's directory, on any file system TensorFlow reads.

A job's directory (`--model_dir`) may be on a bucket (`gs://`) as well as on
a local disk, so the steps read and write it through `tf.io.gfile` and these
helpers; tests put it on TensorFlow's `ram://` file system, which no other
process and no local path can reach. What only reads or writes local files
(the LiteRT interpreter given a path, functions of other modules that use
`open`) is given a local copy, or writes into a local directory copied to the
job's.

Two quirks of ram:// shape the helpers: a path "exists" (and is called a
directory) when another file's name starts with it, so `is_file` asks both;
and writing a file that exists appends to it, so files are replaced through a
temporary name (`metrics_io.write_atomically`), which also keeps a kill
mid-write from leaving a truncated file.
"""

import contextlib
import hashlib
import json
import os
import shutil
import tempfile

import tensorflow as tf

from mixvocab_tf.core import metrics_io

write_atomically = metrics_io.write_atomically


def is_local(path: str) -> bool:
  """Whether `path` is on the local disk (no `scheme://` prefix)."""
  return "://" not in path


def absolute(path: str) -> str:
  """`path` made absolute if local; a URL (`gs://...`) is absolute already.

  A trailing slash is dropped either way, so that `os.path.dirname` gives the
  parent.
  """
  if is_local(path):
    return os.path.abspath(path)
  return path if path.endswith("://") else path.rstrip("/")


def is_file(path: str) -> bool:
  """Whether `path` is a file (`os.path.isfile` on any file system)."""
  return tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path)


def sha256_files(paths) -> str:
  """The sha256 (hex) over `paths` in order: each file's name (not its
  directory) and bytes, on any file system."""
  digest = hashlib.sha256()
  for path in paths:
    digest.update(os.path.basename(path).encode("utf-8") + b"\0")
    with tf.io.gfile.GFile(path, "rb") as f:
      for block in iter(lambda: f.read(1 << 22), b""):
        digest.update(block)
  return digest.hexdigest()


def file_size(path: str) -> int:
  """Bytes of the file at `path`, or of all files under the directory `path`
  (a SavedModel)."""
  if is_file(path):
    return tf.io.gfile.stat(path).length
  return sum(tf.io.gfile.stat(os.path.join(root, name)).length
             for root, _, files in tf.io.gfile.walk(path) for name in files)


def read_text(path: str) -> str:
  with tf.io.gfile.GFile(path, "r") as f:
    return f.read()


def read_json(path: str):
  """The JSON value in the file at `path`."""
  return json.loads(read_text(path))


def read_json_if_any(path: str):
  """The JSON value in the file at `path`, or None when there is none."""
  return read_json(path) if is_file(path) else None


def write_text(path: str, text: str) -> None:
  """Writes `text` to `path`, replacing any file there in one step."""
  write_atomically(path, text)


def write_json(path: str, value, indent=None) -> None:
  """Writes `value` as JSON (`json.dump`'s layout) to `path`."""
  write_atomically(path, json.dumps(value, indent=indent))


def copy(source: str, destination: str) -> None:
  """Copies a file, replacing `destination` in one step.

  Not `tf.io.gfile.copy(..., overwrite=True)`: on ram:// it appends to a
  `destination` that exists.
  """
  with tf.io.gfile.GFile(source, "rb") as f:
    write_atomically(destination, f.read())


def tflite_model(path: str) -> dict:
  """How to hand the .tflite at `path` to the LiteRT interpreter.

  `{'model_path': path}` for a local file, as before; elsewhere its bytes
  (`{'model_content': ...}`): the interpreter opens only local paths.
  """
  if is_local(path):
    return {"model_path": path}
  with tf.io.gfile.GFile(path, "rb") as f:
    return {"model_content": f.read()}


@contextlib.contextmanager
def local_copy(path: str, companions=()):
  """A local path holding the file at `path`, for readers of local files only.

  `path` itself when local; else a copy in a temporary directory, deleted
  when the block ends, beside copies of `path + suffix` for each suffix in
  `companions` that exists (files a reader looks for next to the model).
  """
  if is_local(path):
    yield path
    return
  with tempfile.TemporaryDirectory() as directory:
    local = os.path.join(directory, os.path.basename(path))
    for suffix in ("",) + tuple(companions):
      if suffix and not is_file(path + suffix):
        continue
      with tf.io.gfile.GFile(path + suffix, "rb") as source:
        with open(local + suffix, "wb") as target:
          shutil.copyfileobj(source, target)
    yield local


@contextlib.contextmanager
def local_directory(directory: str):
  """A local directory whose files end up in `directory`.

  For writers that take only local paths (`open`, `os.makedirs`):
  `directory` itself when local; else a temporary directory whose files
  (not subdirectories) are copied into `directory` when the block ends
  without an error.
  """
  if is_local(directory):
    yield directory
    return
  with tempfile.TemporaryDirectory() as local:
    yield local
    tf.io.gfile.makedirs(directory)
    for name in sorted(os.listdir(local)):
      source = os.path.join(local, name)
      if os.path.isfile(source):
        with open(source, "rb") as f:
          write_atomically(os.path.join(directory, name), f.read())


@contextlib.contextmanager
def local_output(path: str):
  """A local file name to write; its file replaces `path` when the block ends.

  For writers that take only a local path (`vocab.write_vocab`): on a local
  disk `path + '.tmp'`, renamed onto `path`; elsewhere a file in a temporary
  local directory, copied to `path` in one step.
  """
  if is_local(path):
    yield path + ".tmp"
    os.replace(path + ".tmp", path)
    return
  with tempfile.TemporaryDirectory() as directory:
    local = os.path.join(directory, os.path.basename(path))
    yield local
    with open(local, "rb") as f:
      write_atomically(path, f.read())
