"""Serving a trained student: the library behind export, convert and predict.

After Model Garden's `official/nlp/serving/`: what turns a trainer run into
files an app runs, and runs them. `export_run` rebuilds a run's task from its
`operative_config.gin` and writes the task's export module as a SavedModel
that takes raw strings (`export_encoder_run`: a pretraining run's bare
encoder); `convert_run` converts that SavedModel to a .tflite (and a
builtin-only one for MediaPipe Tasks and LiteRT.js) and checks its parity;
`predictor` (`load_predictor`) answers text with either file. The package's
public `mixvocab_tf.export_run`, `convert_run` and `load_predictor` are
these; `mixvocab-export`, `mixvocab-convert` and `mixvocab-predict`
(`cli/`) and the jobs' export steps call them.

It sits above `tasks/` (a run's task rebuilds the model; a task's hooks give
the examples and scores of parity; slot spans are read as `metrics` scores
them) and below `jobs/`: `export/` below it knows no task, and holds the
task-agnostic pieces it uses (serving tokenizer, SavedModel writer, TFLite
conversion, parity).
"""
