r"""Evaluates a trained checkpoint: `mixvocab-evaluate` in a checkout.

The command lives in `mixvocab_tf/cli/evaluate.py` (installed as the
`mixvocab-evaluate` console script); this script runs it with the same
flags, e.g.

  python tools/evaluate.py --model_dir=/tmp/snips --checkpoint=best

`--help` prints the command's documentation and flags.
"""

from mixvocab_tf.cli import evaluate

main = evaluate.main
load_model = evaluate.load_model

if __name__ == "__main__":
  evaluate.run()
