"""The `mixvocab-train` console script: `python -m mixvocab_tf.train`.

The trainer binary is `mixvocab_tf/train.py` (its docstring has the commands
and flags); this module gives it the zero-argument entry point a console
script needs, with `--help` showing the trainer's documentation and flags:

  mixvocab-train --gin_file=finetune_snips_small.gin --model_dir=/tmp/snips
"""

from mixvocab_tf import cli as cli_entry
from mixvocab_tf import train

main = train.main


def run():
  """The `mixvocab-train` console script."""
  cli_entry.run_main(train.main, train.__name__)


if __name__ == "__main__":
  run()
