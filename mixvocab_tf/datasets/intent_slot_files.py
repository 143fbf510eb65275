"""A user's intent-and-slot files: the Goo et al. layout, JSONL or Rasa YAML.

One split is a directory holding `seq.in` (the words of each query),
`seq.out` (one IOB slot tag per word) and `label` (the intent), as Goo et
al. (2018) and JointBERT lay SNIPS and ATIS out, or a JSONL file of
`{"tokens", "tags", "intent"}` objects, or of `{"text", "spans", "intent"}`
objects whose slots are character spans, as annotation tools export them
(doccano's "Intent Detection and Slot Filling" JSONL export as it is:
`{"text", "entities", "cats"}`, `cats` a list of one intent; Prodigy's
export, `prodigy db-out`, as it is: `{"text", "tokens", "spans", "answer"}`
of `ner.manual`, its tokens not read, an intent picked in a choice as
`"accept": [intent]`, lines answered 'reject' or 'ignore' left out), or a
Rasa NLU
YAML file (`rasa_files`; the data contract: `user_dataset`'s
docstring). The built-in SNIPS copy is
read here too.

Slot tags are IOB2 for the task (`intent_slot`): a span starts with
`B-<type>`, its other words are `I-<type>`; its decoder emits only such
sequences (`iob_decoding`). An `I-<type>` that begins a span (after `O`, or
after a word of another type) is IOB1, as CoNLL-2003 writes spans; it is
read as `B-<type>` and counted (`IntentSlotExamples.iob_repairs`), see
`_Repairs.to_iob2`. BIOES (IOBES) and BILOU tags, as spaCy, Flair and many
NER corpora write them, are read as IOB2 the same way (`S-`/`U-` a span of
one word, `E-`/`L-` its last word: `B-` and `I-`), the same spans.
"""

import dataclasses
import os
import re
from typing import Any

import tensorflow as tf

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import records

#: The files of a split directory in the Goo et al. layout.
GOO_FILES = ("seq.in", "seq.out", "label")
_INTENT_SLOT_KEYS = ("tokens", "tags", "intent")
#: Hugging Face datasets' name for the tags (`{"tokens", "ner_tags"}`, as
#: `Dataset.to_json` writes a token-classification set), read as "tags".
HF_TAGS_KEY = "ner_tags"
_SPAN_KEYS = ("text", "spans", "intent")
#: doccano's names for them, which a line may use instead: its "Intent
#: Detection and Slot Filling" JSONL export writes the spans as "entities"
#: and the intent as "cats", a list of one.
_DOCCANO_KEYS = {"spans": "entities", "intent": "cats"}
_SPAN_FORMS = ('{"start": 10, "end": 14, "label": "genre"} or [10, 14, '
               '"genre"] (character offsets in the text, the end excluded; '
               'doccano\'s "start_offset" and "end_offset" too)')


#: BIOES (IOBES) and BILOU prefixes read as IOB2's: a one-word span's
#: (`S-`, `U-`) begins it, a span's last word (`E-`, `L-`) is inside it.
_TO_IOB2_PREFIX = {"S-": "B-", "U-": "B-", "E-": "I-", "L-": "I-"}


def _is_iob_tag(tag: str) -> bool:
  """An IOB2 tag, or a BIOES or BILOU one (read as IOB2)."""
  if tag == examples.OUTSIDE_TAG:
    return True
  return (tag[:2] in ("B-", "I-", *_TO_IOB2_PREFIX) and len(tag) > 2 and
          len(tag.split()) == 1)


def _check_tags(path: str, line: int, words: list[str], tags: list[str],
                words_where: str) -> None:
  """Checks one tag per word, each an IOB tag."""
  if len(tags) != len(words):
    raise errors.data_error(
        path, line,
        f"there {'is' if len(tags) == 1 else 'are'} "
        f"{errors.plural(len(tags), 'slot tag')} {errors.show(tags)} but "
        f"{words_where} has {errors.plural(len(words), 'word')} "
        f"{errors.show(words)}",
        "one slot tag per word",
        "Add or remove tags so that the i-th tag is the tag of the i-th word "
        "(words are separated by whitespace).")
  for position, tag in enumerate(tags, start=1):
    if not _is_iob_tag(tag):
      raise errors.data_error(
          path, line,
          f"slot tag {position} is {errors.show(tag)}, which is not an IOB "
          "tag",
          "'O', 'B-<type>' or 'I-<type>' (e.g. 'B-city'; BIOES's S- and "
          "E-, BILOU's U- and L- are read as B- and I-)",
          "Rename the tag; BIO tags mark the first word of a slot B- and the "
          "following words I-.")


class _Repairs:
  """IOB1 span starts and BIOES or BILOU tags read as IOB2, counted over a
  split (see `to_iob2`)."""

  def __init__(self):
    self.count = 0
    self.first = None
    self.bioes = False

  def to_iob2(self, path: str, line: int, tags: list[str]) -> list[str]:
    """`tags` with each `I-<type>` that begins a span written `B-<type>`,
    and BIOES or BILOU tags written as IOB2's.

    `S-x` and `U-x` (a span of one word) are `B-x`; `E-x` and `L-x` (a
    span's last word) are `I-x`, read as above where it begins a span (as
    after a span that ended: conlleval's chunks). The spans are the same;
    the model answers IOB2 tags. Each tag rewritten is counted with the
    IOB1 starts below.

    An `I-x` begins a span when it starts the query or follows `O` or a tag
    of another type. It is read, not refused: IOB1 (CoNLL-2003's spans, with
    `B-` only between two adjacent spans of one type) is legitimate data,
    and conlleval, whose chunking the scores follow (`metrics.iob_chunks`),
    reads such an `I-x` as the start of a span, so `B-x` names the same
    spans. Kept as `I-x`, the task would mis-train without a word: its
    decoder (`iob_decoding`, in evaluation and in the exported model) never
    emits `I-x` at the start of a span, so the spans a model learnt to
    start with `I-x` would be lost. The count and the first place go to the
    examples, and `UserDataset.iob_warning` reports them.
    """
    repaired = list(tags)
    previous = examples.OUTSIDE_TAG
    ended = False  # Whether the previous tag ended its span (E-, S-, ...).
    for position, tag in enumerate(tags, start=1):
      prefix = _TO_IOB2_PREFIX.get(tag[:2])
      iob = prefix + tag[2:] if prefix else tag
      why = None
      if iob.startswith("I-") and (previous == examples.OUTSIDE_TAG or
                                   previous[2:] != iob[2:] or ended):
        iob = "B-" + iob[2:]
        why = ("starts the query" if position == 1 else
               f"follows {tags[position - 2]!r}")
      elif prefix:
        why = "is BIOES or BILOU"
      self.bioes = self.bioes or bool(prefix)
      if why:
        repaired[position - 1] = iob
        self.count += 1
        if self.first is None:
          self.first = (f"{path}, line {line}: slot tag {position} "
                        f"{tag!r} {why}")
      previous = iob
      ended = bool(prefix)
    return repaired


def _check_intent(path: str, line: int, intent: str) -> None:
  if not intent or len(intent.split()) != 1:
    raise errors.data_error(
        path, line,
        f"the intent is {errors.show(intent)}" +
        (", which is empty" if not intent else ", which holds whitespace"),
        "one intent name without spaces (e.g. 'PlayMusic')",
        "Write the intent, joining its words with '_' if needed.")


def _read_goo(path: str, require_labels: bool,
              require_intents: bool) -> examples.IntentSlotExamples:
  """Reads a Goo et al. split directory (`seq.in`, `seq.out`, `label`)."""
  required = (GOO_FILES if require_intents else
              GOO_FILES[:2] if require_labels else ("seq.in",))
  missing = [name for name in required
             if not errors.isfile(os.path.join(path, name))]
  if missing:
    raise errors.data_error(
        path, None,
        f"the directory has no {', '.join(missing)}; it holds "
        f"{errors.list_directory(path)}",
        "the files seq.in (the queries), seq.out (their slot tags) and label "
        "(their intents)" + ("" if require_intents else
                             "; a slot tagger's splits may leave out label"
                             if require_labels else
                             "; a test split may hold seq.in alone"),
        "Add the missing files.")
  expected = {
      "seq.in": "one query per line, words separated by spaces",
      "seq.out": "one line of slot tags per query, one tag per word",
      "label": "one intent per line, one line per query",
  }
  lines = {}
  for name in GOO_FILES:
    file_path = os.path.join(path, name)
    if errors.isfile(file_path):
      lines[name] = decoding.read_lines(file_path, expected[name])
  # Blank lines at the end of the files are dropped, up to the last line that
  # is not blank in one of them (so an empty last intent is still reported).
  num_lines = max(
      max(i + 1 for i, line in enumerate(file_lines) if line.strip())
      for file_lines in lines.values())
  lines = {name: file_lines[:num_lines] for name, file_lines in lines.items()}
  counts = {name: len(file_lines) for name, file_lines in lines.items()}
  if len(set(counts.values())) != 1:
    first_mismatch = ""
    if "seq.out" in lines:
      for i, (query, tag_line) in enumerate(
          zip(lines["seq.in"], lines["seq.out"])):
        if len(query.split()) != len(tag_line.split()):
          first_mismatch = (
              f" (the first line where seq.in and seq.out disagree on the "
              f"number of words is line {i + 1})")
          break
    raise errors.data_error(
        path, None,
        "the files have different numbers of lines: " +
        ", ".join(f"{name} has {count}" for name, count in counts.items()) +
        first_mismatch,
        "one line per query in each file, in the same order",
        "Find the query whose line is missing or doubled (a blank line in "
        "the middle of a file, or a query holding a line break, are common "
        "causes).")
  seq_in = os.path.join(path, "seq.in")
  seq_out = os.path.join(path, "seq.out")
  label_path = os.path.join(path, "label")
  words, tags, intents, line_numbers = [], [], [], []
  repairs = _Repairs()
  for i, query in enumerate(lines["seq.in"]):
    line = i + 1
    query_words = query.split()
    if not query_words:
      raise errors.data_error(
          seq_in, line, "the query is empty",
          "one query per line, with at least one word",
          "Delete the line and the same line of seq.out and label, or fill "
          "it in.")
    if "seq.out" in lines:
      query_tags = lines["seq.out"][i].split()
      _check_tags(seq_out, line, query_words, query_tags,
                  f"{seq_in}, line {line},")
      tags.append(repairs.to_iob2(seq_out, line, query_tags))
    if "label" in lines:
      intent = lines["label"][i].strip()
      _check_intent(label_path, line, intent)
      intents.append(intent)
    words.append(query_words)
    line_numbers.append(line)
  return examples.IntentSlotExamples(
      path=path,
      words=words,
      tags=tags if "seq.out" in lines else None,
      intents=intents if "label" in lines else None,
      line_numbers=line_numbers,
      iob_repairs=repairs.count,
      first_iob_repair=repairs.first, bioes=repairs.bioes)


def _string_list(path: str, line: int, record: dict[str, Any],
                 key: str) -> list[str]:
  value = record[key]
  if not isinstance(value, list) or not all(
      isinstance(item, str) for item in value):
    if isinstance(value, list):
      bad = next(item for item in value if not isinstance(item, str))
      found = (f"{key!r} holds a JSON {errors.json_type(bad)} "
               f"{errors.show(bad)}")
    else:
      found = (f"{key!r} is a JSON {errors.json_type(value)}: "
               f"{errors.show(value)}")
    raise errors.data_error(path, line, found,
                            f"{key!r} to be a list of strings",
                            'Write it as ["a", "b", ...].')
  return value


def _words_with_offsets(text: str) -> list[tuple[str, int, int]]:
  """The whitespace words of `text` (`str.split`'s: `\\s` is the same
  Unicode whitespace), with their character offsets [start, end)."""
  return [(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _span(path: str, line: int, number: int, item: Any,
          text_length: int) -> tuple[int, int, str]:
  """(start, end, label) of span `number` (1-based) of a line, checked."""
  if isinstance(item, dict):
    label = item.get("label")
    if label is None and isinstance(item.get("labels"), list) and len(
        item["labels"]) == 1:
      label = item["labels"][0]  # Label Studio's value.
    if "start" in item or "end" in item:
      fields = (item.get("start"), item.get("end"), label)
    else:  # doccano's relation-mode export.
      fields = (item.get("start_offset"), item.get("end_offset"), label)
  elif isinstance(item, list) and len(item) == 3:
    fields = tuple(item)
  else:
    fields = None
  if fields is None or not all(
      isinstance(v, int) and not isinstance(v, bool) for v in fields[:2]):
    raise errors.data_error(
        path, line, f"span {number} is {errors.show(item)}", _SPAN_FORMS,
        "Write each span of 'spans' in one of these forms.")
  start, end, label = fields
  if not isinstance(label, str) or not label.strip() or len(
      label.split()) != 1:
    raise errors.data_error(
        path, line, f"span {number}'s label is {errors.show(label)}",
        "a slot type without spaces (e.g. 'city'); its words are tagged "
        "B-<type>, I-<type>", "Write the type, joining its words with '_'.")
  if not 0 <= start < end <= text_length:
    raise errors.data_error(
        path, line,
        f"span {number} runs from {start} to {end}, but the text has "
        f"{errors.plural(text_length, 'character')}",
        "0 <= start < end <= the text's length (offsets count the text's "
        "characters, Unicode code points, from 0; the end is excluded)",
        "Fix the offsets; a tool that counts UTF-16 units (JavaScript) "
        "shifts them after an emoji.")
  return start, end, label.strip()


def _tags_from_spans(path: str, line: int, text: str,
                     words: list[tuple[str, int, int]],
                     spans: Any, key: str = "spans") -> list[str]:
  """One IOB2 tag per word from character spans.

  A word is in a span when the span covers any of its characters (so a span
  that leaves out a word's trailing comma, or covers half a word, tags the
  whole word: the model tags whitespace words). The first word of a span is
  `B-<type>`, the others `I-<type>`.
  """
  if not isinstance(spans, list):
    raise errors.data_error(
        path, line, f"{key!r} is a JSON {errors.json_type(spans)}: "
        f"{errors.show(spans)}", "a list of spans, each " + _SPAN_FORMS,
        "Write [] for a query without slots.")
  tags = [examples.OUTSIDE_TAG] * len(words)
  owner = [None] * len(words)
  for number, item in enumerate(spans, start=1):
    start, end, label = _span(path, line, number, item, len(text))
    inside = [i for i, (_, word_start, word_end) in enumerate(words)
              if word_start < end and start < word_end]
    if not inside:
      raise errors.data_error(
          path, line,
          f"span {number} ({start} to {end}, {errors.show(text[start:end])}) "
          "holds no word, only whitespace",
          "each span to cover at least one word", "Fix or delete the span.")
    for i in inside:
      if owner[i] is not None:
        raise errors.data_error(
            path, line,
            f"the word {errors.show(words[i][0])} (word {i + 1}) is in span "
            f"{owner[i]} and in span {number}",
            "each word in at most one span (the model tags whole words, "
            "split at whitespace)",
            "Remove the overlap, or put a space between the two slots' "
            "words.")
      owner[i] = number
      tags[i] = ("B-" if i == inside[0] else "I-") + label
  return tags


def is_span_list(value: Any) -> bool:
  """Whether a JSON value is a list of spans (each a list or an object), as
  doccano's sequence-labelling export writes under "label" (a text
  classifier's "label" is a string, or a list of strings)."""
  return isinstance(value, list) and all(
      isinstance(item, (list, dict)) for item in value)


def is_prodigy_tokens(value: Any) -> bool:
  """Whether a JSONL line's "tokens" are Prodigy's (a list of objects,
  `{"text", "start", "end", "id", "ws"}`), which its "text" and "spans"
  say again: not the list of words of the tokens-and-tags form."""
  return isinstance(value, list) and bool(value) and all(
      isinstance(token, dict) for token in value)


def _key(record: dict[str, Any], key: str) -> str:
  """The name a JSONL line gives `key`: the key itself, or doccano's name
  for it (`_DOCCANO_KEYS`) where the line has that instead, or, for the
  spans, doccano's sequence-labelling "label" (a list of spans), or, for
  the intent, Prodigy's "accept" (the choices picked)."""
  if key not in record and _DOCCANO_KEYS.get(key) in record:
    return _DOCCANO_KEYS[key]
  if key == "intent" and key not in record and "accept" in record:
    return "accept"
  if (key == "spans" and key not in record and
      is_span_list(record.get("label"))):
    return "label"
  if key == "tags" and key not in record and HF_TAGS_KEY in record:
    return HF_TAGS_KEY
  return key


def _hf_tags_are_ids(path: str, line: int, tags: Any) -> None:
  """Refuses Hugging Face `ner_tags` that are class ids, not tag names."""
  if (isinstance(tags, list) and tags and
      all(isinstance(t, int) and not isinstance(t, bool) for t in tags)):
    raise errors.data_error(
        path, line, f"{HF_TAGS_KEY!r} holds class ids, {errors.show(tags)}",
        "tag names (\"B-PER\", \"O\", ...)",
        "Write the names, as the dataset's features give them: `names = "
        "ds.features['ner_tags'].feature.names; ds.map(lambda x: {'tags': "
        "[names[i] for i in x['ner_tags']]}, remove_columns=['ner_tags'])"
        ".to_json('train.jsonl')`.")


def _intent(path: str, line: int, record: dict[str, Any],
            require_labels: bool, require_intents: bool) -> str | None:
  """A JSONL line's intent, checked; None when absent and allowed (a line
  of labelled data that has the key but no intent in it is refused even
  where a slot tagger's lines may leave the key out)."""
  key = _key(record, "intent")
  intent = records.json_label(path, line, key, record.get(key))
  if intent is None:
    if require_intents or (require_labels and key in record):
      empty = record.get(key) == []
      raise errors.data_error(
          path, line, f"{key!r} is {'empty' if empty else 'null'}",
          "an intent name" + (" in a list of one" if key in ("cats", "accept")
                               else ""),
          "doccano exports a text nobody labelled with no intent: label it, "
          "or export only the approved examples, or delete the line."
          if key == "cats" and empty else
          "Pick the intent in Prodigy, or delete the line."
          if key == "accept" and empty else None)
    return None
  intent = intent.strip()
  _check_intent(path, line, intent)
  return intent


def _read_intent_slot_jsonl(
    path: str, require_labels: bool,
    require_intents: bool) -> examples.IntentSlotExamples:
  """Reads a JSONL intent-slot split ({"tokens", "tags", "intent"} or
  {"text", "spans", "intent"} objects; "intent" left out by a slot
  tagger's)."""
  expected = ('one JSON object per line with keys "tokens" (list of words), '
              '"tags" (one IOB tag per word) and "intent", or "text", '
              '"spans" (character spans) and "intent"')
  rows, left_out = records.accepted_rows(
      path, records.read_jsonl(path, expected))
  words, tags, intents, line_numbers = [], [], [], []
  repairs = _Repairs()
  for line, record in rows:
    with_spans = "text" in record and (
        "tokens" not in record or is_prodigy_tokens(record["tokens"]))
    keys = _SPAN_KEYS if with_spans else _INTENT_SLOT_KEYS
    required = (keys if require_intents else
                keys[:2] if require_labels else keys[:1])
    missing = [key for key in required if _key(record, key) not in record]
    if missing:
      raise errors.data_error(
          path, line,
          f"the object has no key {', '.join(map(repr, missing))}; its keys "
          f"are {list(record)}",
          f"the keys {list(_INTENT_SLOT_KEYS)} or {list(_SPAN_KEYS)} "
          "(or doccano's 'text', 'entities' and 'cats')" +
          ("" if require_intents else
           " ('intent' may be left out of every line: a slot tagger)"
           if require_labels else f" (a test split may leave out "
           f"{keys[1]!r} and 'intent')"),
          "Add the missing keys.")
    if with_spans:
      text = record["text"]
      if not isinstance(text, str):
        raise errors.data_error(
            path, line, f"'text' is a JSON {errors.json_type(text)}: "
            f"{errors.show(text)}", "a string",
            "Write the query as a JSON string.")
      spaced = _words_with_offsets(text)
      if not spaced:
        raise errors.data_error(path, line, "'text' is empty",
                                "a query of at least one word",
                                "Fill it in or delete the line.")
      query_tags = None
      spans_key = _key(record, "spans")
      if record.get(spans_key) is not None:
        query_tags = _tags_from_spans(path, line, text, spaced,
                                      record[spans_key], spans_key)
      elif require_labels:
        raise errors.data_error(path, line, f"{spans_key!r} is null",
                                "a list of spans ([] for none)")
      words.append([word for word, _, _ in spaced])
      tags.append(query_tags)
      intents.append(_intent(path, line, record, require_labels,
                             require_intents))
      line_numbers.append(line)
      continue
    tokens = _string_list(path, line, record, "tokens")
    if not tokens:
      raise errors.data_error(path, line, "'tokens' is empty",
                              "a query of at least one word",
                              "Fill it in or delete the line.")
    for position, token in enumerate(tokens, start=1):
      if not token or len(token.split()) != 1:
        raise errors.data_error(
            path, line,
            f"token {position} is {errors.show(token)}, which is "
            f"{'empty' if not token.strip() else 'several words'}",
            "one word per token, without spaces (queries are split into "
            "words at whitespace when the model is used)",
            "Split it into words, each with its own tag, or drop it.")
    query_tags = None
    tags_key = _key(record, "tags")
    if record.get(tags_key) is not None:
      if tags_key == HF_TAGS_KEY:
        _hf_tags_are_ids(path, line, record[tags_key])
      query_tags = _string_list(path, line, record, tags_key)
      _check_tags(path, line, tokens, query_tags, "'tokens'")
      query_tags = repairs.to_iob2(path, line, query_tags)
    elif require_labels:
      raise errors.data_error(path, line, f"{tags_key!r} is null",
                              "a list of IOB tags")
    words.append(tokens)
    tags.append(query_tags)
    intents.append(_intent(path, line, record, require_labels,
                           require_intents))
    line_numbers.append(line)
  records.check_all_or_none(path, tags, line_numbers, "'tags'")
  records.check_all_or_none(
      path, intents, line_numbers, "'intent'",
      None if not require_labels else
      "an 'intent' on every line, or on none (a slot tagger: its model "
      "finds slots only)")
  return examples.IntentSlotExamples(
      path=path,
      words=words,
      tags=tags if tags[0] is not None else None,
      intents=intents if intents[0] is not None else None,
      line_numbers=line_numbers,
      iob_repairs=repairs.count,
      first_iob_repair=repairs.first, bioes=repairs.bioes,
      left_out=left_out)


#: The extension of a CoNLL file (`_read_conll`) and its format's name.
CONLL = "conll"
_CONLL_EXPECTED = ("one word a line, its IOB tag last on the line (CoNLL: "
                   "'Paris B-LOC', or 'Paris NNP I-NP B-LOC'), a blank line "
                   "between sentences")


def _looks_like_conll(path: str) -> bool:
  """Whether the file's first lines (up to 4 KB) are CoNLL's: each line a
  word and its IOB tag last (`_is_iob_tag`), or blank, or
  `-DOCSTART-`, with at least one tag."""
  with tf.io.gfile.GFile(path, "rb") as f:
    data = f.read(4096)
  head = data.decode("utf-8", errors="replace").splitlines()
  if len(data) == 4096:
    head = head[:-1]  # Its last line may be cut.
  tagged = 0
  for line in head:
    fields = line.split()
    if not fields or fields[0] == "-DOCSTART-":
      continue
    if len(fields) < 2 or not _is_iob_tag(fields[-1]):
      return False
    tagged += 1
  return tagged > 0


def conll_hint(path: str, subject: str = "It") -> str | None:
  """The fix for a file of another extension that reads as CoNLL
  (`_looks_like_conll`), `subject` naming it: rename it; None otherwise
  (`records.format_of`)."""
  if not _looks_like_conll(path):
    return None
  stem = os.path.splitext(os.path.basename(path))[0]
  return (f"{subject} looks like CoNLL (a word and its tag a line): rename "
          f"it to {stem}.conll.")


def conll_sentences(path: str) -> list[tuple[int, list[list[str]]]]:
  """(first line, the fields of each of its lines) of each sentence of a
  CoNLL file: lines of whitespace-separated fields, a blank line between
  sentences; CoNLL-2003's `-DOCSTART-` lines are left out."""
  sentences, current, start = [], [], None
  for number, line in enumerate(
      decoding.read_lines(path, _CONLL_EXPECTED), start=1):
    fields = line.split()
    if fields and fields[0] == "-DOCSTART-":
      fields = []
    if not fields:
      if current:
        sentences.append((start, current))
      current, start = [], None
      continue
    if start is None:
      start = number
    current.append(fields)
  if current:
    sentences.append((start, current))
  return sentences


def _read_conll(path: str,
                require_labels: bool) -> examples.IntentSlotExamples:
  """Reads a CoNLL split (`conll_sentences`): each sentence a query of
  its lines' first fields, tagged by their last; no intents (a slot
  tagger's data). A test split may give the words alone."""
  words, tags, line_numbers = [], [], []
  repairs = _Repairs()
  for start, lines in conll_sentences(path):
    tagged = [len(fields) > 1 for fields in lines]
    if not all(tagged) and (require_labels or any(tagged)):
      bare = tagged.index(False)
      raise errors.data_error(
          path, start + bare,
          f"the line {errors.show(lines[bare][0])} has a word but no tag",
          _CONLL_EXPECTED,
          "Add the word's tag ('O' outside every slot); a test split may "
          "leave out every tag.")
    query = [fields[0] for fields in lines]
    words.append(query)
    line_numbers.append(start)
    if all(tagged):
      query_tags = [fields[-1] for fields in lines]
      _check_tags(path, start, query, query_tags,
                  f"the sentence from line {start}")
      tags.append(repairs.to_iob2(path, start, query_tags))
    else:
      tags.append(None)
  if not words:
    raise errors.data_error(path, None, "the file holds no sentence",
                            _CONLL_EXPECTED)
  records.check_all_or_none(path, tags, line_numbers, "tags")
  return examples.IntentSlotExamples(
      path=path, words=words, tags=tags if tags[0] is not None else None,
      intents=None, line_numbers=line_numbers,
      iob_repairs=repairs.count, first_iob_repair=repairs.first,
      bioes=repairs.bioes)


def as_slot_tagger(
    split: examples.IntentSlotExamples) -> examples.IntentSlotExamples:
  """A split read without intents (`require_intents=False`) as a slot
  tagger's: every tagged query given the one intent `examples.NO_INTENT`
  (a split with intents, or without tags, as it is: a test split of words
  alone is predicted, not scored)."""
  if split.intents is not None or split.tags is None:
    return split
  return dataclasses.replace(
      split, intents=[examples.NO_INTENT] * len(split))


def to_conll(words: list[list[str]], tags: list[list[str]]) -> str:
  """Sentences as a CoNLL file: 'word tag' lines, a blank line after each."""
  return "".join(
      "".join(f"{word} {tag}\n" for word, tag in zip(query, query_tags)) +
      "\n" for query, query_tags in zip(words, tags))


def _read_rasa(path: str) -> examples.IntentSlotExamples:
  """Reads a Rasa NLU YAML split (`rasa_files`): entities as spans."""
  words, tags, intents, line_numbers = [], [], [], []
  for example in rasa_files.read_rasa(path):
    spaced = _words_with_offsets(example.text)
    words.append([word for word, _, _ in spaced])
    tags.append(_tags_from_spans(path, example.line, example.text, spaced,
                                 [list(span) for span in example.spans]))
    intents.append(example.intent)
    line_numbers.append(example.line)
  return examples.IntentSlotExamples(path=path, words=words, tags=tags,
                                     intents=intents,
                                     line_numbers=line_numbers)


def read_intent_slot(
    path: str, require_labels: bool = True,
    require_intents: bool | None = None) -> examples.IntentSlotExamples:
  """Reads and checks one split of an intent detection and slot filling set.

  Args:
    path: a Goo et al. split directory (`seq.in`, `seq.out`, `label`), a
      `.conll` file (a slot tagger's: `_read_conll`), a `.jsonl` file of
      `{"tokens": [...], "tags": [...], "intent": "..."}` or `{"text":
      "...", "spans": [...], "intent": "..."}` objects (a span `{"start":
      10, "end": 14, "label": "genre"}` or `[10, 14, "genre"]`,
      character offsets, the end excluded), or a Rasa NLU `.yml` / `.yaml`
      file (`rasa_files`; every example has an intent and its entities).
    require_labels: whether every query must have tags and an intent. If
      False (a test split), `seq.out` / `label` (or the keys `tags` or
      `spans` / `intent`) may be missing: `tags` / `intents` are then None.
    require_intents: whether every query must have an intent (None:
      `require_labels`). False with `require_labels`: the tags are required,
      the intents may be left out of every query (a slot tagger's data,
      e.g. doccano's sequence-labelling export `{"text", "label": [[s, e,
      type]]}`, or `seq.in` and `seq.out` without `label`), `intents` then
      None.

  Returns:
    `IntentSlotExamples`, tags in IOB2 (see the module docstring).

  Raises:
    DataError: the data breaks the data contract (`user_dataset`'s
      docstring); the message names the file and the 1-based line.
  """
  if require_intents is None:
    require_intents = require_labels
  if tf.io.gfile.isdir(path):
    return _read_goo(path, require_labels, require_intents)
  if not tf.io.gfile.exists(path):
    raise errors.data_error(path, None, "the path does not exist",
                            "a directory with seq.in, seq.out and label, a "
                            ".jsonl file or a Rasa .yml file")
  if rasa_files.is_rasa(path):
    return _read_rasa(path)
  if records.format_of(path, ("jsonl", CONLL)) == CONLL:
    if require_intents:
      raise errors.data_error(
          path, None, "a CoNLL file gives its sentences no intent",
          "intents in every split of an intent and slot dataset",
          "CoNLL files are a slot tagger's data: give every split as one.")
    return _read_conll(path, require_labels)
  return _read_intent_slot_jsonl(path, require_labels, require_intents)
