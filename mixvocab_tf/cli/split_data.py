r"""Splits one labelled file into the splits the own-data job reads.

The own-data job needs a validation split beside train. From one labelled
.csv, .tsv or .jsonl file, one Rasa NLU .yml file or a Rasa project's
`data` folder, a Label Studio JSON or JSON-MIN export (written as JSONL
splits), or one directory holding seq.in, seq.out and label, this writes
`train` and `validation` (and `test` with --test_fraction) into
--output_dir, stratified by label and seeded (`datasets.splitting`), in the
input's format, and prints a JSON summary.
Given a dataset directory with train (and test) but no validation, it
splits its train and copies its test:

  mixvocab-split-data --data=all.csv --output_dir=my_data
  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = 'my_data'" --model_dir=runs/mine

The file is checked as the job checks a split first: a broken record stops
it, naming the line.
"""

import json

from absl import flags
from absl import logging

from mixvocab_tf.cli import console
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import splitting

FLAGS = flags.FLAGS


def define_flags():
  """The command's flags (`run` defines them; importing this does not)."""
  flags.DEFINE_string(
      "data", None,
      "One labelled .csv, .tsv or .jsonl file, a Rasa NLU .yml file or a "
      "folder of them, a Label Studio JSON export, a directory holding "
      "seq.in, seq.out and label, or a dataset directory with train (and "
      "test) but no validation: its train is split, its test copied.")
  flags.DEFINE_string(
      "output_dir", None,
      "The dataset directory to write (the job's DATA_DIR); it must hold no "
      "split yet.")
  flags.DEFINE_float(
      "validation_fraction", 0.1,
      "Share of each label's examples that goes to validation.")
  flags.DEFINE_float(
      "test_fraction", 0.0,
      "Share of each label's examples that goes to test (0: no test split).")
  flags.DEFINE_integer("seed", 0, "Seeds the draw.")
  flags.DEFINE_string(
      "text_column", "text",
      "The text's column or key (a Label Studio export: the data key).")
  flags.DEFINE_string(
      "text_b_column", None,
      "The second text's column of a pair (None: 'text_b' when the file has "
      "'text_a' and 'text_b' and no 'text').")
  flags.DEFINE_string(
      "label_column", "label",
      "The label's column or key (a Label Studio export: the Choices "
      "control to read, if it has several).")


def _run():
  summary = splitting.split_dataset(
      FLAGS.data, FLAGS.output_dir,
      validation_fraction=FLAGS.validation_fraction,
      test_fraction=FLAGS.test_fraction, seed=FLAGS.seed,
      text_column=FLAGS.text_column, text_b_column=FLAGS.text_b_column,
      label_column=FLAGS.label_column)
  sizes = ", ".join(f"{split} {count:,}"
                    for split, count in summary["examples"].items())
  logging.info("Wrote %s (%s); %s.", summary["output_dir"], sizes,
               "no intents: a slot tagger's data" if summary["slot_tagger"]
               else f"{summary['labels']} labels")
  if summary.get("tasks_left_out"):
    count = summary["tasks_left_out"]
    logging.warning(
        "%s of the Label Studio export %s no annotation (or only cancelled "
        "ones): left out.", errors.plural(count, "task"),
        "has" if count == 1 else "have")
  if summary.get("lines_left_out"):
    count = summary["lines_left_out"]
    logging.warning(
        "%s of %s %s answered 'reject' or 'ignore' (Prodigy's export keeps "
        "every answer): left out, in no split.",
        errors.plural(count, "line"), summary["input"],
        "is" if count == 1 else "are")
  alone = summary["labels_only_in_train"]
  if alone:
    logging.warning(
        "%d of %d labels have too few examples for one in validation at "
        "%s and stay in train only (their validation scores are not "
        "measured): %s.", len(alone), summary["labels"],
        FLAGS.validation_fraction,
        ", ".join(map(repr, alone[:20])) +
        (f" and {len(alone) - 20} more" if len(alone) > 20 else ""))
  tables = summary.get("lookup_tables")
  if tables and summary["kind"] == "intent_slot":
    logging.info(
        "Wrote %s: %s (%s), lists of slot values for the job's "
        "slot-swapped copies, read where their names are slot types. Add "
        "--gin_bindings=\"SLOT_VALUES = '%s'\" to use them.",
        summary["lookups"], errors.plural(len(tables), "lookup table"),
        ", ".join(tables[:10]) +
        (f" and {len(tables) - 10} more" if len(tables) > 10 else ""),
        summary["lookups"])
  print(json.dumps(summary, indent=1))


def main(argv):
  """The absl main of `mixvocab-split-data` (flags: `define_flags`)."""
  console.run_tool(argv, _run)


def run():
  """The `mixvocab-split-data` console script."""
  define_flags()
  flags.mark_flags_as_required(["data", "output_dir"])
  console.run_main(main, __name__)


if __name__ == "__main__":
  run()
