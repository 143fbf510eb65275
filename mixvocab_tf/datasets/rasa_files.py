"""Rasa NLU training data: a user's intents and entities in Rasa's YAML.

A Rasa assistant keeps its NLU data in YAML files (`data/nlu.yml`), each
example annotated inline:

    version: "3.1"
    nlu:
    - intent: book_flight
      examples: |
        - fly from [Oslo]{"entity": "city", "role": "from"} to [Rome](city)
        - book a flight
    - lookup: city
      examples: |
        - Berlin
        - New York

The own-data job reads such a file as a split (`train.yml`, `validation.yml`,
...), `mixvocab-split-data` splits one, and `SLOT_VALUES` takes its lookup
tables. How the markup reads:

- `[text](type)`, `[text](type:value)`, `[text]{"entity": "type", ...}`:
  the text is a slot of that type, its words tagged `B-<type>`,
  `I-<type>` (a word is in the slot when the slot covers any of its
  characters, as for JSONL spans). A `role` joins the type as
  `<type>.<role>` (`city.departure`, `city.destination`: the model tells
  them apart); `value` (a synonym's canonical value) and `group` are left
  to the app, which maps what the model tags;
- `[text][{"entity": "a"}, {"entity": "b"}]`, one text with several
  entities: the first is read (a word has one tag);
- examples are the block's lines that start with `-`, or the `text` of
  each item of a list of `{text, metadata}` mappings; blank lines are
  skipped, any other line is refused;
- intents may repeat (their examples join); retrieval intents
  (`chitchat/ask_name`) are intent names as written;
- `lookup` tables are lists of slot values (`read_lookups`); `synonym` and
  `regex` items, and keys other than `nlu` (`version`, `stories`, `rules`,
  `responses`), are ignored.

A file whose examples have no entity at all is an intent classifier's data:
the job reads it as text classification (`has_entities`).
"""

import dataclasses
import json
import os
import re
from typing import Any, Iterator

import tensorflow as tf
import yaml

from mixvocab_tf.datasets import decoding
from mixvocab_tf.datasets import errors

#: The extensions of a Rasa YAML file.
EXTENSIONS = ("yml", "yaml")
FORMAT = "rasa"

_EXPECTED = ("a Rasa NLU training data file: a key `nlu:` holding items "
             "`- intent: <name>` with `examples: |` and one `- <example>` a "
             "line (entities as [text](type) or [text]{\"entity\": \"type\"})")
# [text] then (type) or (type:value), {a JSON object's inside}, or [a JSON
# list's inside]: the markup Rasa's training data format defines.
_ANNOTATION = re.compile(
    r"\[(?P<text>[^\]]+?)\]"
    r"(?:\((?P<type>[^:)]+?)(?::(?P<value>[^)]+))?\)"
    r"|\{(?P<dict>[^}]+?)\}"
    r"|\[(?P<list>.*?)\])")
_ITEM_KINDS = ("intent", "synonym", "regex", "lookup")


@dataclasses.dataclass
class RasaExample:
  """One example of an intent.

  Attributes:
    text: the plain text, markup removed.
    spans: (start, end, slot type) of each entity, character offsets into
      `text`, the end excluded.
    intent: the intent.
    line: the 1-based line of the file where the example is.
    source: the example as written, markup kept.
  """
  text: str
  spans: list[tuple[int, int, str]]
  intent: str
  line: int
  source: str


def _error(path, line, found, fix=None):
  return errors.data_error(path, line, found, _EXPECTED, fix)


def _compose(path: str):
  """The file's YAML node tree (nodes keep their lines), or a DataError."""
  text = "\n".join(decoding.read_lines(path, _EXPECTED))
  loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
  try:
    return yaml.compose(text, Loader=loader)
  except yaml.YAMLError as e:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    raise _error(
        path, mark.line + 1 if mark else None,
        f"the file is not valid YAML ({problem})",
        "Check the indentation and the quotes; a tab in the indentation is "
        "refused by YAML.") from None


def _line(node) -> int:
  return node.start_mark.line + 1


def _mapping(node) -> dict[str, Any]:
  """{key: value node} of a mapping node whose keys are scalars."""
  return {key.value: value for key, value in node.value
          if isinstance(key, yaml.ScalarNode)}


def _scalar(path: str, node, what: str) -> str:
  if not isinstance(node, yaml.ScalarNode):
    raise _error(path, _line(node), f"{what} is not a string",
                 f"Write {what} as text.")
  return node.value


def nlu_items(path: str) -> Iterator[tuple[str, str, Any, int]]:
  """(kind, name, examples node, line) of each item of the file's `nlu`."""
  root = _compose(path)
  if root is None or not isinstance(root, yaml.MappingNode):
    raise _error(path, None, "the file holds no YAML mapping")
  nlu = _mapping(root).get("nlu")
  if nlu is None:
    keys = ", ".join(_mapping(root)) or "none"
    raise _error(path, None, f"the file has no key 'nlu' (its keys: {keys})",
                 "Give the file holding the NLU data; stories and rules "
                 "are not read.")
  if not isinstance(nlu, yaml.SequenceNode):
    raise _error(path, _line(nlu), "'nlu' is not a list",
                 "Write each item under it as '- intent: <name>'.")
  for item in nlu.value:
    fields = _mapping(item) if isinstance(item, yaml.MappingNode) else {}
    kinds = [kind for kind in _ITEM_KINDS if kind in fields]
    if len(kinds) != 1:
      raise _error(
          path, _line(item),
          "an item of 'nlu' has " + (f"the keys {', '.join(kinds)}"
                                     if kinds else "none of the keys " +
                                     ", ".join(_ITEM_KINDS)),
          "Give each item one of intent, synonym, regex or lookup.")
    kind = kinds[0]
    name = _scalar(path, fields[kind], f"the {kind}'s name").strip()
    # A synonym names a value ("San Francisco"); an intent is a label.
    if kind == "intent" and (not name or len(name.split()) != 1):
      raise _error(path, _line(fields[kind]),
                   f"the {kind} name {errors.show(name)} is " +
                   ("empty" if not name else "several words"),
                   "Write it without spaces (join words with '_').")
    if "examples" not in fields:
      raise _error(path, _line(item), f"the {kind} {name!r} has no examples",
                   "Add `examples: |` and one `- <example>` a line.")
    yield kind, name, fields["examples"], _line(item)


def _example_lines(path: str, node) -> Iterator[tuple[str, int]]:
  """(example as written, its 1-based line) of an item's `examples`."""
  if isinstance(node, yaml.SequenceNode):  # [{text: ..., metadata: ...}, ...]
    for entry in node.value:
      fields = _mapping(entry) if isinstance(entry, yaml.MappingNode) else {}
      if "text" not in fields:
        raise _error(path, _line(entry),
                     "an example of the list has no key 'text'",
                     "Write each as `- text: <example>`.")
      text = _scalar(path, fields["text"], "the example's text")
      yield " ".join(text.split()), (_line(fields["text"]) +
                                      (fields["text"].style == "|"))
    return
  block = _scalar(path, node, "'examples'")
  # A literal block (`|`) keeps one file line per line, from the line after
  # its indicator; other styles fold lines, so each example gets the first.
  first = _line(node) + 1 if node.style == "|" else _line(node)
  for i, raw in enumerate(block.split("\n")):
    stripped = raw.strip()
    if not stripped:
      continue
    line = first + i if node.style == "|" else first
    if not stripped.startswith("-"):
      raise _error(path, line,
                   f"the example line {errors.show(stripped)} does not start "
                   "with '-'",
                   "Start each example with '- ', one example a line.")
    yield stripped[1:].strip(), line


def _annotation_json(match: re.Match) -> Any:
  """The JSON of a `[text]{...}` / `[text][...]` annotation: its object,
  or a list's first (several entities on one text: a word has one tag).

  Raises:
    json.JSONDecodeError: the markup is not JSON.
  """
  if match.group("dict"):
    return json.loads("{" + match.group("dict") + "}")
  parsed = json.loads("[" + match.group("list") + "]")
  return parsed[0] if parsed else None


def _annotation_type(path: str, line: int, match: re.Match) -> str:
  """The slot type of one `[text](...)` / `[text]{...}` / `[text][...]`."""
  if match.group("type") is not None:
    kind, role = match.group("type"), None
  else:
    try:
      parsed = _annotation_json(match)
    except json.JSONDecodeError as e:
      raise _error(path, line,
                   f"the entity {errors.show(match.group(0))} does not "
                   f"parse as JSON ({e.msg})",
                   'Write it as [text]{"entity": "type"}, with double '
                   "quotes.") from None
    if not isinstance(parsed, dict) or not isinstance(
        parsed.get("entity"), str):
      raise _error(path, line,
                   f"the entity {errors.show(match.group(0))} has no "
                   "'entity'", 'Write it as [text]{"entity": "type"}.')
    kind, role = parsed["entity"], parsed.get("role")
  kind = kind.strip() + (f".{str(role).strip()}" if role else "")
  if not kind or len(kind.split()) != 1:
    raise _error(path, line,
                 f"the entity type {errors.show(kind)} of "
                 f"{errors.show(match.group(0))} is " +
                 ("empty" if not kind else "several words"),
                 "Write the type without spaces (join words with '_').")
  return kind


def parse_example(path: str, line: int, source: str,
                  intent: str) -> RasaExample:
  """One annotated example: its plain text and entity spans."""
  text, spans, position = [], [], 0
  length = 0
  for match in _ANNOTATION.finditer(source):
    before = source[position:match.start()]
    text.append(before)
    length += len(before)
    kind = _annotation_type(path, line, match)
    text.append(match.group("text"))
    spans.append((length, length + len(match.group("text")), kind))
    length += len(match.group("text"))
    position = match.end()
  text.append(source[position:])
  plain = "".join(text)
  if not plain.split():
    raise _error(path, line, "the example is empty",
                 "Write the example after '- ', or delete the line.")
  return RasaExample(plain, spans, intent, line, source)


def read_rasa(path: str) -> list[RasaExample]:
  """The examples of every intent of the Rasa NLU file `path`, in file order.

  Raises:
    DataError: the file is not UTF-8 or not YAML, has no `nlu` list, an item
      has no or several kinds, no examples, an example line does not start
      with '-', an entity's markup does not parse, or no intent has an
      example; the message names the line.
  """
  found = []
  for kind, name, node, _ in nlu_items(path):
    if kind != "intent":
      continue
    for source, line in _example_lines(path, node):
      found.append(parse_example(path, line, source, name))
  if not found:
    raise _error(path, None, "the file has no intent with an example")
  return found


def _annotation_value(match: re.Match) -> str | None:
  """The synonym value of one annotation (`(type:value)`, `"value"`), or
  None; markup that does not parse gives None (`read_rasa` refuses it)."""
  if match.group("type") is not None:
    return match.group("value")
  try:
    parsed = _annotation_json(match)
  except json.JSONDecodeError:
    return None
  value = parsed.get("value") if isinstance(parsed, dict) else None
  return value if isinstance(value, str) else None


def read_synonyms(paths: list[str]) -> dict[str, str]:
  """{entity text, lowercased: its value} of Rasa NLU files, as Rasa's
  EntitySynonymMapper maps extracted entities: each `synonym` item's
  examples to its name, and each annotation's text to its `value`."""
  synonyms = {}
  for path in paths:
    for kind, name, node, _ in nlu_items(path):
      if kind == "synonym":
        for value, _ in _example_lines(path, node):
          synonyms[value.lower()] = name
      elif kind == "intent":
        for source, _ in _example_lines(path, node):
          for match in _ANNOTATION.finditer(source):
            value = _annotation_value(match)
            if value and value != match.group("text"):
              synonyms[match.group("text").lower()] = value
  return synonyms


def read_lookups(path: str) -> dict[str, list[tuple[str, int]]]:
  """{lookup table name: its (value, line) in file order} of `path`."""
  tables = {}
  for kind, name, node, _ in nlu_items(path):
    if kind == "lookup":
      tables.setdefault(name, []).extend(_example_lines(path, node))
  return tables


def holds_nlu(path: str) -> bool:
  """Whether the YAML file `path` has a key `nlu` (a stories, rules or
  domain file has not); False for a file that does not parse."""
  try:
    root = _compose(path)
  except errors.DataError:
    return False
  return isinstance(root, yaml.MappingNode) and "nlu" in _mapping(root)


def nlu_files(directory: str) -> list[str]:
  """The Rasa NLU files under `directory` (as Rasa reads a project's `data`
  folder: every .yml / .yaml file below it, its sub-folders too, that has
  a key `nlu`), in path order."""
  found = []
  for root, _, names in tf.io.gfile.walk(directory):
    found += [os.path.join(root, name) for name in names
              if is_rasa(name) and not name.startswith(".")]
  return sorted(path for path in found if holds_nlu(path))


def to_lookups_yaml(tables: dict[str, list[tuple[str, int]]]) -> str:
  """Rasa NLU YAML holding lookup tables ({name: [(value, line)]})."""
  lines = ['version: "3.1"', "nlu:"]
  for name, entries in tables.items():
    lines += [f"- lookup: {json.dumps(name)}", "  examples: |"]
    lines += [f"    - {value}" for value, _ in entries]
  return "\n".join(lines) + "\n"


def has_entities(path: str) -> bool:
  """Whether any example of `path` marks an entity."""
  return any(example.spans for example in read_rasa(path))


def is_rasa(path: str) -> bool:
  """Whether `path`'s extension is a Rasa YAML file's."""
  return os.path.splitext(path)[1].lower().lstrip(".") in EXTENSIONS


def to_yaml(examples: list[RasaExample]) -> str:
  """Rasa NLU YAML holding `examples` as written, grouped by intent in the
  order their intents first appear (each example one `- ` line of its
  intent's literal block)."""
  by_intent = {}
  for example in examples:
    by_intent.setdefault(example.intent, []).append(example.source)
  lines = ['version: "3.1"', "nlu:"]
  for intent, sources in by_intent.items():
    lines += [f"- intent: {json.dumps(intent)}", "  examples: |"]
    lines += [f"    - {source}" for source in sources]
  return "\n".join(lines) + "\n"


def markup(text: str, spans) -> str:
  """`text` with its slots written as Rasa markup: `[jazz](genre)`, a
  `<type>.<role>` type as `[Berlin]{"entity": "city", "role": "departure"}`
  (as `parse_example` reads it back).

  Args:
    text: a query.
    spans: (start, end, slot type) of each slot, character offsets, the
      end excluded, not overlapping.
  """
  out, position = [], 0
  for start, end, kind in sorted(spans):
    entity, _, role = kind.partition(".")
    out.append(text[position:start])
    out.append(f"[{text[start:end]}]" + (
        f"({kind})" if not role else
        json.dumps({"entity": entity, "role": role})))
    position = end
  out.append(text[position:])
  return "".join(out)


def answers_to_yaml(records: list[dict]) -> str:
  """Rasa NLU YAML of a model's answers (`serving.predictor` records: a
  text, its intent and slots, or its label), grouped by intent in the order
  the records first name them (within an intent, in the records' order),
  each example with its score as metadata, so
  that the corrected items can join a Rasa training file."""
  by_intent = {}
  for record in records:
    intent = record.get("intent", record.get("label"))
    text = markup(record["text"], [(slot["start"], slot["end"], slot["type"])
                                   for slot in record.get("slots", ())])
    by_intent.setdefault(intent, []).append((text, record["score"]))
  lines = ['version: "3.1"', "nlu:"]
  for intent, answers in by_intent.items():
    lines += [f"- intent: {json.dumps(intent)}", "  examples:"]
    for text, score in answers:
      lines += [f"  - text: {json.dumps(text, ensure_ascii=False)}",
                f"    metadata: {{score: {score:.4f}}}"]
  return "\n".join(lines) + "\n"


def parse_result(record: dict, synonyms: dict[str, str] | None = None
                 ) -> dict:
  """A predictor's record (`serving.predictor`) in the shape of Rasa's parse
  result (`rasa shell nlu`, the `/model/parse` endpoint): `intent` {name,
  confidence}, `entities` [{entity, role (a `<type>.<role>` slot type's),
  start, end, value, confidence_entity (and confidence_role: the slot's
  score, one tag naming both)}] and `intent_ranking`, so that a client of a Rasa
  server reads the student's answers as it reads Rasa's. `synonyms`
  (`read_synonyms`) map an entity's value as Rasa's EntitySynonymMapper
  does; without them the value is the text.

  Raises:
    ValueError: a sentence pair's record (Rasa parses one text).
  """
  if "text" not in record:
    raise ValueError("Rasa's parse result holds one text; a sentence-pair "
                     "model's answers have no such shape.")
  name = record["intent"] if "intent" in record else record["label"]
  entities = []
  for slot in record.get("slots", ()):
    entity, _, role = slot["type"].partition(".")
    value = (synonyms or {}).get(slot["text"].lower(), slot["text"])
    answer = {"entity": entity, **({"role": role} if role else {}),
              "start": slot["start"], "end": slot["end"], "value": value,
              "extractor": "mixvocab_tf"}
    if "score" in slot:  # One tag names type and role: one confidence.
      answer["confidence_entity"] = slot["score"]
      if role:
        answer["confidence_role"] = slot["score"]
    entities.append(answer)
  ranked = [{"name": r.get("intent", r.get("label")),
             "confidence": r["score"]} for r in record.get("top_k", ())]
  return {"text": record["text"],
          "intent": {"name": name, "confidence": record["score"]},
          "entities": entities, "intent_ranking": ranked}

