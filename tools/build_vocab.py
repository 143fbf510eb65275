r"""Learns a student WordPiece vocabulary: `mixvocab-build-vocab` in a checkout.

The command lives in `mixvocab_tf/cli/build_vocab.py` (installed as the
`mixvocab-build-vocab` console script); this script runs it with the same
flags. The shipped default student vocabulary is built with (about a
minute):

  python tools/build_vocab.py --vocab_size=5000 \
    --output=mixvocab_tf/assets/student_vocab.txt

`--help` prints the command's documentation and flags.
"""

from mixvocab_tf.cli import build_vocab

main = build_vocab.main

if __name__ == "__main__":
  build_vocab.run()
