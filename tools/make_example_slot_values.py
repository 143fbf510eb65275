"""Writes examples/slot_values/: lists of slot values for examples/intent_slot.

An app's catalogue stands in as the slot values of the SNIPS train queries
that the example's train split does not hold (SNIPS as the package ships
it), one `<slot type>.txt` per slot type of that split, each value once, in
the order met. The example's dev and test queries come from SNIPS valid,
which is not read.

  python tools/make_example_slot_values.py --output_dir=examples/slot_values
"""

import os

from absl import app
from absl import flags

from mixvocab_tf import assets
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import slot_values
from mixvocab_tf.tasks.finetuning import metrics

_OUTPUT_DIR = flags.DEFINE_string("output_dir", "examples/slot_values",
                                  "Where the lists go.")
_EXAMPLE = flags.DEFINE_string("example", "examples/intent_slot/train",
                               "The example's train split.")


def main(argv):
  del argv
  example = intent_slot_files.read_intent_slot(_EXAMPLE.value)
  snips = intent_slot_files.read_intent_slot(assets.snips_dir("train"))
  held = {" ".join(words) for words in example.words}
  types = slot_values.slot_types(example.tags)
  values = {}
  for words, tags in zip(snips.words, snips.tags):
    if " ".join(words) in held:
      continue
    for start, end, kind in metrics.slot_spans(tags):
      if kind in types:
        values.setdefault(kind, {})[" ".join(words[start:end])] = None
  os.makedirs(_OUTPUT_DIR.value, exist_ok=True)
  for kind, kept in sorted(values.items()):
    with open(os.path.join(_OUTPUT_DIR.value, f"{kind}.txt"), "w",
              encoding="utf-8") as f:
      f.write("".join(f"{value}\n" for value in kept))
  print(f"{sum(len(v) for v in values.values()):,} values of {len(values)} "
        f"slot types in {_OUTPUT_DIR.value}")


if __name__ == "__main__":
  app.run(main)
