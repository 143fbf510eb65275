r"""The main job on built-in defaults: the mixed-vocabulary method end to end.

  python -m mixvocab_tf.quickstart --output_dir=runs/quickstart

Steps (each one resumes: rerunning skips what is already in --output_dir):
  1. learn a ~5K student WordPiece vocabulary from the built-in public-domain
     corpus (Zhao et al., EACL 2021, Section 3) and compare it with the
     teacher's on held-out text;
  2. stream stage I mixed-vocabulary MLM batches (p_SV = 0.5, 20 masks of which
     at most 10 teacher) from the corpus and summarise them.

Training (stage I, stage II, fine-tuning), export and the report are added to
this job as the trainer grows; until then it stops after step 2 and says so.
"""

import json
import os
import time

from absl import app
from absl import flags
from absl import logging
import numpy as np

from mixvocab_tf import data

_OUTPUT_DIR = flags.DEFINE_string("output_dir", "runs/quickstart",
                                  "Where the job writes everything.")
_VOCAB_SIZE = flags.DEFINE_integer("vocab_size", 5000,
                                   "Target student vocabulary size.")
_NUM_BATCHES = flags.DEFINE_integer("num_batches", 50,
                                    "Stage I batches to stream and summarise.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 32, "Sequences per batch.")
_SEQ_LENGTH = flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")


def learn_student_vocabulary(output_dir, vocab_size):
  """Step 1: learns the student vocabulary, or reuses the one already there."""
  from mixvocab_tf.text import vocab  # pylint: disable=g-import-not-at-top
  path = os.path.join(output_dir, "student_vocab.txt")
  summary_path = os.path.join(output_dir, "vocab_summary.json")
  if os.path.exists(path) and os.path.exists(summary_path):
    logging.info("Student vocabulary already learned: %s", path)
    with open(summary_path, encoding="utf-8") as f:
      return path, json.load(f)
  lines = vocab.read_corpus_lines(data.builtin_corpus_files())
  train_lines, heldout = vocab.split_heldout(lines, 0.01)
  logging.info("Learning a %d-token student vocabulary from %d lines of the "
               "built-in corpus (about a minute)...", vocab_size,
               len(train_lines))
  start = time.time()
  tokens = vocab.learn_vocabulary_from_lines(train_lines, vocab_size)
  summary = vocab.vocabulary_summary(tokens, data.default_teacher_vocab(),
                                     heldout)
  summary["seconds"] = round(time.time() - start, 1)
  vocab.write_vocab(tokens, path + ".tmp")
  os.replace(path + ".tmp", path)
  with open(summary_path, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=2)
  return path, summary


def summarise_stage1_batches(student_vocab, num_batches, batch_size,
                             seq_length):
  """Step 2: streams stage I batches and returns their statistics."""
  from mixvocab_tf import text  # pylint: disable=g-import-not-at-top
  config = text.PretrainingInputConfig(
      input_files=data.builtin_corpus_files(), mode="mixed",
      seq_length=seq_length, output_word_ids=True)
  dataset = text.pretraining_dataset(config, data.default_teacher_vocab(),
                                     student_vocab, batch_size)
  masks, teacher_masks, fill, student_words, words = [], [], [], 0, 0
  start = None
  for i, batch in enumerate(dataset.take(num_batches + 1)):
    if i == 0:
      start = time.time()  # the first batch pays for building the graph
      continue
    weights = batch["masked_lm_weights"].numpy()
    masked_vocab = batch["masked_lm_vocab_ids"].numpy()
    masks.append(weights.sum(1))
    teacher_masks.append(((masked_vocab == 0) * weights).sum(1))
    fill.append(batch["input_mask"].numpy().mean(1))
    word_ids, vocab_ids = batch["word_ids"].numpy(), batch[
        "input_vocab_ids"].numpy()
    for row_words, row_vocab in zip(word_ids, vocab_ids):
      real = row_words >= 0
      _, first = np.unique(row_words[real], return_index=True)
      student_words += int(row_vocab[real][first].sum())
      words += len(first)
    if i % 10 == 0:
      logging.info("streamed %d/%d stage I batches", i, num_batches)
  seconds = time.time() - start
  masks, teacher_masks = np.concatenate(masks), np.concatenate(teacher_masks)
  return {
      "sequences": int(masks.size),
      "sequences_per_second": round(masks.size / seconds, 1),
      "seq_length": seq_length,
      "mean_fill": round(float(np.concatenate(fill).mean()), 4),
      "masked_per_sequence_mean": round(float(masks.mean()), 2),
      "masked_per_sequence_max": int(masks.max()),
      "teacher_masked_per_sequence_max": int(teacher_masks.max()),
      "student_word_share": round(student_words / max(words, 1), 4),
  }


def _read_json(path):
  if not os.path.isfile(path):
    return None
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def _teacher_parameters():
  from safetensors import numpy as safetensors_numpy  # pylint: disable=g-import-not-at-top
  weights = safetensors_numpy.load_file(
      os.path.join(data.default_teacher_dir(), "model.safetensors"))
  return int(sum(w.size for w in weights.values()))


def export_step(step_dir, output_dir, bindings,
                quantizations=("none", "dynamic")):
  """Exports the fine-tuned SNIPS student: SavedModel, TFLite, accuracy, latency.

  The SavedModel is written by `tools/export_saved_model.py` in a child
  process (it rebuilds the task from the run's operative config); each .tflite
  is then run by the LiteRT interpreter, one query at a time on one thread,
  over SNIPS valid.
  """
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  from mixvocab_tf import report  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import parity  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.export import tflite_conversion  # pylint: disable=g-import-not-at-top
  from mixvocab_tf.tasks import snips_data  # pylint: disable=g-import-not-at-top
  (run_dir,) = bindings
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  tool = os.path.join(root, "tools", "export_saved_model.py")
  if not os.path.isfile(tool):
    raise FileNotFoundError(
        f"{tool} not found: the quickstart's export step runs from a source "
        "checkout (pip install -e .).")
  saved_model_dir = os.path.join(step_dir, "saved_model")
  if not os.path.isfile(os.path.join(saved_model_dir, "saved_model.pb")):
    # The tool imports this package from the same checkout, installed or not.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (root, env.get("PYTHONPATH")) if p)
    subprocess.run([sys.executable, tool, f"--model_dir={run_dir}",
                    f"--export_dir={saved_model_dir}"], check=True, env=env)
  valid = snips_data.read_snips(data.snips_dir("valid"))
  queries = [" ".join(words) for words in valid.words]
  summary = {"saved_model_dir": saved_model_dir,
             "saved_model_bytes": report.file_size(saved_model_dir),
             "tflite": {}}
  train = snips_data.read_snips(data.snips_dir("train"))
  calibration = [" ".join(w) for w in train.words[::50]]
  for quantize in quantizations:
    path = os.path.join(step_dir, f"snips_{quantize}.tflite")
    if not os.path.isfile(path):
      logging.info("Converting to TFLite (%s)...", quantize)
      content = tflite_conversion.convert_saved_model(
          saved_model_dir, quantize=quantize,
          representative_examples=calibration)
      with open(path + ".tmp", "wb") as f:
        f.write(content)
      os.replace(path + ".tmp", path)
    runner = tflite_conversion.TFLiteRunner(model_path=path, num_threads=1)
    latencies, predictions = [], []
    for query in queries:
      start = time.perf_counter()
      outputs = runner([query])
      latencies.append(time.perf_counter() - start)
      predictions.extend(parity.split_examples(outputs))
    scores = parity.snips_scores(predictions, valid.intents, valid.tags)
    summary["tflite"][quantize] = {
        "path": path, "size_bytes": os.path.getsize(path),
        "p50_ms": report.percentile_ms(latencies, 50),
        "p90_ms": report.percentile_ms(latencies, 90),
        "intent_accuracy": scores["intent_accuracy"],
        "slot_f1": scores["slot_f1"]}
    logging.info("TFLite %s: %s", quantize, summary["tflite"][quantize])
  with open(os.path.join(step_dir, "summary.json"), "w",
            encoding="utf-8") as f:
    json.dump(summary, f, indent=2)


def report_step(step_dir, output_dir, bindings):
  """Writes report.md and PNG plots into `output_dir` from the runs' files."""
  del bindings
  from mixvocab_tf import report  # pylint: disable=g-import-not-at-top
  join = lambda *p: os.path.join(output_dir, *p)
  runs = {name: join(name) for name in ("stage1", "stage2", "nokd",
                                        "snips_teacher", "snips_stage2",
                                        "snips_nokd")
          if os.path.isdir(join(name, "train"))}
  curves_png = report.plot_training_curves(runs, join("training_curves.png"))
  models = []
  for name, label in (("snips_stage2", "mixed-vocab stage II 6x96"),
                      ("snips_nokd", "NoKD 6x96")):
    best = _read_json(join(name, "best", "metrics.json"))
    if best:
      models.append((label, best))
  export = _read_json(join("export", "summary.json")) or {}
  teacher_params = _teacher_parameters()
  rows = []
  for label, best in models:
    metrics = best["metrics"]
    rows.append([label, f"{best['parameters'] / 1e6:.2f}M",
                 report.format_mb(best["size_bytes"]),
                 f"{100 * metrics['intent_accuracy']:.1f}",
                 f"{100 * metrics['slot_f1']:.1f}", best.get("step", "")])
  teacher = _read_json(join("snips_teacher", "best", "metrics.json"))
  if teacher:  # Fine-tuned here (the distillation teacher).
    metrics = teacher["metrics"]
    rows.append(["teacher all-MiniLM-L6-v2, fine-tuned",
                 f"{teacher['parameters'] / 1e6:.1f}M",
                 report.format_mb(teacher["size_bytes"]),
                 f"{100 * metrics['intent_accuracy']:.1f}",
                 f"{100 * metrics['slot_f1']:.1f}", teacher.get("step", "")])
  else:
    rows.append(["teacher all-MiniLM-L6-v2 (not fine-tuned here)",
                 f"{teacher_params / 1e6:.1f}M",
                 report.format_mb(4 * teacher_params), "", "", ""])
  points = [(label, best["size_bytes"], best["metrics"]["intent_accuracy"])
            for label, best in models]
  for quantize, info in sorted(export.get("tflite", {}).items()):
    if models and "intent_accuracy" in info:
      points.append((f"stage II TFLite {quantize}", info["size_bytes"],
                     info["intent_accuracy"]))
  size_png = report.plot_size_vs_accuracy(points, join("size_vs_accuracy.png"),
                                          "SNIPS valid intent accuracy (%)")
  curves = {name: report.curve_summary(
      report.read_scalars(os.path.join(d, "train")),
      [t for t in report.read_scalars(os.path.join(d, "train"))
       if "loss" in t]) for name, d in runs.items()}
  lines = [
      "# mixvocab_tf quickstart report", "",
      "Built-in data only: the student vocabulary and pretraining text are the "
      "package's public-domain corpus (3 MB); fine-tuning is SNIPS train, "
      "metrics are on SNIPS valid (700 queries). Budget: a few hundred CPU "
      "steps per stage (see each run's operative_config.gin), against the "
      "paper's 500K + 300K TPU steps of batch 2048, so these numbers show "
      "that the pipeline works end to end, not the paper's accuracy (98.9 "
      "intent accuracy, 92.8 slot F1 for 6x96).", "",
      "## SNIPS valid", "",
      report.markdown_table(
          ["model", "parameters", "fp32 size", "intent acc.", "slot F1",
           "best step"], rows), "",
  ]
  if export:
    lines += ["## Export", "",
              f"SavedModel (raw strings in): {export.get('saved_model_dir')}, "
              f"{report.format_mb(export.get('saved_model_bytes', 0))}.", ""]
    tflite_rows = []
    for quantize, info in sorted(export.get("tflite", {}).items()):
      tflite_rows.append([
          quantize, report.format_mb(info["size_bytes"]),
          f"{info.get('p50_ms', float('nan')):.2f}",
          f"{info.get('p90_ms', float('nan')):.2f}",
          f"{100 * info.get('intent_accuracy', float('nan')):.1f}",
          f"{100 * info.get('slot_f1', float('nan')):.1f}"])
    lines += [report.markdown_table(
        ["TFLite", "file size", "p50 ms (1 thread)", "p90 ms", "intent acc.",
         "slot F1"], tflite_rows), ""]
  lines += ["## Training curves (first -> last logged value)", ""]
  for name, summary in curves.items():
    shown = ", ".join(f"{tag} {a:.3f} -> {b:.3f}"
                      for tag, (a, b) in sorted(summary.items()))
    lines.append(f"- {name}: {shown}")
  lines += ["", f"![training curves]({os.path.basename(curves_png)})",
            f"![size against accuracy]({os.path.basename(size_png)})", ""]
  with open(join("report.md"), "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
  with open(os.path.join(step_dir, "summary.json"), "w",
            encoding="utf-8") as f:
    json.dump({"report": join("report.md"), "curves": curves}, f, indent=2)
  print("\n".join(lines))


def main(argv):
  del argv
  output_dir = _OUTPUT_DIR.value
  os.makedirs(output_dir, exist_ok=True)
  vocab_path, vocab_summary = learn_student_vocabulary(output_dir,
                                                       _VOCAB_SIZE.value)
  print("Student vocabulary:", json.dumps(vocab_summary, indent=2))
  batch_summary = summarise_stage1_batches(vocab_path, _NUM_BATCHES.value,
                                           _BATCH_SIZE.value,
                                           _SEQ_LENGTH.value)
  with open(os.path.join(output_dir, "stage1_batches.json"), "w",
            encoding="utf-8") as f:
    json.dump(batch_summary, f, indent=2)
  print("Stage I batches:", json.dumps(batch_summary, indent=2))
  print(f"Wrote {vocab_path} and summaries to {output_dir}. Training, "
        "export and the report are not part of this job yet.")


if __name__ == "__main__":
  app.run(main)
