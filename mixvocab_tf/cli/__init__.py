"""The package's commands, installed as console scripts (`setup.cfg`).

`tools/` is not installed with the package, so the logic of each command
lives here, one module per command, each with an absl `main(argv)` and a
zero-argument `run()` that the console script calls:

- `mixvocab-train`: `cli/train.py`, for `mixvocab_tf/train.py`
  (`python -m mixvocab_tf.train`);
- `mixvocab-export`: `cli/export_saved_model.py`
  (`tools/export_saved_model.py`);
- `mixvocab-convert`: `cli/convert_tflite.py` (`tools/convert_tflite.py`);
- `mixvocab-predict`: `mixvocab_tf/predict.py`, a library too
  (`python -m mixvocab_tf.predict`);
- `mixvocab-build-vocab`: `cli/build_vocab.py` (`tools/build_vocab.py`);
- `mixvocab-evaluate`: `cli/evaluate.py` (`tools/evaluate.py`).

The scripts in `tools/` import these modules, so both take the same flags.
A command module defines its flags when imported: import one command module
per process (two of them would define some flags twice).

This package sits at the top of the import order (above `jobs/` and
`train.py`, as `tools/` does); nothing below it imports it except
`mixvocab_tf/predict.py`, a command itself, for `run_main`.
"""

import sys
from typing import Callable, Optional, Sequence

from absl import app
from absl import flags

from mixvocab_tf import quiet


def run_main(main: Callable[[Sequence[str]], None], module_name: str,
             argv: Optional[Sequence[str]] = None) -> None:
  """`app.run(main)` for a command whose flags are defined in `module_name`.

  absl's `--help` prints the docstring of `__main__` and the flags defined
  by it (registered under `sys.argv[0]`). A console script's `__main__` is a
  generated wrapper and a `tools/` script a thin one, neither defining a
  flag: this shows the command module's docstring and flags instead.

  Args:
    main: the absl main, `main(argv)`.
    module_name: the module that defines the command's flags and holds its
      documentation (`__name__` of the caller).
    argv: the command line (default `sys.argv`).
  """
  module = sys.modules[module_name]
  main_module = sys.modules["__main__"]
  if main_module is not module:
    main_module.__doc__ = module.__doc__
    program = sys.argv[0] if argv is None else argv[0]
    for flag in flags.FLAGS.get_key_flags_for_module(module_name):
      flags.FLAGS.register_key_flag_for_module(program, flag)
  # Every command takes --tf_verbose, which `quiet` reads from the command
  # line before TensorFlow loads; absl must know it to accept it.
  quiet.define_flag()
  app.run(main, argv=argv)
