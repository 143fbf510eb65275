"""`python -m mixvocab_tf.train`: the trainer, `mixvocab_tf/cli/train.py`.

The package's documented entry point (every gin file's header gives it):

  python -m mixvocab_tf.train --gin_file=stage1_small.gin --model_dir=/tmp/s1

The command, its flags and `--help` are `cli/train.py`'s (installed as
`mixvocab-train`). Importing this module, as that one, registers every task
and the library's jobs with gin.
"""

from mixvocab_tf.cli import train as _train

if __name__ == "__main__":
  _train.run()
