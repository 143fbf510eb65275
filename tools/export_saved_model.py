r"""Exports a trained student as a SavedModel: `mixvocab-export` in a checkout.

The command lives in `mixvocab_tf/cli/export_saved_model.py` (installed as
the `mixvocab-export` console script); this script runs it with the same
flags, e.g.

  python tools/export_saved_model.py --model_dir=/tmp/snips \
      --checkpoint=best --export_dir=/tmp/snips_export

`--help` prints the command's documentation and flags.
"""

from mixvocab_tf.cli import export_saved_model

main = export_saved_model.main

if __name__ == "__main__":
  export_saved_model.run()
