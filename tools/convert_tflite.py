r"""Converts an export to TFLite: `mixvocab-convert` in a checkout.

The command lives in `mixvocab_tf/cli/convert_tflite.py` (installed as the
`mixvocab-convert` console script); this script runs it with the same
flags, e.g.

  python tools/convert_tflite.py --saved_model=/tmp/snips_export \
      --quantize=dynamic --output=/tmp/snips.tflite

`--help` prints the command's documentation and flags.
"""

from mixvocab_tf.cli import convert_tflite

main = convert_tflite.main

if __name__ == "__main__":
  convert_tflite.run()
