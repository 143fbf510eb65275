"""Tests of intent_slot_files: the Goo et al. layout and JSONL, checked."""

import os

import pytest

from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import layout
from mixvocab_tf.tasks.finetuning import metrics
from mixvocab_testing.datasets_testing import (
    GOO_TRAIN, GOOD_QUERY, raises, write, write_goo, write_jsonl)

#: A query as one text with character spans (doccano's form).
SPAN_QUERY = {"text": "fly to new york, now", "spans": [[7, 15, "city"]],
              "intent": "Go"}


# -----------------------------------------------------------------------------
# read_intent_slot.
# -----------------------------------------------------------------------------


def test_read_goo_split(tmp_path):
  directory = write_goo(tmp_path / "train", **GOO_TRAIN)
  split = intent_slot_files.read_intent_slot(directory)
  assert split.words == [["play", "jazz"], ["book", "a", "table"],
                         ["play", "some", "rock"]]
  assert split.tags[2] == ["O", "O", "B-genre"]
  assert split.intents == ["PlayMusic", "BookRestaurant", "PlayMusic"]
  assert split.line_numbers == [1, 2, 3]


def test_read_goo_crlf_and_trailing_blank_lines(tmp_path):
  directory = tmp_path / "train"
  write(directory / "seq.in", "play jazz\r\nstop\r\n\r\n")
  write(directory / "seq.out", "O B-genre\r\nO\r\n")
  write(directory / "label", "PlayMusic\r\nStop")  # No final newline.
  split = intent_slot_files.read_intent_slot(str(directory))
  assert split.intents == ["PlayMusic", "Stop"]
  assert split.tags == [["O", "B-genre"], ["O"]]


def test_read_goo_test_split_without_labels(tmp_path):
  directory = write_goo(tmp_path / "test", ["play jazz", "stop"])
  split = intent_slot_files.read_intent_slot(str(directory),
                                             require_labels=False)
  assert split.words == [["play", "jazz"], ["stop"]]
  assert split.tags is None and split.intents is None


def test_goo_missing_file(tmp_path):
  directory = write_goo(tmp_path / "train", ["play jazz"], ["O B-genre"])
  error = raises("has no label; it holds seq.in, seq.out",
                 intent_slot_files.read_intent_slot, directory)
  assert error.line is None


def test_goo_tag_count_names_both_files_and_the_line(tmp_path):
  directory = write_goo(tmp_path / "train", ["play jazz", "play some rock"],
                        ["O B-genre", "O B-genre"], ["A", "A"])
  error = raises("there are 2 slot tags", intent_slot_files.read_intent_slot,
                 directory)
  message = str(error)
  assert message.startswith(os.path.join(directory, "seq.out") + ", line 2:")
  assert os.path.join(directory, "seq.in") + ", line 2, has 3 words" in message


def test_goo_files_with_different_line_counts(tmp_path):
  directory = write_goo(tmp_path / "train", ["play jazz", "stop", "go"],
                        ["O B-genre", "O"], ["A", "B", "C"])
  error = raises("seq.in has 3, seq.out has 2, label has 3",
                 intent_slot_files.read_intent_slot, directory)
  assert error.path == directory


@pytest.mark.parametrize("tag", ["B-", "X-city", "b-city", "city"])
def test_goo_tag_not_iob(tmp_path, tag):
  directory = write_goo(tmp_path / "train", ["in paris"], [f"O {tag}"],
                        ["Go"])
  raises(f"seq.out, line 1: slot tag 2 is '{tag}', which is not an IOB tag",
         intent_slot_files.read_intent_slot, directory)


def test_iob1_span_starts_are_read_as_b_and_counted(tmp_path):
  # IOB1 (CoNLL-2003): a span starts with I- unless it follows a span of
  # its own type. Read as IOB2, the task's decoding, with the same spans.
  directory = write_goo(
      tmp_path / "train",
      ["fly to new york", "from paris to nice", "play jazz"],
      ["O O I-city I-city", "O B-city O I-city", "O B-genre"],
      ["Fly", "Fly", "Play"])
  split = intent_slot_files.read_intent_slot(directory)
  assert split.tags == [["O", "O", "B-city", "I-city"],
                        ["O", "B-city", "O", "B-city"],
                        ["O", "B-genre"]]
  assert split.iob_repairs == 2
  assert split.first_iob_repair == (
      f"{os.path.join(directory, 'seq.out')}, line 1: slot tag 3 'I-city' "
      "follows 'O'")
  # An I- after a word of another type, or first in the query; JSONL too.
  path = write_jsonl(tmp_path / "valid.jsonl", [
      GOOD_QUERY,
      {"tokens": ["paris", "texas"], "tags": ["I-city", "I-state"],
       "intent": "Go"}])
  split = intent_slot_files.read_intent_slot(path)
  assert split.tags[1] == ["B-city", "B-state"]
  assert split.iob_repairs == 2
  assert split.first_iob_repair == (
      f"{path}, line 2: slot tag 1 'I-city' starts the query")
  # IOB2 data is read as it is, with nothing counted.
  split = intent_slot_files.read_intent_slot(
      write_goo(tmp_path / "iob2", **GOO_TRAIN))
  assert split.tags == [t.split() for t in GOO_TRAIN["seq_out"]]
  assert (split.iob_repairs, split.first_iob_repair) == (0, None)


def test_bioes_and_bilou_tags_are_read_as_iob2(tmp_path):
  # BIOES (Flair, many NER corpora) and BILOU (spaCy): S-/U- a one-word
  # span, E-/L- a span's last word. Read as IOB2, the same spans, counted.
  directory = write_goo(
      tmp_path / "train",
      ["fly from new york city to nice", "play jazz now"],
      ["O O B-city I-city E-city O S-city", "O U-genre O"],
      ["Fly", "Play"])
  split = intent_slot_files.read_intent_slot(directory)
  assert split.tags == [["O", "O", "B-city", "I-city", "I-city", "O",
                         "B-city"], ["O", "B-genre", "O"]]
  assert (split.iob_repairs, split.bioes) == (3, True)
  assert split.first_iob_repair == (
      f"{os.path.join(directory, 'seq.out')}, line 1: slot tag 5 'E-city' "
      "is BIOES or BILOU")
  # BILOU in JSONL; an end without its beginning starts a span, as an IOB1
  # I- does.
  path = write_jsonl(tmp_path / "valid.jsonl", [
      {"tokens": ["new", "york", "paris"], "tags": ["B-city", "L-city",
                                                     "L-city"],
       "intent": "Go"}])
  split = intent_slot_files.read_intent_slot(path)
  assert split.tags == [["B-city", "I-city", "B-city"]]
  assert split.first_iob_repair.endswith("slot tag 2 'L-city' is BIOES or "
                                         "BILOU")
  # conlleval's chunks of the BIOES tags are the chunks read.
  assert metrics.iob_chunks(split.tags[0]) == metrics.iob_chunks(
      ["B-city", "E-city", "S-city"])
  # IOB1 alone is not BIOES.
  iob1 = intent_slot_files.read_intent_slot(write_goo(
      tmp_path / "iob1", ["to paris"], ["O I-city"], ["Go"]))
  assert (iob1.iob_repairs, iob1.bioes) == (1, False)


@pytest.mark.parametrize("intent, match", [
    ("", "which is empty"), ("Play Music", "which holds whitespace")])
def test_goo_intent_empty_or_with_whitespace(tmp_path, intent, match):
  directory = write_goo(tmp_path / "train", ["play", "stop"], ["O", "O"],
                        ["Play", intent])
  raises(f"label, line 2: the intent is '{intent}', {match}",
         intent_slot_files.read_intent_slot, directory)


def test_goo_empty_query(tmp_path):
  directory = write_goo(tmp_path / "train", ["play", " "], ["O", ""],
                        ["A", "B"])
  raises("seq.in, line 2: the query is empty",
         intent_slot_files.read_intent_slot, directory)


def test_read_intent_slot_jsonl(tmp_path):
  path = write(tmp_path / "train.jsonl",
               '{"tokens": ["play", "jazz"], "tags": ["O", "B-genre"], '
               '"intent": "PlayMusic"}\r\n\r\n'
               '{"tokens": ["stop"], "tags": ["O"], "intent": "Stop"}\r\n')
  split = intent_slot_files.read_intent_slot(path)
  assert split.words == [["play", "jazz"], ["stop"]]
  assert split.tags == [["O", "B-genre"], ["O"]]
  assert split.intents == ["PlayMusic", "Stop"]
  assert split.line_numbers == [1, 3]


def test_read_intent_slot_jsonl_test_split_without_labels(tmp_path):
  path = write_jsonl(tmp_path / "test.jsonl",
                     [{"tokens": ["play"]}, {"tokens": ["stop"]}])
  split = intent_slot_files.read_intent_slot(path, require_labels=False)
  assert split.tags is None and split.intents is None


@pytest.mark.parametrize("query, change, match", [
    (GOOD_QUERY, {"tags": ["O"]},
     "there is 1 slot tag .* but 'tokens' has 2 words"),
    (GOOD_QUERY, {"tags": ["O", "CITY"]},
     "slot tag 2 is 'CITY', which is not an IOB"),
    (GOOD_QUERY, {"tokens": "in paris"}, "'tokens' is a JSON string"),
    (GOOD_QUERY, {"tokens": ["in", 3]}, "'tokens' holds a JSON number 3"),
    (GOOD_QUERY, {"tags": ["O", None]}, "'tags' holds a JSON null"),
    (GOOD_QUERY, {"tokens": []}, "'tokens' is empty"),
    (GOOD_QUERY, {"tokens": ["in", "new york"], "tags": ["O", "B-city"]},
     "token 2 is 'new york', which is several words"),
    (GOOD_QUERY, {"intent": "go there"},
     "the intent is 'go there', which holds whitespace"),
    (GOOD_QUERY, {"intent": None}, "'intent' is null"),
    # Character spans.
    (SPAN_QUERY, {"spans": [[7, 99, "city"]]},
     "span 1 runs from 7 to 99, but the text has 20 characters"),
    (SPAN_QUERY, {"spans": [[9, 7, "city"]]}, "span 1 runs from 9 to 7"),
    (SPAN_QUERY, {"spans": [[6, 7, "city"]]},
     r"span 1 \(6 to 7, ' '\) holds no word"),
    (SPAN_QUERY, {"spans": [[7, 10, "city"], [9, 15, "state"]]},
     r"the word 'new' \(word 3\) is in span 1 and in span 2"),
    (SPAN_QUERY, {"spans": [[7, 15, "home city"]]},
     "span 1's label is 'home city'"),
    (SPAN_QUERY, {"spans": [[7, "15", "city"]]},
     r"span 1 is \[7, '15', 'city'\]"),
    (SPAN_QUERY, {"spans": [{"begin": 7, "end": 15, "label": "city"}]},
     "span 1 is"),
    (SPAN_QUERY, {"spans": [[7, True, "city"]]}, "span 1 is"),
    (SPAN_QUERY, {"spans": "7-15 city"}, "'spans' is a JSON string"),
    (SPAN_QUERY, {"spans": None}, "'spans' is null"),
    (SPAN_QUERY, {"text": ["fly"]}, "'text' is a JSON array"),
    (SPAN_QUERY, {"text": "   "}, "'text' is empty"),
    (SPAN_QUERY, {"intent": None}, "'intent' is null"),
])
def test_bad_intent_slot_jsonl_lines(tmp_path, query, change, match):
  path = write_jsonl(tmp_path / "train.jsonl", [query, dict(query, **change)])
  raises("line 2: " + match, intent_slot_files.read_intent_slot, path)


# -----------------------------------------------------------------------------
# JSONL with character spans.
# -----------------------------------------------------------------------------


def test_spans_tag_whole_words_in_each_form(tmp_path):
  path = write_jsonl(tmp_path / "train.jsonl", [
      SPAN_QUERY,  # doccano: [start, end, type]; 'york,' keeps its comma.
      {"text": "  book a table\tfor two  in  paris ",  # Prodigy's dicts.
       "spans": [{"start": 27, "end": 32, "label": "city"},
                 {"start": 19, "end": 21, "label": "party_size"}],
       "intent": "Book"},
      {"text": "wake me at 9am", "spans": [[12, 14, "period"]],
       "intent": "Alarm"},  # Half a word tags the word.
      {"text": "stop", "spans": [], "intent": "Stop"},
      {"text": "play jazz", "spans": [{"start": 5, "end": 9,
                                       "labels": ["genre"]}],  # Label Studio.
       "intent": "Play"},
      GOOD_QUERY,  # The token form may stand beside it.
  ])
  split = intent_slot_files.read_intent_slot(path)
  assert split.words == [
      ["fly", "to", "new", "york,", "now"],
      ["book", "a", "table", "for", "two", "in", "paris"], ["wake", "me",
                                                             "at", "9am"],
      ["stop"], ["play", "jazz"], ["in", "paris"]]
  assert split.tags == [
      ["O", "O", "B-city", "I-city", "O"],
      ["O", "O", "O", "O", "B-party_size", "O", "B-city"],
      ["O", "O", "O", "B-period"], ["O"], ["O", "B-genre"], ["O", "B-city"]]
  assert split.intents == ["Go", "Book", "Alarm", "Stop", "Play", "Go"]
  assert split.line_numbers == [1, 2, 3, 4, 5, 6]


def test_span_offsets_count_code_points(tmp_path):
  # 'é' and the emoji are one character each, as Python counts them; words
  # are split at any Unicode whitespace, as str.split splits them.
  text = "café \U0001F600\u00a0in\u3000paris"
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"text": text, "spans": [[text.index("paris"), len(text), "city"]],
       "intent": "Go"}])
  assert intent_slot_files.read_intent_slot(path).tags == [
      ["O", "O", "O", "B-city"]]


def test_span_test_split_without_labels_and_the_dataset_kind(tmp_path):
  path = write_jsonl(tmp_path / "test.jsonl", [{"text": "play jazz"}])
  split = intent_slot_files.read_intent_slot(path, require_labels=False)
  assert (split.words, split.tags, split.intents) == ([["play", "jazz"]],
                                                      None, None)
  write_jsonl(tmp_path / "d" / "train.jsonl", [SPAN_QUERY])
  assert layout.peek_jsonl_kind(str(tmp_path / "d" / "train.jsonl")) == (
      examples.INTENT_SLOT)


def test_doccano_intent_and_slot_export_is_read_as_it_is(tmp_path):
  # doccano's "Intent Detection and Slot Filling" JSONL export: spans as
  # "entities", the intent as "cats" (a list), its own keys beside them; a
  # relation-mode project's spans as dicts of "start_offset"/"end_offset".
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"id": 7, "text": "fly to new york, now", "Comments": [],
       "entities": [[7, 15, "city"]], "cats": ["Go"]},
      {"id": 8, "text": "play jazz", "entities": [
          {"id": 1, "label": "genre", "start_offset": 5, "end_offset": 9}],
       "cats": ["Play"]},
      {"id": 9, "text": "stop", "entities": [], "cats": ["Stop"]},
      SPAN_QUERY,  # The package's own form may stand beside it.
  ])
  split = intent_slot_files.read_intent_slot(path)
  assert split.words == [["fly", "to", "new", "york,", "now"],
                         ["play", "jazz"], ["stop"],
                         ["fly", "to", "new", "york,", "now"]]
  assert split.tags == [["O", "O", "B-city", "I-city", "O"], ["O", "B-genre"],
                        ["O"], ["O", "O", "B-city", "I-city", "O"]]
  assert split.intents == ["Go", "Play", "Stop", "Go"]
  assert layout.peek_jsonl_kind(path) == examples.INTENT_SLOT


DOCCANO_QUERY = {"id": 1, "text": "play jazz", "entities": [[5, 9, "genre"]],
                 "cats": ["Play"]}


@pytest.mark.parametrize("change, match", [
    ({"cats": []}, "'cats' is empty. Expected an intent name in a list of "
     "one. doccano exports a text nobody labelled with no intent"),
    ({"cats": ["Play", "Stop"]},
     r"'cats' is a JSON array: \['Play', 'Stop'\].*give its main one"),
    ({"cats": [" "]}, "the intent is"),
    ({"entities": "5-9 genre"}, "'entities' is a JSON string"),
    ({"entities": None}, "'entities' is null"),
    ({"entities": [{"label": "genre", "start_offset": 5}]}, "span 1 is"),
])
def test_bad_doccano_lines(tmp_path, change, match):
  path = write_jsonl(tmp_path / "train.jsonl",
                     [DOCCANO_QUERY, dict(DOCCANO_QUERY, **change)])
  raises("line 2: " + match, intent_slot_files.read_intent_slot, path)


def test_doccano_export_without_cats_names_them(tmp_path):
  bad = {k: v for k, v in DOCCANO_QUERY.items() if k != "cats"}
  path = write_jsonl(tmp_path / "train.jsonl", [DOCCANO_QUERY, bad])
  raises(r"line 2: the object has no key 'intent'.*or doccano's 'text', "
         "'entities' and 'cats'", intent_slot_files.read_intent_slot, path)


@pytest.mark.parametrize("query, key, keys", [
    (GOOD_QUERY, "tags", r"\['tokens', 'intent'\]"),
    (SPAN_QUERY, "spans", r"\['text', 'intent'\]"),
])
def test_intent_slot_jsonl_missing_key(tmp_path, query, key, keys):
  bad = {k: v for k, v in query.items() if k != key}
  path = write_jsonl(tmp_path / "train.jsonl", [query, bad])
  raises(rf"line 2: the object has no key '{key}'; its keys are {keys}. "
         r"Expected the keys \['tokens', 'tags', 'intent'\] or \['text', "
         r"'spans', 'intent'\]", intent_slot_files.read_intent_slot, path)


# -----------------------------------------------------------------------------
# A slot tagger's data: queries without intents.
# -----------------------------------------------------------------------------


def test_queries_without_intents_are_read_where_intents_are_optional(
    tmp_path):
  # Each form without its intent; the default still requires one.
  tokens = {k: v for k, v in GOOD_QUERY.items() if k != "intent"}
  spans = {k: v for k, v in SPAN_QUERY.items() if k != "intent"}
  path = write_jsonl(tmp_path / "train.jsonl", [tokens, spans])
  split = intent_slot_files.read_intent_slot(path, require_intents=False)
  assert split.intents is None
  assert split.tags[1] == ["O", "O", "B-city", "I-city", "O"]
  raises("line 1: the object has no key 'intent'",
         intent_slot_files.read_intent_slot, path)
  directory = write_goo(tmp_path / "goo", ["play jazz"], ["O B-genre"])
  split = intent_slot_files.read_intent_slot(directory,
                                             require_intents=False)
  assert (split.tags, split.intents) == ([["O", "B-genre"]], None)
  # The tags stay required.
  raises("has no seq.out; it holds seq.in. Expected the files seq.in",
         intent_slot_files.read_intent_slot,
         write_goo(tmp_path / "bare", ["play jazz"]), require_intents=False)


def test_intents_on_some_queries_only_are_refused(tmp_path):
  no_intent = {k: v for k, v in SPAN_QUERY.items() if k != "intent"}
  path = write_jsonl(tmp_path / "train.jsonl", [SPAN_QUERY, no_intent])
  raises("line 2: the example has no 'intent', but the one on line 1 has "
         "one. Expected an 'intent' on every line, or on none",
         intent_slot_files.read_intent_slot, path, require_intents=False)
  # A key with nothing in it is a line left unlabelled, not a tagger's.
  empty = write_jsonl(tmp_path / "empty.jsonl",
                      [dict(DOCCANO_QUERY, cats=[])])
  raises("line 1: 'cats' is empty.*doccano exports a text nobody labelled",
         intent_slot_files.read_intent_slot, empty, require_intents=False)


def _prodigy_line(text, spans, answer="accept", **keys):
  """A line of `prodigy db-out` of ner.manual: its tokens and spans (with
  token indices), hashes and view id, as Prodigy writes them."""
  tokens, start = [], 0
  for i, word in enumerate(text.split()):
    start = text.index(word, start)
    tokens.append({"text": word, "start": start, "end": start + len(word),
                   "id": i, "ws": True})
    start += len(word)
  marked = []
  for words, label in spans:
    begin = text.index(words)
    marked.append({"start": begin, "end": begin + len(words),
                   "token_start": 0, "token_end": 0, "label": label})
  return dict(text=text, _input_hash=1, _task_hash=2, tokens=tokens,
              spans=marked, _view_id="ner_manual", answer=answer, **keys)


def test_prodigy_ner_export_is_read_as_it_is(tmp_path):
  path = write_jsonl(tmp_path / "train.jsonl", [
      _prodigy_line("play norah jones on spotify",
                    [("norah jones", "artist"), ("spotify", "service")]),
      _prodigy_line("this is junk", [], "reject"),
      _prodigy_line("book a table in paris", [("paris", "city")]),
      _prodigy_line("weather in oslo", [("oslo", "city")], "ignore"),
      _prodigy_line("stop", [])])
  assert layout.peek_jsonl_kind(path) == examples.INTENT_SLOT
  split = intent_slot_files.read_intent_slot(path, require_intents=False)
  assert split.words == [["play", "norah", "jones", "on", "spotify"],
                         ["book", "a", "table", "in", "paris"], ["stop"]]
  assert split.tags == [["O", "B-artist", "I-artist", "O", "B-service"],
                        ["O", "O", "O", "O", "B-city"], ["O"]]
  assert (split.intents, split.line_numbers, split.left_out) == (
      None, [1, 3, 5], [2, 4])
  # An intent picked in a choice block: "accept", a list of one.
  path = write_jsonl(tmp_path / "intents.jsonl", [
      _prodigy_line("play jazz", [("jazz", "genre")], accept=["PlayMusic"]),
      _prodigy_line("stop", [], accept=["Stop"])])
  split = intent_slot_files.read_intent_slot(path)
  assert (split.intents, split.tags) == (["PlayMusic", "Stop"],
                                         [["O", "B-genre"], ["O"]])
  empty = write_jsonl(tmp_path / "empty.jsonl", [
      _prodigy_line("stop", [], accept=[])])
  raises("line 1: 'accept' is empty.*Pick the intent in Prodigy",
         intent_slot_files.read_intent_slot, empty)
  # Prodigy's token objects without its spans are no tokens-and-tags line.
  classes = write_jsonl(tmp_path / "classes.jsonl", [
      {"text": "great", "tokens": [{"text": "great", "start": 0, "end": 5}],
       "label": "POS"}])
  assert layout.peek_jsonl_kind(classes) == examples.TEXT_CLASSIFICATION


def test_doccano_sequence_labelling_export_is_read_as_it_is(tmp_path):
  # doccano's sequence-labelling JSONL export: the spans under "label".
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"id": 3, "text": "stop", "label": [], "Comments": []},
      {"id": 4, "text": "fly to new york, now", "label": [[7, 15, "city"]],
       "Comments": []},
      {"id": 5, "text": "play jazz", "label": [
          {"start_offset": 5, "end_offset": 9, "label": "genre"}]},
  ])
  split = intent_slot_files.read_intent_slot(path, require_intents=False)
  assert split.tags == [["O"], ["O", "O", "B-city", "I-city", "O"],
                        ["O", "B-genre"]]
  assert split.intents is None
  # Its first line's label is empty: the first that is not decides.
  assert layout.peek_jsonl_kind(path) == examples.INTENT_SLOT
  classes = write_jsonl(tmp_path / "classes.jsonl", [
      {"text": "good", "label": []}, {"text": "bad", "label": ["neg"]}])
  assert layout.peek_jsonl_kind(classes) == examples.TEXT_CLASSIFICATION


def test_hugging_face_ner_tags_are_read_as_the_tags(tmp_path):
  # `Dataset.to_json` of a token-classification set whose tags are
  # strings: {"tokens", "ner_tags"}, other columns beside them; IOB1 as in
  # every format.
  path = write_jsonl(tmp_path / "train.jsonl", [
      {"id": "0", "tokens": ["EU", "rejects", "German", "call"],
       "pos_tags": [22, 42, 16, 21],
       "ner_tags": ["B-ORG", "O", "I-MISC", "O"]},
      {"id": "1", "tokens": ["Peter", "Blackburn"],
       "ner_tags": ["B-PER", "I-PER"]}])
  assert layout.peek_jsonl_kind(path) == examples.INTENT_SLOT
  split = intent_slot_files.read_intent_slot(path, require_intents=False)
  assert split.tags == [["B-ORG", "O", "B-MISC", "O"], ["B-PER", "I-PER"]]
  assert (split.intents, split.iob_repairs) == (None, 1)
  # Its ClassLabel ids, as `to_json` writes them: the fix says how to
  # write the names.
  ids = write_jsonl(tmp_path / "ids.jsonl", [
      {"tokens": ["EU", "rejects"], "ner_tags": [3, 0]}])
  raises(r"ids.jsonl, line 1: 'ner_tags' holds class ids, \[3, 0\]. "
         r"Expected tag names.*feature.names",
         intent_slot_files.read_intent_slot, ids, require_intents=False)
  raises(r"line 1: 'ner_tags' is null",
         intent_slot_files.read_intent_slot,
         write_jsonl(tmp_path / "null.jsonl",
                     [{"tokens": ["EU"], "ner_tags": None}]),
         require_intents=False)


def test_conll_files_are_a_slot_taggers_sentences(tmp_path):
  # CoNLL-2003's four columns (word, POS, chunk, IOB1 tag) and its
  # -DOCSTART- lines, or two columns; a blank line between sentences.
  path = write(tmp_path / "train.conll",
               "-DOCSTART- -X- -X- O\n\n"
               "EU NNP B-NP I-ORG\nrejects VBZ B-VP O\n"
               "German JJ B-NP I-MISC\n\n\n"
               "Peter B-PER\nBlackburn I-PER\n")
  split = intent_slot_files.read_intent_slot(path, require_intents=False)
  assert split.words == [["EU", "rejects", "German"], ["Peter", "Blackburn"]]
  # IOB1 span starts read as IOB2 and counted, as in every format.
  assert split.tags == [["B-ORG", "O", "B-MISC"], ["B-PER", "I-PER"]]
  assert (split.intents, split.line_numbers, split.iob_repairs) == (
      None, [3, 8], 2)
  raises("a CoNLL file gives its sentences no intent",
         intent_slot_files.read_intent_slot, path)
  # Written back, it reads as the same sentences.
  again = write(tmp_path / "again.conll",
                intent_slot_files.to_conll(split.words, split.tags))
  assert intent_slot_files.read_intent_slot(
      again, require_intents=False).tags == split.tags
  # A test split may give the words alone; labelled splits may not.
  test = write(tmp_path / "test.conll", "Peter\nBlackburn\n\nParis\n")
  assert intent_slot_files.read_intent_slot(
      test, require_labels=False).words == [["Peter", "Blackburn"], ["Paris"]]
  raises(r"test.conll, line 1: the line 'Peter' has a word but no tag",
         intent_slot_files.read_intent_slot, test, require_intents=False)
  # Label Studio's CONLL2003 export: 'word -X- _ tag' lines.
  studio = write(tmp_path / "studio.conll",
                 "-DOCSTART- -X- O\nShowers -X- _ O\nin -X- _ O\n"
                 "Bahia -X- _ B-Location\n\nRain -X- _ O\n")
  split = intent_slot_files.read_intent_slot(studio, require_intents=False)
  assert split.tags == [["O", "O", "B-Location"], ["O"]]
  # BIOES tags read as IOB2 (test_bioes_and_bilou_tags_are_read_as_iob2).
  bioes = write(tmp_path / "bioes.conll", "Peter B-PER\nBlackburn E-PER\n")
  assert intent_slot_files.read_intent_slot(
      bioes, require_intents=False).tags == [["B-PER", "I-PER"]]
  bad = write(tmp_path / "bad.conll", "Peter B-PER\nBlackburn X-PER\n")
  raises("slot tag 2 is 'X-PER', which is not an IOB tag",
         intent_slot_files.read_intent_slot, bad, require_intents=False)
