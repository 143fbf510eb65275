"""A scaled replication of Zhao et al. (EACL 2021), Tables 1 and 2, as one job.

`projects/scaling/replication_cpu.gin` imports this module (which registers
its `results` step kind with the pipeline) and sets `pipeline.steps =
@replication_steps()`:
the quickstart's vocabulary and 6 x 96 runs, the same stage I / stage II /
NoKD runs for wider students, the DistilBERT and TinyBERT 6 x 96 baselines
over the teacher's 30K vocabulary, then every model fine-tuned on every task
with several seeds, and a `results` step that writes `results.md` (mean and
standard deviation over seeds) from the runs' `best/metrics.json` files.

Steps are ordered so that a job cut short still yields complete rows: the
6 x 96 models first, then each task over all seeds, then wider students.
Every step is an ordinary trainer run (see `mixvocab_tf.jobs.pipeline`), so
rerunning the job resumes it. The `results` step runs every time.

  python -m mixvocab_tf.train \
      --gin_file=projects/scaling/replication_cpu.gin \
      --model_dir=runs/quickstart
"""

import json
import os
import statistics
from typing import Optional, Sequence

import gin

from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import report

# Method names as the tables show them; "mixed" is the paper's method.
METHODS = {
    "mixed": "mixed-vocab (stage I + II)",
    "nokd": "NoKD",
    "distilbert": "DistilBERT (30K vocab)",
    "tinybert": "TinyBERT (30K vocab)",
}
TASKS = ("snips", "sst2", "mrpc", "mnli")
# (metric key, column header) per task; values in metrics.json are fractions.
TASK_COLUMNS = {
    "snips": (("intent_accuracy", "SNIPS intent"), ("slot_f1", "SNIPS slot F1")),
    "sst2": (("accuracy", "SST-2 acc."),),
    "mrpc": (("f1", "MRPC F1"), ("accuracy", "MRPC acc.")),
    "mnli": (("accuracy", "MNLI-sample acc."),),
}
RESULTS_FILE = "results.md"
#: finetune_glue_small.gin's bindings for small tasks (the sweep:
#: projects/finetuning_recipe/README.md).
GLUE_TASK_BINDINGS = {
    "mrpc": ["EPOCHS = 15", "EVAL_EPOCHS = 1", "LR = 2e-3"],
}


def _size(preset):
  """'L6-H96' -> 96."""
  return int(preset.split("-H")[1])


def pretraining_dir(method, preset):
  """Step name of a model's pretraining run (6 x 96 names = quickstart's)."""
  name = {"mixed": "stage2"}.get(method, method)
  return name if preset == "L6-H96" else f"{name}_{preset}"


def finetune_dir(method, preset, task, seed):
  return f"ft_{task}_{method}_{preset}_seed{seed}"


def _pretraining_steps(preset, methods, stage1_steps, student_steps,
                       baseline_steps):
  """The pretraining steps of one student size."""
  vocab = "{output_dir}/student_vocab.txt"
  stage1 = "stage1" if preset == "L6-H96" else f"stage1_{preset}"
  steps = []
  if "mixed" in methods:
    steps.append((stage1, "train", ["stage1_small.gin"], [
        f"Trainer.train_steps = {stage1_steps}",
        "Trainer.checkpoint_every = 50",
        f"Stage1Task.student_vocab = '{vocab}'",
    ] + ([] if preset == "L6-H96" else
         [f"STUDENT_HIDDEN = {_size(preset)}"])))
    steps.append((pretraining_dir("mixed", preset), "train",
                  ["stage2_small.gin"], [
                      f"STAGE1_DIR = '{{output_dir}}/{stage1}'",
                      f"Trainer.train_steps = {student_steps}",
                      f"StudentSpec.vocab = '{vocab}'",
                  ] + ([] if preset == "L6-H96" else
                       [f"STUDENT_PRESET = '{preset}'"])))
  if "nokd" in methods:
    steps.append((pretraining_dir("nokd", preset), "train",
                  ["nokd_small.gin"], [
        f"Trainer.train_steps = {student_steps}",
        f"StudentSpec.vocab = '{vocab}'",
    ] + ([] if preset == "L6-H96" else [f"STUDENT_PRESET = '{preset}'"])))
  if "distilbert" in methods:
    # The teacher is the 6 x 96 stage I run: stage I trained its
    # teacher-vocabulary MLM head, which DistilBERT's soft targets need.
    steps.append((pretraining_dir("distilbert", preset), "train",
                  ["distilbert_small.gin"], [
                      "STAGE1_DIR = '{output_dir}/stage1'",
                      f"Trainer.train_steps = {baseline_steps}",
                      f"STUDENT_PRESET = '{preset}'",
                  ]))
  if "tinybert" in methods:
    steps.append((pretraining_dir("tinybert", preset), "train",
                  ["tinybert_small.gin"], [
                      f"Trainer.train_steps = {baseline_steps}",
                      f"STUDENT_PRESET = '{preset}'",
                  ]))
  return steps


def _finetune_step(method, preset, task, seed, glue_dir, teacher_vocab,
                   snips_steps, glue_steps):
  """One fine-tuning run of one pretrained model."""
  init = "{output_dir}/" + pretraining_dir(method, preset)
  vocab = (teacher_vocab if method in ("distilbert", "tinybert") else
           "{output_dir}/student_vocab.txt")
  label = f"{METHODS[method]} {preset}"
  bindings = [f"INIT_CHECKPOINT = '{init}'", f"Trainer.seed = {seed}"]
  if task == "snips":
    gin_file, task_class, steps = ("finetune_snips_small.gin",
                                   "IntentSlotTask", snips_steps)
  else:
    gin_file, task_class, steps = ("finetune_glue_small.gin",
                                   "TextClassificationTask", glue_steps)
    bindings += [f"DATASET = 'glue/{task}'", f"DATA_DIR = '{glue_dir}'"]
    bindings += GLUE_TASK_BINDINGS.get(task, [])
  if steps is not None:
    # A fixed budget, evaluated once; by default the config's epoch budget
    # with early stopping on the validation metric.
    bindings += [f"Trainer.train_steps = {steps}",
                 f"Trainer.evaluate_every = {steps}",
                 f"Trainer.checkpoint_every = {steps}",
                 "Trainer.early_stopping_patience = None"]
  bindings += [f"{task_class}.vocab = '{vocab}'",
               f"{task_class}.model_name = '{label}'"]
  return (finetune_dir(method, preset, task, seed), "train", [gin_file],
          bindings)


@gin.configurable(module="projects")
def replication_steps(
    presets: Sequence[str] = ("L6-H96", "L6-H192", "L6-H256"),
    methods: Sequence[str] = ("mixed", "nokd", "distilbert", "tinybert"),
    baseline_presets: Sequence[str] = ("L6-H96",),
    tasks: Sequence[str] = TASKS,
    seeds: Sequence[int] = (0, 1, 2),
    glue_dir: Optional[str] = None,
    stage1_steps: int = 200,
    student_steps: int = 300,
    baseline_steps: int = 200,
    snips_steps: Optional[int] = None,
    glue_steps: Optional[int] = None):
  """The replication's pipeline steps (for `pipeline.steps`).

  Args:
    presets: student sizes (`networks.STUDENT_PRESETS` names); the 6 x 96 runs
      are named as in quickstart.gin, so a job run in the quickstart's
      directory reuses them.
    methods: any of `METHODS`.
    baseline_presets: sizes at which the DistilBERT and TinyBERT baselines
      run (default: 6 x 96 only).
    tasks: any of `TASKS`.
    seeds: fine-tuning seeds (`Trainer.seed`) per model and task.
    glue_dir: directory with SST-2/, MRPC/ (GLUE TSV) and MNLI/ (the sample
      JSON files); required when a GLUE task is asked for.
    stage1_steps, student_steps, baseline_steps: pretraining steps of stage I,
      of stage II and NoKD, and of DistilBERT and TinyBERT.
    snips_steps, glue_steps: fine-tuning steps (evaluated once, at the
      end); None (the default): the fine-tuning configs' own budget, epochs
      with evaluation every few epochs and early stopping, so that no run
      stops while its validation score is still climbing.

  Returns:
    A list of (name, kind, gin_files, bindings) steps.
  """
  from mixvocab_tf import assets  # pylint: disable=g-import-not-at-top
  unknown = [m for m in methods if m not in METHODS]
  if unknown:
    raise ValueError(f"Unknown methods {unknown}; expected any of "
                     f"{sorted(METHODS)}.")
  unknown = [t for t in tasks if t not in TASKS]
  if unknown:
    raise ValueError(f"Unknown tasks {unknown}; expected any of {TASKS}.")
  if any(t != "snips" for t in tasks):
    if not glue_dir:
      raise ValueError("replication_steps.glue_dir is required for the GLUE "
                       "tasks (a directory with SST-2/, MRPC/ and MNLI/).")
    glue_dir = os.path.abspath(glue_dir)
    if not os.path.isdir(glue_dir):
      raise FileNotFoundError(f"replication_steps.glue_dir: no directory "
                              f"{glue_dir}.")
  teacher_vocab = assets.default_teacher_vocab()
  steps = [("vocab", "vocab", [], [])]
  for preset in presets:
    size_methods = [m for m in methods
                    if m in ("mixed", "nokd") or preset in baseline_presets]
    steps += _pretraining_steps(preset, size_methods, stage1_steps,
                                student_steps, baseline_steps)
    for task in tasks:
      for seed in seeds:
        for method in size_methods:
          steps.append(_finetune_step(method, preset, task, seed, glue_dir,
                                      teacher_vocab, snips_steps, glue_steps))
  steps.append(("results", "results", [], []))
  return steps


def _format_cell(values):
  if not values:
    return "not run"
  percents = [100 * v for v in values]
  mean = statistics.mean(percents)
  if len(percents) == 1:
    return f"{mean:.1f} (n=1)"
  return f"{mean:.1f} ± {statistics.stdev(percents):.1f}" + (
      "" if len(values) == 3 else f" (n={len(values)})")


def _finished_runs(output_dir):
  """Yields (task, method, preset, seed, best metrics) per finished run.

  A finished run is a `ft_<task>_<method>_<preset>_seed<N>/` directory under
  `output_dir` with a `best/metrics.json`.
  """
  for name in sorted(os.listdir(output_dir)):
    path = os.path.join(output_dir, name, "best", "metrics.json")
    if not name.startswith("ft_") or not os.path.exists(path):
      continue
    _, task, method, preset, seed = name.split("_", 4)
    with open(path, encoding="utf-8") as f:
      yield task, method, preset, int(seed[len("seed"):]), json.load(f)


def _row_order(method_and_preset):
  """Sort key: smaller students first, then the order of `METHODS`."""
  method, preset = method_and_preset
  return _size(preset), list(METHODS).index(method)


def _size_label(preset):
  return preset.replace("L", "").replace("-H", "x")


def collect_results(output_dir):
  """{(method, preset): {"parameters", "size_bytes", (task, metric): [..]}}.

  Reads every `ft_*/best/metrics.json` under `output_dir`.
  """
  results = {}
  for task, method, preset, _, best in _finished_runs(output_dir):
    row = results.setdefault((method, preset), {})
    if task == "snips" or "parameters" not in row:
      # The SNIPS model's count and size when there is one (the GLUE heads
      # differ by a few hundred floats).
      row["parameters"] = best.get("parameters")
      row["size_bytes"] = best.get("size_bytes")
    for metric, _ in TASK_COLUMNS[task]:
      row.setdefault((task, metric), []).append(best["metrics"][metric])
  return results


def results_table(output_dir):
  """Markdown table: one row per (method, size), mean ± std over seeds."""
  results = collect_results(output_dir)
  header = ["model", "size", "parameters", "fp32 MB"]
  for task in TASKS:
    header += [title for _, title in TASK_COLUMNS[task]]
  rows = []
  for method, preset in sorted(results, key=_row_order):
    row = results[(method, preset)]
    cells = [METHODS[method], _size_label(preset),
             f"{row['parameters'] / 1e6:.2f}M" if row["parameters"] else "",
             f"{row['size_bytes'] / 1e6:.2f}" if row["size_bytes"] else ""]
    for task in TASKS:
      cells += [_format_cell(row.get((task, metric), []))
                for metric, _ in TASK_COLUMNS[task]]
    rows.append(cells)
  return report.markdown_table(header, rows) + "\n"


def per_seed_table(output_dir):
  """Markdown table of every finished fine-tuning run, one column per seed.

  One row per model and task metric; a cell is blank where that seed has not
  finished.
  """
  values = {}
  seeds = set()
  for task, method, preset, seed, best in _finished_runs(output_dir):
    seeds.add(seed)
    for metric, title in TASK_COLUMNS[task]:
      values.setdefault((method, preset, task, title), {})[seed] = (
          100 * best["metrics"][metric])
  seeds = sorted(seeds)
  rows = []
  for key in sorted(values, key=lambda k: (*_row_order(k[:2]),
                                           TASKS.index(k[2]))):
    method, preset, _, title = key
    rows.append([METHODS[method], _size_label(preset), title] +
                [f"{values[key][s]:.1f}" if s in values[key] else ""
                 for s in seeds])
  return report.markdown_table(
      ["model", "size", "metric"] + [f"seed {s}" for s in seeds], rows) + "\n"


def results_step(step_dir, output_dir, options=None):
  """Writes `results.md` into `output_dir` and prints it."""
  del options
  table = results_table(output_dir)
  text = ("Fine-tuning results (best evaluation of each run, % on SNIPS "
          "valid, SST-2 dev, MRPC dev, MNLI sample dev; mean ± sample std "
          "over seeds, n=3 unless shown).\n\n" + table)
  with open(os.path.join(output_dir, RESULTS_FILE), "w",
            encoding="utf-8") as f:
    f.write(text)
  with open(os.path.join(step_dir, "summary.json"), "w",
            encoding="utf-8") as f:
    json.dump({"results": os.path.join(output_dir, RESULTS_FILE)}, f)
  print(text)


# A summary of every finished run in the directory: rerun by every job.
pipeline.register_step_kind("results", results_step, rerun=True)
