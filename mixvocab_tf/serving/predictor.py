r"""Answers queries with an exported student: the predictor.

The tiny students of Zhao et al. (EACL 2021) are served as SavedModels that
take raw strings (`export_run`, `mixvocab-export`), as .tflite files that
take them too (`convert_run`, `mixvocab-convert`) and as builtin-ops .tflite
files that take token ids (`<name>_builtin.tflite`, for phones and
browsers); `load_predictor` runs any of them on text (`mixvocab-predict`,
`cli/predict.py`, is its command: text lines in, JSON lines out). For a
builtin file it does what an app does: it tokenizes with the vocabulary in
the file's metadata, runs each example alone and decodes the tags, so its
records are the raw-string file's (`_BuiltinBackend`):

```python
import mixvocab_tf
predictor = mixvocab_tf.load_predictor("/tmp/snips.tflite")
predictor.predict(["play norah jones on spotify"], top_k=3)
```

A row is plain text (for a sentence-pair model, a tab separates text_a and
text_b) or a dict with `text` (pairs: `text_a` and `text_b`; the model's own
input names `sentence`, `sentence_a`, `sentence_b` are read too).

`predict` gives one record per row, in order. A classifier (GLUE; `label`
and `probabilities` outputs) gives

  {"text": ..., "label": ..., "score": p, "top_k": [{"label": ..., "score":
  ...}, ...]}

(a pair model `text_a` and `text_b` instead of `text`); an intent and slot
model (SNIPS; `intent`, `intent_probs`, `slot_tags` outputs) gives

  {"text": ..., "intent": ..., "score": p, "top_k": [...], "words": [...],
  "tags": [...], "slots": [{"type": "artist", "text": "norah jones",
  "start_word": 1, "end_word": 3, "start": 5, "end": 16, "score": p}, ...],
  "tag_scores": [...]}

`score` is the probability of the model's label, `top_k` the `top_k` most
probable labels (the model's first), `words` the query's whitespace words
that the model tagged (at most its sequence length minus 2), `slots` the
spans of their IOB tags as slot F1 reads them (`iob_to_spans`; `end_word`
exclusive, `text` the span of the query itself, `start` and `end` its
character offsets in the query, `end` exclusive: the span form the own-data
job reads). `tag_scores` gives each word the probability the model gives
its tag (the softmax of the word's slot logits at the tag the valid-IOB
decoding chose; 1 over the number of tags for a word cut past the model's
length, which it did not read), and a slot's `score` is the lowest of its
words': an app can confirm a slot value the model is unsure of, as it
confirms a doubtful intent. Every record ends with
`unreadable_words`: how many whitespace words of the example (of both texts
of a pair) the student vocabulary turns wholly into [UNK] (a word in another
script, an emoji: the student reads English). The model answers such an
example with less to go on; many of them in a stream mean the model is
being asked what it cannot read.

The vocabulary behind `unreadable_words` (`Predictor.vocab_source`):
`vocab` if given; else, for a SavedModel, the vocabulary in its `assets/`
(the one its tokenizer reads); for a .tflite, `<model>.vocab.txt` beside it,
else the SavedModel it was converted from when that sits beside it as
`saved_model/` (the own-data job's export directory); else the shipped
student vocabulary (`assets.default_student_vocab()`, which the package's
students use). A .tflite's tokenizer keeps no readable vocabulary (its
WordPiece model stores a trie, not the tokens), so a .tflite of a student
with another vocabulary needs `vocab` or the file beside it. The words
are checked in Python (`text.unreadable.WordReader`, which gives the
in-graph tokenizer's answer for every character Python's `unicodedata`
knows): about 40 microseconds for a word not seen before, then cached.

Label names (and, for `unreadable_words`, the vocabulary) of a builtin file
are those of its metadata. The label itself is the model's string output
(`label`, `intent`), which a .tflite answers too. Ranking `top_k > 1`
labels needs the whole list, in id order: for a SavedModel its
`assets.extra/labels.json` (`export_info.json` as a fallback); for a
.tflite the constant table that its GATHER op reads the label output from
(the export modules gather label names from a constant, which the converter
keeps), else `<model>.labels.json` beside it (written by `convert_run`). A
list that disagrees with the model's own label output is refused. Without a
list, `top_k=1` still works.
A .tflite gives no `words` output: the words are cut from the UTF-8 query at
its `word_starts` / `word_ends` byte offsets, as the SavedModel's are.

Examples are run in batches of `batch_size` (64).
"""

import glob
import json
import os
import struct
from typing import (Iterable, Iterator, List, Optional, Sequence, Tuple,
                    Union)

import numpy as np
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.export import builtin_model
from mixvocab_tf.export import saved_model_export
from mixvocab_tf.export import serving_tokenizer
from mixvocab_tf.export import tflite_conversion
from mixvocab_tf.tasks.finetuning import iob_decoding
from mixvocab_tf.tasks.finetuning import metrics as metrics_lib
from mixvocab_tf.text import unreadable

#: Examples per call of the model.
BATCH_SIZE = 64
#: What `Predictor.kind` can be.
KINDS = ("intent_slot", "classification")
#: The signature served (a .tflite's one signature has this key too).
SIGNATURE = "serving_default"
#: Suffix of the label list beside a .tflite (`convert_run` writes it).
TFLITE_LABELS_SUFFIX = ".labels.json"
#: Suffix of the student vocabulary beside a .tflite (`unreadable_words`).
TFLITE_VOCAB_SUFFIX = ".vocab.txt"
#: The SavedModel that a .tflite was converted from, when beside it (the
#: own-data job's export directory).
SAVED_MODEL_BESIDE = "saved_model"

#: Sorted input names of a served signature -> keys of a row (and of the
#: output record) for them.
_ROW_KEYS = {
    ("text",): ("text",),
    ("sentence",): ("text",),
    ("sentence_a", "sentence_b"): ("text_a", "text_b"),
}
#: Per kind: output names, the key of the label in the record, and the key
#: of the label list in a labels JSON.
_OUTPUTS = {
    "intent_slot": {"label": "intent", "label_id": "intent_id",
                    "probs": "intent_probs", "logits": "intent_logits",
                    "record": "intent", "labels_json": "intents"},
    "classification": {"label": "label", "label_id": "label_id",
                       "probs": "probabilities", "logits": "logits",
                       "record": "label", "labels_json": "labels"},
}
#: Tag prefixes of a chunk (IOB and IOBES); anything else reads as 'O'.
_CHUNK_PREFIXES = ("B-", "I-", "E-", "S-")

Row = Union[str, dict]


def iob_to_spans(tags: Sequence[str]) -> List[Tuple[str, int, int]]:
  """Slot spans of a word-level IOB tag sequence, as slot F1 reads them.

  Chunks follow conlleval (`metrics.iob_chunks`, which evaluation scores
  with): `B-x` starts a span; `I-x` continues a span of type x and otherwise
  starts one (an `I-x` without `B-x`, or after a span of another type);
  `O` ends a span; two adjacent `B-x` are two spans. Tags that are no chunk
  tag (`''`, the padding of a served batch) read as `O`.

  Example: `iob_to_spans(['O', 'B-artist', 'I-artist', 'I-city'])` is
  `[('artist', 1, 3), ('city', 3, 4)]`.

  Returns:
    (type, start, end) of each span, in word indices, `end` exclusive,
    ordered by `start`.
  """
  tags = [tag if len(tag) > 2 and tag[:2] in _CHUNK_PREFIXES else "O"
          for tag in tags]
  chunks = metrics_lib.iob_chunks(tags)
  return sorted(((kind, start, end + 1) for start, end, kind in chunks),
                key=lambda span: span[1])


def _preview(text, limit=60):
  text = repr(text)
  return text if len(text) <= limit else text[:limit - 3] + "..."


def _decode(value):
  return (value.decode("utf-8", "replace") if isinstance(value, bytes)
          else str(value))


def _softmax(logits):
  logits = np.asarray(logits, np.float64)
  exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
  return exp / exp.sum(axis=-1, keepdims=True)


def _read_tflite_strings(data: bytes) -> List[bytes]:
  """The strings of a TFLite string tensor's buffer.

  Layout: int32 count N, N + 1 int32 byte offsets from the buffer's start,
  then the bytes.
  """
  (count,) = struct.unpack_from("<i", data, 0)
  if count < 0 or 4 * (count + 2) > len(data):
    raise ValueError(f"Not a string tensor buffer (count {count}).")
  offsets = struct.unpack_from(f"<{count + 1}i", data, 4)
  if any(b < a for a, b in zip(offsets, offsets[1:])) or (
      offsets[-1] > len(data)):
    raise ValueError("Not a string tensor buffer (offsets out of order).")
  return [data[offsets[i]:offsets[i + 1]] for i in range(count)]


def tflite_label_table(model_content: bytes, output_name: str,
                       signature_key: str = SIGNATURE
                      ) -> Optional[List[str]]:
  """The names a .tflite's string output `output_name` is gathered from.

  The export modules answer label strings as `tf.gather(tf.constant(names),
  ids)`, which the converter keeps as a GATHER op whose first input is a
  constant string tensor: that constant is the label list, in id order.

  Args:
    model_content: the .tflite bytes.
    output_name: the signature output, e.g. 'label' or 'intent'.
    signature_key: the signature within the .tflite.

  Returns:
    The names, or None when the output is not gathered from a constant
    string table (or the model has no such output).
  """
  # Imported here: the schema module is large and only .tflite files need it.
  from ai_edge_litert import schema_py_generated as schema  # pylint: disable=g-import-not-at-top
  try:
    model = schema.Model.GetRootAsModel(model_content, 0)
    for s in range(model.SignatureDefsLength()):
      signature = model.SignatureDefs(s)
      if signature.SignatureKey().decode() != signature_key:
        continue
      subgraph = model.Subgraphs(signature.SubgraphIndex())
      tensor_index = None
      for j in range(signature.OutputsLength()):
        if signature.Outputs(j).Name().decode() == output_name:
          tensor_index = signature.Outputs(j).TensorIndex()
      if tensor_index is None:
        return None
      for i in range(subgraph.OperatorsLength()):
        operator = subgraph.Operators(i)
        outputs = [operator.Outputs(k) for k in range(operator.OutputsLength())]
        if tensor_index not in outputs:
          continue
        code = model.OperatorCodes(operator.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin != schema.BuiltinOperator.GATHER:
          return None
        table = subgraph.Tensors(operator.Inputs(0))
        if table.Type() != schema.TensorType.STRING:
          return None
        data = model.Buffers(table.Buffer()).DataAsNumpy()
        if isinstance(data, int):  # No constant data: a computed table.
          return None
        return [_decode(name) for name in _read_tflite_strings(
            data.tobytes())]
  except (ValueError, IndexError, struct.error, UnicodeDecodeError):
    return None
  return None


def _labels_from_json(path, key):
  """The list under `key` of a JSON file, or None (absent or unreadable)."""
  if not os.path.isfile(path):
    return None
  try:
    with open(path, encoding="utf-8") as f:
      content = json.load(f)
  except (OSError, ValueError):
    return None
  names = content.get(key) if isinstance(content, dict) else None
  if isinstance(names, list) and all(isinstance(n, str) for n in names):
    return names
  return None


class _SavedModelBackend:
  """Calls a SavedModel's `serving_default` (or `signature`) on columns of
  UTF-8 bytes."""

  def __init__(self, path, signature=SIGNATURE):
    try:
      # Kept: the signature's variables belong to the loaded object.
      self._loaded = tf.saved_model.load(path)
    except (tf.errors.OpError, ValueError, OSError) as e:
      message = str(getattr(e, "message", e)).strip().splitlines()[0]
      raise ValueError(f"{path} holds a SavedModel that TensorFlow cannot "
                       f"load: {message}") from None
    signatures = self._loaded.signatures
    if signature not in signatures:
      raise ValueError(
          f"The SavedModel {path} has no {signature!r} signature; it has "
          f"{sorted(signatures)}. Expected an export of mixvocab-export.")
    self._function = signatures[signature]
    self.input_names = tuple(sorted(
        self._function.structured_input_signature[1]))
    self.output_names = tuple(sorted(self._function.structured_outputs))

  def __call__(self, columns):
    outputs = self._function(**{
        name: tf.constant(column, tf.string)
        for name, column in zip(self.input_names, columns)})
    return {key: value.numpy() for key, value in outputs.items()}


class _TFLiteBackend:
  """Calls a .tflite's signature (`TFLiteRunner`) on columns of bytes."""

  def __init__(self, path):
    with open(path, "rb") as f:
      self.content = f.read()
    # A TFLite flatbuffer's file identifier.
    if self.content[4:8] != b"TFL3":
      hint = (" Give the SavedModel's directory instead."
              if os.path.basename(path) == "saved_model.pb" else "")
      raise ValueError(
          f"{path} is neither a SavedModel directory nor a .tflite file (its "
          f"first bytes are {self.content[:8]!r}, a .tflite has 'TFL3' at "
          f"byte 4).{hint}")
    self._runner = tflite_conversion.TFLiteRunner(model_content=self.content)
    self.input_names = tuple(self._runner.input_names)
    self.output_names = tuple(sorted(
        self._runner.runner.get_output_details()))

  def __call__(self, columns):
    return self._runner(*columns)


class _BuiltinBackend:
  """Runs a builtin-ops .tflite (token ids in) with the raw-string file's
  outputs, on columns of bytes.

  The file (`export.builtin_model`) carries its vocabulary and label names
  in its metadata. A batch is tokenized as the raw-string file tokenizes
  (`ServingTokenizer`: tensorflow-text's normalizer and WordPiece, one
  graph), each example runs alone in LiteRT's builtin interpreter
  (`BuiltinRunner`: at its own length, or padded to an intent and slot
  file's fixed one), and the words' slot tags are read at their first
  pieces and decoded under the valid-IOB constraint: the contract that an
  app follows (docs/SERVING.md, "Deploy"). Cut words are tagged 'O', as the
  raw-string file tags them. A sentence-pair classifier's file says so in
  its metadata's description (`builtin_model.PAIR_DESCRIPTION`); one
  exported before the description said it reads as a one-text classifier.
  """

  def __init__(self, path, content):
    self.content = content
    self._runner = builtin_model.BuiltinRunner(model_content=content)
    self.intent_slot = "slot_probs" in self._runner.runner.get_output_details()
    try:
      metadata = builtin_model.read_metadata(content)
    except ValueError as e:  # tflite-support: the model has no metadata.
      metadata = {"files": {}, "error": str(e)}
    files = metadata["files"]
    needed = [builtin_model.VOCAB_FILE] + (
        [builtin_model.INTENTS_FILE, builtin_model.SLOT_TAGS_FILE]
        if self.intent_slot else [builtin_model.LABELS_FILE])
    missing = [name for name in needed if name not in files]
    if missing:
      raise ValueError(
          f"{path} takes token ids ({', '.join(builtin_model.INPUT_NAMES)}) "
          f"but its metadata lacks {', '.join(missing)}"
          + (f" ({metadata['error']})" if "error" in metadata else "") +
          "; mixvocab-predict tokenizes for the builtin files that "
          "mixvocab-convert and the jobs write (`*_builtin.tflite`), which "
          "carry their vocabulary and label names.")
    description = metadata["metadata"].get("description", "")
    self.tokens = files[builtin_model.VOCAB_FILE].splitlines()
    self.lower_case = "lower_case=False" not in description
    tokenizer = serving_tokenizer.ServingTokenizer(self.tokens,
                                                   self.lower_case)
    seq_length = self._runner.seq_length
    if self.intent_slot:
      self.labels = files[builtin_model.INTENTS_FILE].splitlines()
      self.slots = files[builtin_model.SLOT_TAGS_FILE].splitlines()
      self._start, self._transitions = iob_decoding.allowed_transitions(
          self.slots)
      self.input_names = ("text",)
      self.output_names = ("intent", "intent_probs", "num_words",
                           "slot_ids", "slot_logits", "slot_tags",
                           "word_starts", "word_ends")
      self._pack = tf.function(
          lambda text: tokenizer.pack_words(text, seq_length),
          autograph=False)
    else:
      self.labels = files[builtin_model.LABELS_FILE].splitlines()
      pair = builtin_model.PAIR_DESCRIPTION in description
      self.input_names = (("sentence_a", "sentence_b") if pair
                          else ("sentence",))
      self.output_names = ("label", "probabilities")
      self._pack = tf.function(
          lambda *texts: tokenizer.pack_sentences(*texts,
                                                  seq_length=seq_length),
          autograph=False)

  def __call__(self, columns):
    texts = [tf.constant(column, tf.string) for column in columns]
    if self.intent_slot:
      features, words = self._pack(texts[0])
    else:
      features, words = self._pack(*texts), None
    features = {name: value.numpy() for name, value in features.items()}
    outputs = [self._runner({name: value[i:i + 1]
                             for name, value in features.items()})
               for i in range(len(columns[0]))]
    key = "intent_probs" if self.intent_slot else "probabilities"
    probs = np.concatenate([o[key] for o in outputs]).astype(np.float64)
    names = [self.labels[i] for i in probs.argmax(axis=-1)]
    if not self.intent_slot:
      return {"label": names, "probabilities": probs}
    words = {name: value.numpy() for name, value in words.items()}
    num_words = words["num_words"]
    width = max(int(num_words.max(initial=0)), 1)
    tags = np.full([len(outputs), width], "", object)
    starts = np.full([len(outputs), width], -1, np.int64)
    ends = starts.copy()
    slot_ids = starts.copy()
    slot_logits = np.zeros([len(outputs), width, len(self.slots)])
    for i, output in enumerate(outputs):
      row = words["row"] == i
      positions = words["positions"][row]
      count = len(positions)
      kept = int((positions >= 0).sum())  # The kept words come first.
      emissions = np.log(np.maximum(output["slot_probs"][0, positions[:kept]],
                                    1e-30))
      ids = iob_decoding.viterbi_decode_numpy(
          [emissions], [kept], self._start, self._transitions)[0]
      ids += [0] * (count - kept)
      tags[i, :count] = [self.slots[t] for t in ids]
      slot_ids[i, :count] = ids
      # Log-probabilities are logits of the same softmax; a cut word's
      # zeros, as the raw-string file gives them.
      slot_logits[i, :kept] = emissions
      starts[i, :count] = words["starts"][row]
      ends[i, :count] = words["ends"][row]
    return {"intent": names, "intent_probs": probs, "num_words": num_words,
            "slot_tags": tags, "slot_ids": slot_ids,
            "slot_logits": slot_logits, "word_starts": starts,
            "word_ends": ends}


def _detect_kind(path, input_names, output_names):
  """'intent_slot' or 'classification', from a signature's names."""
  if input_names not in _ROW_KEYS:
    raise ValueError(
        f"{path}'s {SIGNATURE} takes {list(input_names)}; mixvocab-predict "
        "serves signatures that take `text`, `sentence`, or `sentence_a` and "
        "`sentence_b` (exports of mixvocab-export).")
  names = set(output_names)
  words = "words" in names or {"word_starts", "word_ends"} <= names
  if ({"intent", "slot_tags", "num_words"} <= names and words and
      names & {"intent_probs", "intent_logits"}):
    return "intent_slot"
  if "label" in names and names & {"probabilities", "logits"}:
    return "classification"
  raise ValueError(
      f"{path}'s {SIGNATURE} gives {sorted(names)}; mixvocab-predict reads "
      "intent and slot models (intent, intent_probs, slot_tags, num_words, "
      "word_starts, word_ends) and classifiers (label, probabilities): the "
      "export of a fine-tuned SNIPS or GLUE run, not of an encoder.")


class Predictor:
  """An exported model (SavedModel or .tflite) answering rows of text.

  Build one with `load_predictor`.

  Attributes:
    model_path: the SavedModel directory or .tflite file.
    input_names: the signature's inputs, sorted: ('text',), ('sentence',) or
      ('sentence_a', 'sentence_b').
    kind: 'intent_slot' (the model tags slots) or 'classification'.
    labels: the label names in id order (intents for 'intent_slot'), or
      None if the model does not give them (then only `top_k=1` works).
    labels_source: where `labels` were read.
    batch_size: examples per call of the model.
    reader: a `text.unreadable.WordReader` of the student vocabulary, which
      counts `unreadable_words` (None: of the shipped one).
    vocab_source: the vocabulary file it reads (module docstring).
  """

  def __init__(self, backend, model_path, kind, labels=None,
               labels_source=None, batch_size=BATCH_SIZE, reader=None,
               vocab_source=None):
    if batch_size < 1:
      raise ValueError(f"batch_size must be at least 1; received "
                       f"{batch_size}.")
    self._backend = backend
    self.model_path = model_path
    self.input_names = tuple(backend.input_names)
    self.output_names = tuple(backend.output_names)
    self.kind = kind
    self.labels = tuple(labels) if labels is not None else None
    self.labels_source = labels_source
    self.batch_size = int(batch_size)
    if reader is None:
      vocab_source = assets.default_student_vocab()
      reader = unreadable.WordReader(vocab_source)
    self.reader = reader
    self.vocab_source = vocab_source
    self._keys = _OUTPUTS[kind]
    self.text_keys = _ROW_KEYS[self.input_names]

  @property
  def pair(self) -> bool:
    return len(self.input_names) == 2

  def parse_row(self, row: Row, where: str = "row") -> Tuple[str, ...]:
    """The texts of one example, one per input.

    Args:
      row: a string (for a pair model, text_a and text_b separated by one
        tab) or a dict with `text` (pairs: `text_a`, `text_b`) or the
        model's input names.
      where: how errors name the row (e.g. 'line 3 of queries.txt').

    Raises:
      ValueError: the row does not give the model's inputs.
    """
    if isinstance(row, str):
      if not self.pair:
        return (row,)
      parts = row.split("\t")
      if len(parts) != 2:
        raise ValueError(
            f"{where}: this sentence-pair model takes text_a and text_b "
            f"separated by one tab; received {len(parts) - 1} tabs in "
            f"{_preview(row)}. Write 'text_a<TAB>text_b', or a JSON object "
            "with \"text_a\" and \"text_b\".")
      return tuple(parts)
    if isinstance(row, dict):
      texts = []
      for key, name in zip(self.text_keys, self.input_names):
        value = row.get(key, row.get(name))
        if not isinstance(value, str):
          wanted = " and ".join(f'"{k}"' for k in self.text_keys)
          raise ValueError(
              f"{where}: this model takes {wanted} (strings) per example; "
              f"received a JSON object with keys {sorted(row)}"
              + ("" if value is None else
                 f" and {key}={_preview(value)}") + ".")
        texts.append(value)
      return tuple(texts)
    raise ValueError(f"{where}: expected a string or a dict; received "
                     f"{type(row).__name__}.")

  def check_top_k(self, top_k: int) -> None:
    """Raises ValueError unless `predict` can rank `top_k` labels."""
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)):
      raise ValueError(f"top_k must be an integer; received {top_k!r}.")
    if top_k < 1:
      raise ValueError(f"top_k must be at least 1; received {top_k}.")
    if top_k > 1 and self.labels is None:
      if os.path.isdir(self.model_path):
        labels = os.path.join(self.model_path,
                              saved_model_export.LABELS_FILE)
        where = f"{labels} is missing"
      else:
        where = (f"its label output is not gathered from a constant table "
                 f"and there is no {self.model_path}{TFLITE_LABELS_SUFFIX} "
                 "beside it (mixvocab-convert writes it: copy the "
                 "SavedModel's assets.extra/labels.json there)")
      raise ValueError(
          f"top_k={top_k} needs the model's label names, which "
          f"{self.model_path} does not give: {where}. Use top_k=1.")

  def predict(self, rows: Sequence[Row], top_k: int = 1) -> List[dict]:
    """One record (module docstring) per row, in order.

    Args:
      rows: strings or dicts (`parse_row`).
      top_k: how many labels `top_k` ranks (at most the model's number).

    Raises:
      ValueError: a row that does not give the model's inputs, top_k < 1,
        or top_k > 1 for a model without label names.
    """
    self.check_top_k(top_k)
    examples = [self.parse_row(row, f"row {i}")
                for i, row in enumerate(rows, 1)]
    return list(self.predict_examples(examples, top_k))

  def predict_examples(self, examples: Iterable[Tuple[str, ...]],
                       top_k: int = 1) -> Iterator[dict]:
    """Records of parsed examples (`parse_row`), `batch_size` per call."""
    self.check_top_k(top_k)
    batch = []
    for example in examples:
      batch.append(example)
      if len(batch) == self.batch_size:
        yield from self._predict_batch(batch, top_k)
        batch = []
    if batch:
      yield from self._predict_batch(batch, top_k)

  def _predict_batch(self, batch, top_k):
    # Bytes, so that a lone surrogate (a JSON "\ud800") reaches the model as
    # the invalid UTF-8 it serves, and offsets index the same bytes.
    encoded = [[text.encode("utf-8", "surrogatepass") for text in texts]
               for texts in batch]
    outputs = self._backend([list(column) for column in zip(*encoded)])
    keys = self._keys
    if keys["probs"] in outputs:
      probs = np.asarray(outputs[keys["probs"]], np.float64)
    else:
      probs = _softmax(outputs[keys["logits"]])
    ids = (np.asarray(outputs[keys["label_id"]]) if keys["label_id"] in
           outputs else probs.argmax(axis=-1))
    names = outputs[keys["label"]]
    if self.labels is not None and len(self.labels) != probs.shape[-1]:
      raise ValueError(
          f"{self.labels_source} names {len(self.labels)} labels but "
          f"{self.model_path} scores {probs.shape[-1]}; the label list does "
          "not belong to this model.")
    k = min(top_k, probs.shape[-1])
    records = []
    for i, texts in enumerate(batch):
      label, label_id = _decode(names[i]), int(ids[i])
      if self.labels is not None and self.labels[label_id] != label:
        raise ValueError(
            f"{self.labels_source} does not match {self.model_path}: label "
            f"id {label_id} is {self.labels[label_id]!r} there but "
            f"{label!r} in the model's output.")
      # The model's own label first, then by probability.
      order = [label_id] + [int(j) for j in np.argsort(-probs[i],
                                                       kind="stable")
                            if j != label_id]
      ranked = [{"label": label if j == label_id else self.labels[j],
                 "score": float(probs[i, j])} for j in order[:k]]
      record = dict(zip(self.text_keys, texts))
      record[keys["record"]] = label
      record["score"] = float(probs[i, label_id])
      record["top_k"] = ranked
      if self.kind == "intent_slot":
        record.update(self._words_and_slots(outputs, i, encoded[i][0]))
      record["unreadable_words"] = sum(self.reader.count(text)
                                       for text in texts)
      records.append(record)
    return records

  def _words_and_slots(self, outputs, i, text):
    """`words`, `tags` and `slots` of example i, whose query is `text`."""
    count = int(outputs["num_words"][i])
    tags = [_decode(tag) for tag in outputs["slot_tags"][i][:count]]
    offsets = None
    if "word_starts" in outputs and "word_ends" in outputs:
      offsets = list(zip(outputs["word_starts"][i][:count].tolist(),
                         outputs["word_ends"][i][:count].tolist()))
    if "words" in outputs:
      words = [_decode(word) for word in outputs["words"][i][:count]]
    else:  # A .tflite: the words' byte offsets in the query.
      words = [_decode(text[start:end]) for start, end in offsets]
    tag_scores = _tag_scores(outputs, i, count)
    slots = []
    for kind, start, end in iob_to_spans(tags):
      slot = {"type": kind, "text": " ".join(words[start:end]),
              "start_word": start, "end_word": end}
      if offsets:
        first, last = offsets[start][0], offsets[end - 1][1]
        slot["text"] = _decode(text[first:last])
        # Characters before the span, and in it: byte offsets to str ones.
        slot["start"] = len(_decode(text[:first]))
        slot["end"] = slot["start"] + len(slot["text"])
      if tag_scores is not None:
        slot["score"] = min(tag_scores[start:end])
      slots.append(slot)
    record = {"words": words, "tags": tags, "slots": slots}
    if tag_scores is not None:
      record["tag_scores"] = tag_scores
    return record


def _tag_scores(outputs, i, count):
  """The probability the model gives each of example i's first `count`
  words' tags (the softmax of the word's slot logits, at the tag the
  decoding chose), or None for outputs without `slot_logits` and
  `slot_ids`. A word cut past the model's length has zero logits: 1 over
  the number of tags."""
  if "slot_logits" not in outputs or "slot_ids" not in outputs:
    return None
  probs = _softmax(np.asarray(outputs["slot_logits"][i][:count], np.float64))
  ids = np.asarray(outputs["slot_ids"][i][:count])
  return [float(p) for p in probs[np.arange(count), ids]]


def _saved_model_vocab(saved_model_dir):
  """(vocab.txt in the SavedModel's assets, its lower_case), or None."""
  found = glob.glob(os.path.join(saved_model_dir, "assets", "*.txt"))
  if len(found) != 1:
    return None
  lower_case = True
  info_path = os.path.join(saved_model_dir,
                           saved_model_export.EXPORT_INFO_FILE)
  try:
    with open(info_path, encoding="utf-8") as f:
      lower_case = bool(json.load(f).get("lower_case", True))
  except (OSError, ValueError, AttributeError):
    pass
  return found[0], lower_case


def model_vocab(model_path: str, vocab: Optional[str] = None
               ) -> Tuple[str, bool]:
  """The student vocabulary of a model and its lower_case, in the module
  docstring's order: `vocab`; a SavedModel's assets; `<model>.vocab.txt`,
  else a SavedModel `saved_model/`, beside a .tflite; the shipped one.

  Raises:
    FileNotFoundError: `vocab` is given but does not exist.
  """
  path = os.fspath(model_path)
  if os.path.isdir(path):
    found = _saved_model_vocab(path)
  else:
    found = _saved_model_vocab(os.path.join(os.path.dirname(path),
                                            SAVED_MODEL_BESIDE))
    if os.path.isfile(path + TFLITE_VOCAB_SUFFIX):
      found = (path + TFLITE_VOCAB_SUFFIX, found[1] if found else True)
  if vocab:
    if not os.path.isfile(vocab):
      raise FileNotFoundError(
          f"The vocabulary {vocab} does not exist; expected the student's "
          "vocab.txt (a SavedModel holds it in assets/).")
    return vocab, found[1] if found else True
  return found or (assets.default_student_vocab(), True)


def load_predictor(model_path: str, batch_size: int = BATCH_SIZE,
                   vocab: Optional[str] = None,
                   signature: str = SIGNATURE) -> Predictor:
  """A `Predictor` of a SavedModel directory or a .tflite file.

  The signature's inputs (`text`, `sentence`, or `sentence_a` and
  `sentence_b`) and outputs (intent and slots, or a label) decide how rows
  are read and what records hold; label names come from the model, and the
  student vocabulary (`unreadable_words`) from `vocab` or beside the model
  (module docstring). `signature` names the SavedModel signature called
  (e.g. 'serving_tflite', what the .tflite files are converted from); a
  .tflite has one.

  Raises:
    FileNotFoundError: `model_path` (or `vocab`) does not exist.
    ValueError: it is neither a SavedModel directory nor a .tflite file, or
      its signature is not one of an intent and slot model or a classifier.
  """
  path = os.fspath(model_path)
  if not os.path.exists(path):
    raise FileNotFoundError(
        f"The model {path} does not exist; expected a SavedModel directory "
        "(the --export_dir of mixvocab-export) or a .tflite file (the "
        "--output of mixvocab-convert).")
  if os.path.isdir(path):
    if not tf.saved_model.contains_saved_model(path):
      raise ValueError(
          f"{path} is a directory but not a SavedModel (it has no "
          "saved_model.pb); expected the --export_dir of mixvocab-export, "
          "or a .tflite file.")
    backend = _SavedModelBackend(path, signature)
  else:
    backend = _TFLiteBackend(path)
    if set(backend.input_names) == set(builtin_model.INPUT_NAMES):
      backend = _BuiltinBackend(path, backend.content)
  kind = _detect_kind(path, backend.input_names, backend.output_names)
  key = _OUTPUTS[kind]["labels_json"]
  labels = source = None
  if isinstance(backend, _BuiltinBackend):
    labels, source = backend.labels, f"the metadata of {path}"
  elif isinstance(backend, _SavedModelBackend):
    for name in (saved_model_export.LABELS_FILE,
                 saved_model_export.EXPORT_INFO_FILE):
      labels = _labels_from_json(os.path.join(path, name), key)
      if labels is not None:
        source = os.path.join(path, name)
        break
  else:
    labels = tflite_label_table(backend.content, _OUTPUTS[kind]["label"])
    source = f"the label table inside {path}"
    if labels is None:
      source = path + TFLITE_LABELS_SUFFIX
      labels = _labels_from_json(source, key)
  if isinstance(backend, _BuiltinBackend) and not vocab:
    # The vocabulary the file's tokenizer was given.
    vocab_path = source
    reader = unreadable.WordReader(backend.tokens, backend.lower_case)
  else:
    vocab_path, lower_case = model_vocab(path, vocab)
    reader = unreadable.WordReader(vocab_path, lower_case)
  return Predictor(backend, path, kind, labels,
                   source if labels is not None else None, batch_size,
                   reader=reader, vocab_source=vocab_path)
