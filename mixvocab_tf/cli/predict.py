r"""Answers queries with an exported student: text lines in, JSON lines out.

`mixvocab-predict` runs a SavedModel (`mixvocab-export`) or a .tflite
(`mixvocab-convert`; raw strings in, or the builtin-ops file beside it, which
the predictor tokenizes for) on text through the predictor of
`mixvocab_tf/serving/predictor.py` (`load_predictor`, whose docstring has the
records, the vocabulary and the label names it reads):

  mixvocab-predict --model=/tmp/snips_export --input=queries.txt
  echo "play norah jones" | mixvocab-predict --model=/tmp/snips.tflite \
      --input=- --top_k=3
  mixvocab-predict --model=/tmp/mrpc_export --input=pairs.tsv \
      --output=predictions.jsonl

(`python -m mixvocab_tf.cli.predict` in a checkout, the same flags.)

`--input` (a file, or `-` for stdin; UTF-8): one example per line, either
plain text (for a sentence-pair model, a tab separates text_a and text_b) or
a JSON object with `text` (pairs: `text_a` and `text_b`; the model's own
input names `sentence`, `sentence_a`, `sentence_b` are read too), told apart
per line by a leading `{`. Blank lines are skipped.

`--output` (a file, or `-` for stdout, the default): one JSON object per
example, in input order: the predictor's record (`intent` or `label`,
`score`, `top_k`; `words`, `tags`, `tag_scores` and `slots`, each with its
`score`, of an intent and slot model;
`unreadable_words`, counted against `--vocab` or the model's own), or with
`--output_format=rasa` the shape of Rasa's parse result (`rasa_files.
parse_result`: `intent` {name, confidence}, `entities` with their
`confidence_entity`, `intent_ranking`;
`--synonyms=data/nlu.yml` maps the entities' values by its synonyms), or
with `--output_format=doccano` the JSONL doccano imports: `text`,
`entities` ([start, end, type]) and `cats` ([intent]), or `text` and
`label` ([label]; a slot tagger's: its spans), with `score` and `top_k`
beside them, so that unlabelled texts load into a doccano project
pre-annotated with the model's answers, or with `--output_format=prodigy`
the tasks Prodigy streams: `text`, `spans` ({start, end, label}, which
`ner.manual` shows to correct) and `accept` ([intent] or [label]), the
score under `meta`, or with `--output_format=label_studio` one JSON list
of the tasks a Label Studio project imports, each answer its prediction
(spans as `labels` results, offsets in the UTF-16 units its browser
counts; the intent or label as a `choices` one; the score, a slot
tagger's least sure word's, to sort by), under the project's names
(`--label_studio_project`: its JSON export, or the `label_studio.json`
that `mixvocab-split-data` wrote, or the splits' directory) or Label
Studio's templates' (`text`, `label`, `sentiment`; an intent's Choices
`intent`).

Examples are run in batches of `--batch_size` (64). Errors the user can fix
(a missing model, a directory that holds no SavedModel, a pair model given a
line without a tab, an unreadable input) end with one line on stderr and exit
status 1.
"""

import json
import os
import sys
from typing import Iterable, Iterator, Optional, Sequence, Tuple

from absl import flags

from mixvocab_tf.cli import console
from mixvocab_tf.datasets import examples
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.jobs import export_steps
from mixvocab_tf.serving import predictor as predictor_lib


def define_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
  """Defines the command's flags (`run` does; importing this module does
  not, so that it imports beside every other command)."""
  flags.DEFINE_string(
      "model", None, "A SavedModel directory (mixvocab-export) or a .tflite "
      "file (mixvocab-convert: raw strings in, or its *_builtin.tflite).",
      flag_values=flag_values)
  flags.DEFINE_string(
      "input", None, "UTF-8 text, one example per line (a tab between the "
      "texts of a pair), or JSON lines with \"text\" (\"text_a\", "
      "\"text_b\"); '-' reads stdin.", flag_values=flag_values)
  flags.DEFINE_string("output", "-", "Where to write JSON lines; '-' is "
                      "stdout.", flag_values=flag_values)
  flags.DEFINE_integer("top_k", 1, "How many labels each record ranks.",
                       lower_bound=1, flag_values=flag_values)
  flags.DEFINE_integer("batch_size", predictor_lib.BATCH_SIZE, "Examples per "
                       "call of the model.", lower_bound=1,
                       flag_values=flag_values)
  flags.DEFINE_enum(
      "output_format", "json",
      ["json", "rasa", "doccano", "prodigy", "label_studio"],
      "json: the "
      "predictor's records; rasa: Rasa's parse result (intent, entities with "
      "role, intent_ranking), as a Rasa server answers; doccano: the JSONL "
      "doccano imports (text, entities, cats; or text, label), the answers "
      "as annotations to correct there (and a train split's lines once "
      "corrected); prodigy: the tasks Prodigy streams (text, spans as "
      "{start, end, label}, accept: [intent or label], meta: {score}), for "
      "its recipes to correct; label_studio: one JSON list of tasks a "
      "Label Studio project imports, each answer its prediction.",
      flag_values=flag_values)
  flags.DEFINE_string(
      "label_studio_project", None, "With --output_format=label_studio: the "
      "project's JSON export, or the label_studio.json mixvocab-split-data "
      "wrote (or its directory), whose names (data key, Text tag, Labels "
      "and Choices controls) the tasks use; default: Label Studio's "
      "templates' (text, label, sentiment; intent).",
      flag_values=flag_values)
  flags.DEFINE_string(
      "synonyms", None, "With --output_format=rasa: a Rasa NLU file, or a "
      "folder of them, whose synonyms map the entities' values, as Rasa's "
      "EntitySynonymMapper does.", flag_values=flag_values)
  flags.DEFINE_string(
      "vocab", None, "The student's vocab.txt, against which each record's "
      "`unreadable_words` are counted; default: the SavedModel's own, "
      "<model>.vocab.txt beside a .tflite, else the shipped student "
      "vocabulary.", flag_values=flag_values)


def read_rows(lines: Iterable[bytes], source: str
             ) -> Iterator[Tuple[str, predictor_lib.Row]]:
  """(where, row) of each non-blank line: a dict for a line starting with
  '{' (JSON), else the line's text.

  Raises:
    ValueError: a line that is not UTF-8, or not JSON though it starts with
      '{'.
  """
  for number, raw in enumerate(lines, 1):
    where = f"line {number} of {source}"
    try:
      line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
      raise ValueError(
          f"{where} is not UTF-8 text (byte {e.start}: "
          f"{raw[e.start:e.start + 1]!r}); expected UTF-8 text, one example "
          "per line.") from None
    if number == 1:
      line = line.removeprefix("\ufeff")  # A byte-order mark.
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip():
      continue
    if line.lstrip().startswith("{"):
      try:
        row = json.loads(line)
      except json.JSONDecodeError as e:
        raise ValueError(
            f"{where} starts with '{{' but is not a JSON object ({e.msg} at "
            f"column {e.colno}); a line starting with '{{' is read as JSON "
            "with \"text\" (or \"text_a\" and \"text_b\").") from None
      yield where, row
    else:
      yield where, line


def _open_input(path):
  if path == "-":
    return sys.stdin.buffer, "stdin"
  try:
    return open(path, "rb"), path
  except OSError as e:
    raise type(e)(
        f"Cannot read --input={path}: {e.strerror}; expected a UTF-8 text "
        "file, one example per line, or - for stdin.") from None


def _open_output(path):
  if path == "-":
    return sys.stdout.buffer
  try:
    return open(path, "wb")
  except OSError as e:
    raise type(e)(f"Cannot write --output={path}: {e.strerror}.") from None


def _run(values):
  if not values.model:
    raise ValueError("--model is required: a SavedModel directory "
                     "(mixvocab-export) or a .tflite file "
                     "(mixvocab-convert).")
  if not values.input:
    raise ValueError("--input is required: a UTF-8 text file, one example "
                     "per line, or - for stdin.")
  if values.synonyms and values.output_format != "rasa":
    raise ValueError("--synonyms maps the values of Rasa's parse result: "
                     "give --output_format=rasa with it.")
  if (values.label_studio_project and
      values.output_format != "label_studio"):
    raise ValueError("--label_studio_project names the controls of Label "
                     "Studio's tasks: give --output_format=label_studio "
                     "with it.")
  names = (label_studio.read_names(values.label_studio_project)
           if values.label_studio_project else None)
  synonyms = None
  if values.synonyms:
    if not os.path.exists(values.synonyms):
      raise FileNotFoundError(
          f"--synonyms={values.synonyms} does not exist; expected a Rasa "
          "NLU file or a folder of them.")
    synonyms = rasa_files.read_synonyms(
        rasa_files.nlu_files(values.synonyms)
        if os.path.isdir(values.synonyms) else [values.synonyms])
  stream, source = _open_input(values.input)
  try:
    predictor = predictor_lib.load_predictor(values.model, values.batch_size,
                               values.vocab)
    predictor.check_top_k(values.top_k)
    if values.output_format != "json" and predictor.pair:
      what = {"rasa": "Rasa's parse result",
              "doccano": "doccano's records",
              "prodigy": "Prodigy's tasks",
              "label_studio": "Label Studio's tasks"}[values.output_format]
      raise ValueError(
          f"--output_format={values.output_format} writes {what}, which "
          f"hold one text; {values.model} is a sentence-pair model. Use "
          "--output_format=json.")
    shapes = {
        "json": lambda record: record,
        "rasa": lambda record: rasa_files.parse_result(record, synonyms),
        "doccano": lambda record: export_steps.to_train_record(
            record, form=export_steps.DOCCANO),
        "prodigy": lambda record: export_steps.to_train_record(
            record, form=export_steps.PRODIGY)}
    if values.output_format == "label_studio":
      names = _label_studio_names(predictor, names)
      shapes["label_studio"] = lambda record: label_studio.to_task(
          dict(record, score=export_steps.sureness(record)), names)
    shape = shapes[values.output_format]
    # Label Studio imports one JSON list; the other forms are JSON lines.
    as_list = values.output_format == "label_studio"
    examples = (predictor.parse_row(row, where)
                for where, row in read_rows(stream, source))
    records = predictor.predict_examples(examples, values.top_k)
    out = _open_output(values.output)
    try:
      count = 0
      for count, record in enumerate(records, 1):
        # A lone surrogate (from a JSON escape) is written as its JSON
        # escape again; everything else as UTF-8.
        line = json.dumps(shape(record), ensure_ascii=False)
        if as_list:
          line = ("[\n" if count == 1 else ",\n") + line
        else:
          line += "\n"
        out.write(line.encode("utf-8", "backslashreplace"))
        if count % predictor.batch_size == 0:
          out.flush()
      if as_list:
        out.write(b"\n]\n" if count else b"[]\n")
      out.flush()
    except BrokenPipeError:
      # The reader of stdout left (e.g. `| head`): stop quietly, without
      # another error when Python flushes stdout at exit.
      os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
      sys.exit(1)
    finally:
      if out is not sys.stdout.buffer:
        out.close()
  finally:
    if stream is not sys.stdin.buffer:
      stream.close()


def _label_studio_names(predictor, names):
  """The names Label Studio's tasks use: the project's (`names`), else its
  templates', said on stderr; a slot tagger's tasks pick no choice."""
  slot_tagger = (predictor.kind == "intent_slot" and
                 tuple(predictor.labels or ()) == (examples.NO_INTENT,))
  if names is None:
    names = label_studio.template_names(predictor.kind == "intent_slot",
                                        slot_tagger)
    print("Label Studio tasks under its templates' names (the Text tag "
          f"{names['to_name']!r} of ${names['text']}, the Labels "
          f"{names['labels']!r}" + (f", the Choices {names['choices']!r}"
                                    if names["choices"] else "") +
          "); --label_studio_project=<the project's JSON export> gives the "
          "project's own.", file=sys.stderr)
  return dict(names, choices=None) if slot_tagger else names


def main(argv: Sequence[str],
         flag_values: Optional[flags.FlagValues] = None) -> None:
  """The absl main of `mixvocab-predict`.

  Args:
    argv: what absl leaves of the command line (no positional arguments).
    flag_values: parsed flags of `define_flags` (default: absl's `FLAGS`).
  """
  values = flags.FLAGS if flag_values is None else flag_values
  # OSError: an input that cannot be read, an output that cannot be written.
  console.run_tool(argv, lambda: _run(values), (ValueError, OSError))


def run():
  """The `mixvocab-predict` console script."""
  define_flags()
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
