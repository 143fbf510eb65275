"""The steps of the main job (`quickstart.gin`) that are its own.

`python -m mixvocab_tf.train --gin_file=quickstart.gin --model_dir=DIR` runs
the pipeline (`pipeline.py`) whose steps are listed in `quickstart.gin`: the
trainer runs (stage I, stage II, fine-tuning, distillation; NoKD too in
`quickstart_nokd.gin`) and these steps:

* `learn_student_vocabulary`: a ~5K student WordPiece vocabulary from the
  built-in public-domain corpus (Zhao et al., EACL 2021, Section 3);
* `report_step`: `report.md` and its plots.

Its export is the step every job shares (`export_steps`: the fine-tuned
student as a SavedModel that takes raw strings, and TFLite files run in
LiteRT over SNIPS valid, scored by `metrics.py`).

The job's directory may be on any file system TensorFlow reads (`gs://`):
its files go through `tf.io.gfile` (`run_files`).
"""

import os
import time

from absl import logging
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.core import run_files
from mixvocab_tf.jobs import step_times


def learn_student_vocabulary(output_dir, vocab_size):
  """Step 1: learns the student vocabulary, or reuses the one already there."""
  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.text import vocab
  from mixvocab_tf.text import vocab_learning
  # pylint: enable=g-import-not-at-top
  path = os.path.join(output_dir, "student_vocab.txt")
  summary_path = os.path.join(output_dir, "vocab_summary.json")
  if tf.io.gfile.exists(path) and tf.io.gfile.exists(summary_path):
    logging.info("Student vocabulary already learned: %s", path)
    return path, run_files.read_json(summary_path)
  lines = vocab_learning.read_corpus_lines(assets.builtin_corpus_files())
  train_lines, heldout = vocab_learning.split_heldout(lines, 0.01)
  logging.info("Learning a %d-token student vocabulary from %d lines of the "
               "built-in corpus (about a minute)...", vocab_size,
               len(train_lines))
  start = time.time()
  tokens = vocab_learning.learn_vocabulary_from_lines(train_lines, vocab_size)
  summary = vocab_learning.vocabulary_summary(
      tokens, assets.default_teacher_vocab(), heldout)
  summary["seconds"] = round(time.time() - start, 1)
  with run_files.local_output(path) as local:  # write_vocab opens locally.
    vocab.write_vocab(tokens, local)
  run_files.write_json(summary_path, summary, indent=2)
  return path, summary


def _read_json(path):
  return run_files.read_json_if_any(path)


def _step_dirs(output_dir):
  """The job's step directories, in the order they finished.

  Local times are read with `os.path.getmtime`: `tf.io.gfile.stat` rounds
  them to seconds, which would mix up steps that finished within one.
  (ram:// gives no times: there, steps come in the order of their names.)
  """
  dirs = [os.path.join(output_dir, d.rstrip("/"))
          for d in tf.io.gfile.listdir(output_dir)]
  dirs = [d for d in dirs if tf.io.gfile.isdir(d)]

  def finished(d):
    done = os.path.join(d, "DONE")
    if not tf.io.gfile.exists(done):
      return float("inf")
    if run_files.is_local(done):
      return os.path.getmtime(done)
    return tf.io.gfile.stat(done).mtime_nsec / 1e9

  return sorted(dirs, key=lambda d: (finished(d), d))


def _snips_runs(output_dir):
  """{step name: best/metrics.json record} of the job's SNIPS runs."""
  runs = {}
  for directory in _step_dirs(output_dir):
    best = _read_json(os.path.join(directory, "best", "metrics.json"))
    if best and "slot_f1" in best.get("metrics", {}):
      runs[os.path.basename(directory)] = best
  return runs


def _validation_scores(tflite_info):
  """A .tflite's validation scores in the export's summary ({} if none)."""
  return tflite_info.get("splits", {}).get("validation", {}).get("scores", {})


def _model_label(record, fallback):
  row = record.get("markdown_row", "")
  cells = [c.strip() for c in row.strip("|").split("|")]
  return cells[0] if cells and cells[0] else fallback


def _is_teacher(record):
  return ": teacher" in record.get("description", "")


def _heldout_curves(output_dir):
  """{run name: mlm_curve.json content} of the job's held-out curves."""
  curves = {}
  for directory in _step_dirs(output_dir):
    curve = _read_json(os.path.join(directory, "mlm_curve.json"))
    if curve and curve.get("points"):
      curves[os.path.basename(directory)] = curve
  return curves


def _pretraining_section(output_dir, report):
  """The pretraining plot and the report's lines about it.

  Held-out masked-token loss of each student against the tokens it trained
  on, beside the unigram floor of the same held-out tokens (a dashed line);
  without held-out curves, the training loss of each student run.
  """
  join = lambda *p: os.path.join(output_dir, *p)
  curves = _heldout_curves(output_dir)
  if not curves:
    mlm = {}
    for directory in _step_dirs(output_dir):
      scalars = report.read_scalars(os.path.join(directory, "train"))
      if "student_mlm/loss" in scalars and "teacher_mlm/loss" not in scalars:
        mlm[os.path.basename(directory)] = scalars["student_mlm/loss"]
    png = report.plot_lines(
        mlm, join("pretraining_curves.png"), "step (same batches for each)",
        "student MLM loss (training batches)",
        "Each student's masked-LM loss on its training batches")
    return png, []
  floor = next(iter(curves.values()))["floor"]
  png = report.plot_lines(
      {name: [(p["step"], p["loss"]) for p in c["points"]]
       for name, c in curves.items()},
      join("pretraining_curves.png"), "training step",
      "held-out masked-token loss (nats)",
      "Each student on held-out text, beside the unigram floor",
      hlines={"unigram floor (word frequencies)": floor["loss"]})
  rows = []
  for name, curve in curves.items():
    last = curve["points"][-1]
    rows.append([name, last["step"], f"{last['tokens'] / 1e6:.2f}M",
                 f"{last['loss']:.3f}", f"{last['unigram_loss']:.3f}",
                 f"{last['loss'] - last['unigram_loss']:+.3f}",
                 f"{100 * last['accuracy']:.1f}",
                 f"{100 * last['unigram_accuracy']:.1f}"])
  lines = [
      "## Pretraining on held-out text", "",
      "Masked-token loss and accuracy in the student vocabulary on held-out "
      "blocks of the corpus that no run trained on, beside the unigram floor "
      "of the same tokens: what token frequencies of the training text "
      "alone give (a loss at the floor means the student learned word "
      "frequencies and nothing of context).", "",
      report.markdown_table(
          ["student", "steps", "tokens", "loss (nats)", "floor (nats)",
           "loss - floor", "accuracy (%)", "floor accuracy (%)"], rows), ""]
  return png, lines


def report_step(step_dir, output_dir, bindings):
  """Writes report.md and its plots into `output_dir` from the runs' files.

  Every run is found from what it wrote (no run names are assumed):
  pretraining runs by their student MLM scalars, SNIPS runs by their
  `best/metrics.json`, the export by its `summary.json`.

  Args:
    step_dir: this step's directory (its summary.json).
    output_dir: the job's directory.
    bindings: unused.
  """
  del bindings
  from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
  join = lambda *p: os.path.join(output_dir, *p)
  mlm_png, pretraining_lines = _pretraining_section(output_dir, report)
  snips = _snips_runs(output_dir)
  f1_png = report.plot_lines(
      {_model_label(best, name): [
          (step, m["slot_f1"]) for step, m in report.read_history(join(name))]
       for name, best in snips.items()},
      join("snips_slot_f1.png"), "step", "slot F1 on SNIPS valid (%)",
      "SNIPS fine-tuning and distillation: validation slot F1", percent=True)
  export = {}
  for directory in _step_dirs(output_dir):
    summary = _read_json(os.path.join(directory, "summary.json")) or {}
    if "tflite" in summary:
      export = summary
  rows, points = [], []
  for name, best in snips.items():
    metrics = best["metrics"]
    history = report.read_history(join(name))
    stopped = _read_json(join(name, "early_stopping.json"))
    label = _model_label(best, name)
    rows.append([
        label, f"{best['parameters'] / 1e6:.2f}M",
        report.format_mb(best["size_bytes"]),
        f"{100 * metrics['intent_accuracy']:.1f}",
        f"{100 * metrics['slot_f1']:.1f}",
        f"{100 * metrics.get('slot_f1_argmax', float('nan')):.1f}",
        best.get("step", ""), history[-1][0] if history else "",
        "yes" if stopped else "no"])
    points.append(dict(label=label, size_bytes=best["size_bytes"],
                       intent_accuracy=metrics["intent_accuracy"],
                       slot_f1=metrics["slot_f1"],
                       kind="teacher" if _is_teacher(best) else "ours"))
  for quantize, info in sorted(export.get("tflite", {}).items()):
    valid = _validation_scores(info)
    points.append(dict(label=f"exported .tflite ({quantize})",
                       size_bytes=info["size_bytes"], kind="tflite",
                       intent_accuracy=valid.get("intent_accuracy"),
                       slot_f1=valid.get("slot_f1")))
  for label, parameters, intent, slot_f1 in report.PAPER_SNIPS_ROWS:
    points.append(dict(label=f"{label} (test)", size_bytes=4 * parameters,
                       intent_accuracy=intent, slot_f1=slot_f1,
                       kind="paper"))
  size_png = report.plot_size_vs_accuracy_panels(
      points, join("size_vs_accuracy.png"),
      "SNIPS valid (paper rows: SNIPS test, fp32 size from parameters)")
  lines = [
      "# mixvocab_tf quickstart report", "",
      "Built-in data only: the student vocabulary and pretraining text are the "
      "package's public-domain corpus (3 MB); fine-tuning and distillation "
      "read SNIPS train, every metric is on SNIPS valid (700 queries), seed "
      "0. Budget: see each run's operative_config.gin (minutes of CPU "
      "pretraining, against the paper's 500K + 300K TPU steps of "
      "batch 2048). The paper's rows (Zhao et al., EACL 2021, Table 3) are "
      "on SNIPS test.", "",
  ] + pretraining_lines + [
      "## SNIPS valid", "",
      report.markdown_table(
          ["model", "parameters", "fp32 size", "intent acc.",
           "slot F1", "slot F1 (arg-max tags)", "best step", "last step",
           "stopped early"], rows), "",
      "Slot F1 is CoNLL chunk F1 of the tags decoded with the valid-IOB "
      "constraint (Viterbi); the next column decodes each word's own "
      "arg-max tag.", "",
  ]
  if export:
    lines += ["## Export", "",
              f"SavedModel (raw strings in): {export.get('saved_model_dir')}, "
              f"{report.format_mb(export.get('saved_model_bytes', 0))}.", ""]
    tflite_rows = []
    for quantize, info in sorted(export.get("tflite", {}).items()):
      valid = _validation_scores(info)
      tflite_rows.append([
          quantize, report.format_mb(info["size_bytes"]),
          f"{info.get('p50_ms', float('nan')):.2f}",
          f"{info.get('p90_ms', float('nan')):.2f}",
          f"{100 * valid.get('intent_accuracy', float('nan')):.1f}",
          f"{100 * valid.get('slot_f1', float('nan')):.1f}"])
    builtin = export.get("builtin")
    if builtin:
      valid = _validation_scores(builtin)
      tflite_rows.append([
          "builtin ops (dynamic), token ids in",
          report.format_mb(builtin["bytes"]),
          f"{builtin['p50_ms']:.2f} (model only)", ""] + [
              f"{100 * valid[m]:.1f}" if m in valid else ""
              for m in ("intent_accuracy", "slot_f1")])
    lines += [report.markdown_table(
        ["TFLite", "file size", "p50 ms (1 thread)", "p90 ms", "intent acc.",
         "slot F1"], tflite_rows), ""]
    if builtin:
      lines += [
          "The raw-string files tokenize inside the model with "
          "tensorflow_text's kernels (Python LiteRT); the builtin file "
          f"(`{builtin['path']}`) takes token ids, " + (
              "each query at its own length, at most "
              if builtin.get("dynamic") else "padded to ") +
          f"{builtin['seq_length']}, and carries its vocabulary and labels "
          "as TFLite Model Metadata, for MediaPipe Tasks, LiteRT.js and "
          "stock LiteRT "
          "(docs/SERVING.md, \"Deploy\"); its p50 leaves out the app's "
          "tokenization, its scores are the file's on ids that the "
          "package's tokenizer gives (`mixvocab-predict` runs it so).", ""]
  lines += step_times.section(output_dir)
  lines += ["## Plots", ""]
  for png, caption in ((mlm_png, "pretraining on held-out text"),
                       (f1_png, "validation slot F1 during training"),
                       (size_png, "size against accuracy")):
    if png:
      lines.append(f"![{caption}]({os.path.basename(png)})")
  lines.append("")
  run_files.write_text(join("report.md"), "\n".join(lines))
  run_files.write_json(
      os.path.join(step_dir, "summary.json"),
      {"report": join("report.md"),
       "snips": {n: b["metrics"] for n, b in snips.items()}}, indent=2)
  print("\n".join(lines))
