"""The package's commands, installed as console scripts (`setup.cfg`).

Every command lives here, one module per command, each with an absl
`main(argv)`, a `define_flags()` and a zero-argument `run()` (which defines
the flags and runs `main`) that the console script calls:

- `mixvocab-train`: `cli/train.py` (`python -m mixvocab_tf.train`, the
  package's documented entry point, runs it too);
- `mixvocab-evaluate`: `cli/evaluate.py` (`tools/evaluate.py`);
- `mixvocab-export`: `cli/export_saved_model.py`
  (`tools/export_saved_model.py`);
- `mixvocab-convert`: `cli/convert_tflite.py` (`tools/convert_tflite.py`);
- `mixvocab-predict`: `cli/predict.py`;
- `mixvocab-build-vocab`: `cli/build_vocab.py` (`tools/build_vocab.py`);
- `mixvocab-split-data`: `cli/split_data.py` (one labelled file into the
  own-data job's splits).

What they share (starting as an absl app, one-paragraph errors, each
warning once per run) is `console.py`. The libraries behind them sit below:
`serving/` (`export_run`, `convert_run`, the predictor), `jobs/`, `core/`.
The scripts in `tools/` run these modules, so both take the same flags.
No module defines a flag when imported, so all of them import together.

This package sits at the top of the import order (above `jobs/`, as
`tools/` does); nothing in the package imports it except
`mixvocab_tf/train.py`, the trainer's `python -m` entry.
"""
