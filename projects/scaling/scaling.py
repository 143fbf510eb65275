"""Does mixed-vocabulary pretraining beat NoKD as the budget grows? One job.

Zhao et al. (EACL 2021, Tables 1-2) find that a student whose embeddings come
from mixed-vocabulary stage I beats the same student trained from scratch
(NoKD). `projects/scaling/scaling_cpu.gin` imports this module and sets
`pipeline.steps = @scaling_steps()`: the 6 x 96 student's stage I, stage II and
NoKD at budgets of 1x, 4x and 16x the main job's (stage I 200 steps of 16 x 64
tokens, students 300 steps of 32 x 64), plus at each budget a *compute-matched*
NoKD that also gets stage I's FLOPs as extra steps, on the train part of a
corpus whose held-out documents no run reads. Then:

- `mlm_b<B>`: masked-word accuracy and loss in the student vocabulary on the
  held-out documents, for every kept checkpoint of each student run (a curve
  against tokens seen);
- `ft_snips_<arm>_b<B>_seed<S>`: SNIPS fine-tuning without task distillation
  (`finetune_snips_small.gin`, its epoch budget and early stopping), seeds 0-2;
  at the largest budget also SST-2 and MRPC (`finetune_glue_small.gin`);
- `results`: `scaling.md`, `scaling_gap.png` and `scaling_mlm.png`
  (`results_step`; `projects/scaling/scaling_table.py` does the same from any
  run directory).

Arms: `stage2` (stage I -> stage II), `nokd` (same student steps),
`nokd_matched` (student steps plus stage I's FLOPs as steps). Steps are ordered
so that a job cut short leaves complete budgets: all of 1x (pretraining, held-
out curves, SNIPS) first, then 4x, then 16x, then the GLUE runs. Every step is
an ordinary pipeline step, so rerunning the job resumes it.

Importing this module registers the study's in-process step kinds with the
pipeline (`split` and `mlm_eval`, the library's held-out split and curves
under the names the study's runs have always used, and `scaling_results`),
and, through `replication`, the `results` kind.

  python -m mixvocab_tf.train --gin_file=projects/scaling/scaling_cpu.gin \
      --model_dir=runs/scaling
"""

import glob
import json
import os
import re
import shutil
import statistics
from typing import Dict, Optional, Sequence

import gin

from mixvocab_tf.core import flops as flops_lib
from mixvocab_tf.jobs import heldout_steps
from mixvocab_tf.jobs import pipeline
from mixvocab_tf.jobs import report
from mixvocab_tf.text import heldout as heldout_lib
from mixvocab_tf.text import pretraining_input
from projects.scaling import replication

ARMS = ("stage2", "nokd", "nokd_matched")
ARM_LABELS = {
    "stage2": "mixed-vocab (stage I + II)",
    "nokd": "NoKD, same student steps",
    "nokd_matched": "NoKD, + stage I FLOPs",
    "stage2_distill": "stage II + distillation from stage I",
}
#: Arms with their own runs; `stage2_distill` only at the largest budget.
ALL_ARMS = ARMS + ("stage2_distill",)
#: The cross-vocabulary arm's loss weights, scaled so that no term swamps
#: the others with the 16x stage I as teacher: at weight 1 its first steps
#: give attention MSE ~219, soft-target KL ~3.0, hidden MSE ~2.3 and
#: masked-LM ~8.7. (The soft-target weight of stage2_distill_small.gin, 100,
#: suits a 300-step stage I, whose KL is ~0.006; on the 16x teacher it made
#: the soft targets 96% of the loss.) The results report each term at the
#: start and end of the run.
DISTILL_WEIGHTS = {"mlm_weight": 1.0, "soft_target_weight": 3.0,
                   "hidden_weight": 1.0, "attention_weight": 0.01}
#: The paired comparisons of the tables and the gap plot: (arm, against).
COMPARISONS = (("stage2", "nokd"), ("stage2", "nokd_matched"),
               ("stage2_distill", "nokd"), ("stage2_distill", "nokd_matched"))
#: Table headings: each task and the split its numbers are on.
TASK_TITLES = {"snips": "SNIPS valid", "sst2": "SST-2 dev", "mrpc": "MRPC dev"}
SPLIT_DIR = "split"
TRAIN_TEXT = heldout_lib.TRAIN_TEXT
HELDOUT_TEXT = heldout_lib.HELDOUT_TEXT
MLM_CURVE_FILE = heldout_steps.MLM_CURVE_FILE
#: `block_lines` of the study's split: larger than any document, so whole
#: documents are held out, as in every run of the study so far (the library's
#: default cuts documents into blocks of 100 lines first).
WHOLE_DOCUMENTS = 10**9
#: Scalars of a training run the trainer logs but does not show as terms.
_NOT_TERMS = ("learning_rate", "examples_per_second")
RESULTS_FILE = "scaling.md"
GAP_PLOT = "scaling_gap.png"
MLM_PLOT = "scaling_mlm.png"

# Sizes of the small configs (stage1_small.gin, stage2_small.gin,
# nokd_small.gin) and of the default teacher (all-MiniLM-L6-v2: 6 x 384, 30,522 tokens).
STAGE1_BATCH, STUDENT_BATCH, SEQ_LENGTH, PREDICTIONS = 16, 32, 64, 20
TEACHER_SIZES = dict(layers=6, hidden=384, inner=1536, vocab=30522)
STUDENT_SIZES = dict(layers=6, hidden=96, inner=384)


def step_flops(student_vocab: int = 5000) -> Dict[str, int]:
  """Analytic training FLOPs of one stage I step and one student step."""
  t, s = TEACHER_SIZES, STUDENT_SIZES
  stage1 = flops_lib.bert_train_flops(
      t["layers"], t["hidden"], t["inner"], SEQ_LENGTH, STAGE1_BATCH,
      PREDICTIONS, [(t["hidden"], t["vocab"]), (s["hidden"], student_vocab)],
      extra_token_macs=s["hidden"] * t["hidden"])
  student = flops_lib.bert_train_flops(
      s["layers"], s["hidden"], s["inner"], SEQ_LENGTH, STUDENT_BATCH,
      PREDICTIONS, [(s["hidden"], student_vocab)])
  return {"stage1": stage1, "student": student}


def matched_nokd_steps(stage1_steps: int, student_steps: int,
                       student_vocab: int = 5000) -> int:
  """NoKD steps with the FLOPs of stage I + stage II (`student_steps`)."""
  flops = step_flops(student_vocab)
  return student_steps + int(round(stage1_steps * flops["stage1"] /
                                   flops["student"]))


def run_name(arm, budget):
  return f"{arm}_b{budget}"


def finetune_name(task, arm, budget, seed):
  return f"ft_{task}_{arm}_b{budget}_seed{seed}"


@gin.configurable(module="projects")
def scaling_steps(corpus: str = gin.REQUIRED,
                  budgets: Sequence[int] = (1, 4, 16),
                  seeds: Sequence[int] = (0, 1, 2),
                  stage1_steps: int = 200,
                  student_steps: int = 300,
                  heldout_every: int = 10,
                  curve_points: int = 8,
                  mlm_eval_batches: int = 50,
                  glue_dir: Optional[str] = None,
                  glue_tasks: Sequence[str] = ("sst2", "mrpc"),
                  distill_arm: bool = True,
                  distill_weights: Optional[Dict[str, float]] = None,
                  extra_finetune_bindings: Sequence[str] = ()):
  """The scaling study's pipeline steps.

  Args:
    corpus: text in BERT pretraining layout (blank line between documents).
    budgets: multiples of the main job's pretraining budget.
    seeds: fine-tuning seeds.
    stage1_steps, student_steps: the 1x budget's steps.
    heldout_every: every this-many-th document is held out (never trained
      on; the masked-word curves read it).
    curve_points: checkpoints kept along each student run for the curve.
    mlm_eval_batches: held-out batches (32 x 64 tokens) per curve point.
    glue_dir: GLUE data (SST-2/, MRPC/); None skips the GLUE runs.
    glue_tasks: GLUE tasks fine-tuned at the largest budget.
    distill_arm: also the cross-vocabulary pretraining arm (stage II with
      soft targets, hidden and attention losses from the stage I teacher,
      `stage2_distill_small.gin`) at the largest budget, fine-tuned on SNIPS.
    distill_weights: its loss weights (default `DISTILL_WEIGHTS`).
    extra_finetune_bindings: appended to every fine-tuning step (e.g. a
      smaller budget for a smoke run).
  """
  vocab = "{output_dir}/student_vocab.txt"
  train_text = f"{{output_dir}}/{SPLIT_DIR}/{TRAIN_TEXT}"
  inputs = [f"MlmInputs.input_files = '{train_text}'"]
  steps = [(SPLIT_DIR, "split", [], [f"corpus = '{corpus}'",
                                     f"heldout_every = {heldout_every}"]),
           ("vocab", "vocab", [], [])]

  def curve(train_steps):
    every = max(1, train_steps // curve_points)
    return [f"Trainer.train_steps = {train_steps}",
            f"Trainer.checkpoint_every = {every}",
            f"Trainer.keep_checkpoints = {curve_points + 1}"]

  def finetune(task, arm, budget, seed):
    bindings = [f"INIT_CHECKPOINT = '{{output_dir}}/{run_name(arm, budget)}'",
                f"Trainer.seed = {seed}"]
    if task == "snips":
      gin_file, task_class = "finetune_snips_small.gin", "IntentSlotTask"
    else:
      gin_file, task_class = "finetune_glue_small.gin", "TextClassificationTask"
      bindings += [f"DATASET = 'glue/{task}'", f"DATA_DIR = '{glue_dir}'"]
      bindings += replication.GLUE_TASK_BINDINGS.get(task, [])
    bindings += [f"{task_class}.vocab = '{vocab}'",
                 f"{task_class}.model_name = '{ARM_LABELS[arm]} {budget}x'"]
    return (finetune_name(task, arm, budget, seed), "train", [gin_file],
            bindings + list(extra_finetune_bindings))

  for budget in budgets:
    stage1 = run_name("stage1", budget)
    steps.append((stage1, "train", ["stage1_small.gin"], [
        f"Trainer.train_steps = {stage1_steps * budget}",
        f"Trainer.checkpoint_every = {max(1, stage1_steps * budget // 4)}",
        f"Stage1Task.student_vocab = '{vocab}'"] + inputs))
    steps.append((run_name("stage2", budget), "train", ["stage2_small.gin"], [
        f"STAGE1_DIR = '{{output_dir}}/{stage1}'",
        f"StudentSpec.vocab = '{vocab}'"] + curve(student_steps * budget) +
                  inputs))
    matched = matched_nokd_steps(stage1_steps * budget, student_steps * budget)
    for arm, train_steps in (("nokd", student_steps * budget),
                             ("nokd_matched", matched)):
      steps.append((run_name(arm, budget), "train", ["nokd_small.gin"], [
          f"StudentSpec.vocab = '{vocab}'"] + curve(train_steps) + inputs))
    steps.append((f"mlm_b{budget}", "mlm_eval", [], [
        f"runs = {[run_name(arm, budget) for arm in ARMS]}",
        f"batches = {mlm_eval_batches}"]))
    for seed in seeds:
      for arm in ARMS:
        steps.append(finetune("snips", arm, budget, seed))
  if distill_arm:
    budget = max(budgets)
    name = run_name("stage2_distill", budget)
    weights = dict(DISTILL_WEIGHTS, **(distill_weights or {}))
    steps.append((name, "train", ["stage2_distill_small.gin"], [
        f"STAGE1_DIR = '{{output_dir}}/{run_name('stage1', budget)}'",
        f"StudentSpec.vocab = '{vocab}'"] + [
            f"Stage2DistillTask.{k} = {v}" for k, v in sorted(weights.items())
        ] + curve(student_steps * budget) + inputs))
    steps.append((f"mlm_distill_b{budget}", "mlm_eval", [], [
        f"runs = {[name]}", f"batches = {mlm_eval_batches}"]))
    for seed in seeds:
      steps.append(finetune("snips", "stage2_distill", budget, seed))
  if glue_dir:
    for task in glue_tasks:
      for seed in seeds:
        for arm in ARMS:
          steps.append(finetune(task, arm, max(budgets), seed))
  steps.append(("results", "scaling_results", [], []))
  return steps


# -----------------------------------------------------------------------------
# Steps run in the pipeline's process.


def split_step(step_dir, output_dir, options):
  """The library's held-out split (`heldout_split`) of whole documents."""
  options = dict(options)
  options.setdefault("block_lines", WHOLE_DOCUMENTS)
  heldout_steps.split_step(step_dir, output_dir, options)


def split_documents(path, heldout_every):
  """(train, held-out) lists of documents (lists of lines) of `path`.

  Documents are separated by blank lines; every `heldout_every`-th one (the
  1st, the (k+1)-th, ...) is held out.
  """
  documents = pretraining_input.read_documents(path)
  return heldout_lib.split_documents(documents, heldout_every,
                                     block_lines=WHOLE_DOCUMENTS)


#: Held-out masked-word accuracy of every kept checkpoint of each run: the
#: library's `heldout_mlm` (it reads `split/heldout.txt`, as the split step
#: writes it).
mlm_eval_step = heldout_steps.mlm_step


# -----------------------------------------------------------------------------
# Results.


def _read_json(path):
  if not os.path.exists(path):
    return None
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def _wall_seconds(output_dir, name):
  path = os.path.join(output_dir, name, "DONE")
  if not os.path.exists(path):
    return None
  with open(path, encoding="utf-8") as f:
    return float(f.read().split()[0])


def collect(output_dir):
  """Everything the tables and plots show, from a run directory.

  Returns:
    {"budgets": [...], "mlm": {(arm, budget): curve}, "finetune": {(task,
    arm, budget): {seed: metrics}}, "hours": {budget: wall hours},
    "steps": {(arm, budget): train steps}}.
  """
  result = {"mlm": {}, "finetune": {}, "hours": {}, "steps": {}}
  budgets = set()
  for name in sorted(os.listdir(output_dir)):
    parts = name.split("_")
    if name.startswith("ft_") and len(parts) >= 5:
      seed = int(parts[-1][len("seed"):])
      budget = int(parts[-2][1:])
      task, arm = parts[1], "_".join(parts[2:-2])
      best = _read_json(os.path.join(output_dir, name, "best",
                                     "metrics.json"))
      # A run still training (or cut off) has a best so far, not a result.
      if best is not None and _wall_seconds(output_dir, name) is not None:
        result["finetune"].setdefault((task, arm, budget),
                                      {})[seed] = best["metrics"]
      continue
    for arm in ALL_ARMS + ("stage1",):
      if name.startswith(arm + "_b") and name[len(arm) + 2:].isdigit():
        budget = int(name[len(arm) + 2:])
        budgets.add(budget)
        seconds = _wall_seconds(output_dir, name)
        if seconds is not None:
          result["hours"][budget] = result["hours"].get(budget, 0.0) + (
              seconds / 3600)
        curve = _read_json(os.path.join(output_dir, name, MLM_CURVE_FILE))
        if curve:
          result["mlm"][(arm, budget)] = curve["points"]
          result["steps"][(arm, budget)] = curve["points"][-1]["step"]
  for (_, _, budget), _ in result["finetune"].items():
    budgets.add(budget)
  for name in os.listdir(output_dir):
    if name.startswith("ft_"):
      parts = name.split("_")
      seconds = _wall_seconds(output_dir, name)
      if seconds is not None and len(parts) >= 5:
        budget = int(parts[-2][1:])
        result["hours"][budget] = result["hours"].get(budget, 0.0) + (
            seconds / 3600)
  result["budgets"] = sorted(budgets)
  return result


def _terms_of_scalars(scalars):
  """{"first_step", "first", "last_step", "last"} of {tag: [(step, value)]}."""
  by_step = {}
  for tag, points in scalars.items():
    if tag in _NOT_TERMS:
      continue
    for step, value in points:
      # As the trainer's progress line shows them.
      by_step.setdefault(step, {})[tag] = f"{value:.4g}"
  if not by_step:
    return None
  first, last = min(by_step), max(by_step)
  return {"first_step": first, "first": by_step[first],
          "last_step": last, "last": by_step[last]}


_PROGRESS = re.compile(r"step (\d+)/\d+ \(\d+%\) \| (.*?) \| lr ")


def _terms_of_log(path):
  """The same from the trainer's progress lines in `path` (old archives)."""
  # Fallback for archives made before the scalars were archived: the 16x
  # distillation arm in projects/scaling/scaling_runs/ kept only its log.txt
  # (no event files), and its table must still regenerate from the archive.
  scalars = {}
  with open(path, encoding="utf-8") as f:
    for line in f:
      match = _PROGRESS.search(line)
      if match:
        for field in match.group(2).split(" | "):
          name, _, value = field.rpartition(" ")
          scalars.setdefault(name, []).append((int(match.group(1)),
                                               float(value)))
  return _terms_of_scalars(scalars)


def distill_terms(run_dir):
  """The loss terms of a run at its first and last logged step.

  Reads the TensorBoard scalars the trainer writes (`<run>/train/`); an
  archive without them falls back to the run's `log.txt`.

  Returns:
    {"first_step", "first": {name: value}, "last_step", "last"} (values as
    the trainer's progress line formats them), or None without either.
  """
  train_dir = os.path.join(run_dir, "train")
  if glob.glob(os.path.join(train_dir, "events.out.tfevents.*")):
    return _terms_of_scalars(report.read_scalars(train_dir))
  path = os.path.join(run_dir, "log.txt")
  if os.path.exists(path):
    return _terms_of_log(path)
  return None


def _mean_std(values):
  values = [100 * v for v in values]
  if not values:
    return ""
  if len(values) == 1:
    return f"{values[0]:.1f} (n=1)"
  return f"{statistics.mean(values):.1f} ± {statistics.stdev(values):.1f}"


def paired_gap(by_seed_a, by_seed_b, metric):
  """Mean and sample std of (a - b) over the seeds both have, in points."""
  seeds = sorted(set(by_seed_a) & set(by_seed_b))
  gaps = [100 * (by_seed_a[s][metric] - by_seed_b[s][metric]) for s in seeds]
  if not gaps:
    return None
  std = statistics.stdev(gaps) if len(gaps) > 1 else 0.0
  return {"mean": statistics.mean(gaps), "std": std, "n": len(gaps),
          "wins": sum(g > 0 for g in gaps)}


def results_markdown(output_dir):
  """The study's tables (markdown) from a run directory."""
  data = collect(output_dir)
  lines = ["# Scaling study: mixed-vocabulary pretraining against NoKD", "",
           f"Run directory: `{output_dir}`. Budgets are multiples of the main "
           "job's (stage I 200 steps of 16 x 64 tokens, students 300 steps of "
           "32 x 64).", "", "## Held-out masked-word prediction (student "
           "vocabulary)", "",
           "| budget | arm | train steps | tokens seen | held-out accuracy "
           "| held-out loss |", "|---|---|---:|---:|---:|---:|"]
  for budget in data["budgets"]:
    for arm in ALL_ARMS:
      points = data["mlm"].get((arm, budget))
      if not points:
        continue
      last = points[-1]
      lines.append(f"| {budget}x | {ARM_LABELS[arm]} | {last['step']} | "
                   f"{last['tokens']:,} | {100 * last['accuracy']:.2f} | "
                   f"{last['loss']:.3f} |")
  for task, columns in replication.TASK_COLUMNS.items():
    rows = [(arm, budget) for budget in data["budgets"] for arm in ALL_ARMS
            if (task, arm, budget) in data["finetune"]]
    if not rows:
      continue
    lines += ["", f"## {TASK_TITLES.get(task, task)} (mean ± sample std "
              "over fine-tuning seeds, no task distillation)", "",
              "| budget | arm | seeds | " + " | ".join(
                  header for _, header in columns) + " |",
              "|---|---|---:|" + "---:|" * len(columns)]
    for arm, budget in rows:
      by_seed = data["finetune"][(task, arm, budget)]
      cells = [_mean_std([m[metric] for m in by_seed.values()])
               for metric, _ in columns]
      lines.append(f"| {budget}x | {ARM_LABELS[arm]} | {len(by_seed)} | " +
                   " | ".join(cells) + " |")
    lines += ["", "Paired over seeds (pretrained arm − NoKD, points; wins = "
              "seeds where the pretrained arm is ahead):", "",
              "| budget | arm | against | " + " | ".join(
                  header for _, header in columns) + " |",
              "|---|---|---|" + "---|" * len(columns)]
    for budget in data["budgets"]:
      for arm, other in COMPARISONS:
        ours = data["finetune"].get((task, arm, budget))
        theirs = data["finetune"].get((task, other, budget))
        if not ours or not theirs:
          continue
        cells = []
        for metric, _ in columns:
          gap = paired_gap(ours, theirs, metric)
          cells.append(f"{gap['mean']:+.1f} ± {gap['std']:.1f} "
                       f"({gap['wins']}/{gap['n']})")
        lines.append(f"| {budget}x | {ARM_LABELS[arm]} | "
                     f"{ARM_LABELS[other]} | " + " | ".join(cells) + " |")
  for budget in data["budgets"]:
    terms = distill_terms(os.path.join(output_dir,
                                       run_name("stage2_distill", budget)))
    if terms:
      names = sorted(set(terms["first"]) | set(terms["last"]))
      lines += ["", f"## Cross-vocabulary pretraining arm ({budget}x): each "
                "logged term at the first and last log line", "",
                "| term | step " + str(terms["first_step"]) + " | step " +
                str(terms["last_step"]) + " |", "|---|---:|---:|"]
      for term in names:
        lines.append(f"| {term} | {terms['first'].get(term, '')} | "
                     f"{terms['last'].get(term, '')} |")
  if data["hours"]:
    lines += ["", "## Cost", "", "| budget | wall hours on 2 cores (finished "
              "steps) |", "|---|---:|"]
    for budget in sorted(data["hours"]):
      lines.append(f"| {budget}x | {data['hours'][budget]:.2f} |")
  return "\n".join(lines) + "\n"


def plot_results(output_dir, gap_path, mlm_path):
  """Writes the gap plot and the held-out curves; returns what it wrote."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  import matplotlib.ticker  # pylint: disable=g-import-not-at-top
  data = collect(output_dir)
  written = []
  # Gap in SNIPS slot F1 against stage I tokens, with the seeds' spread.
  tokens = {b: b * 200 * STAGE1_BATCH * SEQ_LENGTH for b in data["budgets"]}
  fig, ax = plt.subplots(figsize=(6, 4))
  drew = False
  # The comparisons sit a little either side of their budget so that their
  # error bars do not hide each other.
  for (arm, other), marker, shift in zip(COMPARISONS, "os^v",
                                         (0.94, 0.98, 1.02, 1.06)):
    xs, ys, errs = [], [], []
    for budget in data["budgets"]:
      ours = data["finetune"].get(("snips", arm, budget))
      theirs = data["finetune"].get(("snips", other, budget))
      gap = ours and theirs and paired_gap(ours, theirs, "slot_f1")
      if gap:
        xs.append(tokens[budget] * shift)
        ys.append(gap["mean"])
        errs.append(gap["std"])
    if xs:
      ax.errorbar(xs, ys, yerr=errs, marker=marker, capsize=4,
                  label=f"{ARM_LABELS[arm]} − {ARM_LABELS[other]}")
      drew = True
  if drew:
    ax.axhline(0, color="gray", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xticks([tokens[b] for b in data["budgets"]])
    ax.set_xticklabels([f"{tokens[b] / 1e6:.1f}M ({b}x)"
                        for b in data["budgets"]])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("stage I tokens (budget)")
    ax.set_ylabel("SNIPS valid slot F1 gap (points)")
    ax.set_title("Pretraining from stage I minus NoKD (3 seeds)")
    ax.legend(fontsize=8, loc="upper center")
    fig.tight_layout()
    fig.savefig(gap_path, dpi=120)
    written.append(gap_path)
  plt.close(fig)
  # Held-out masked-word accuracy and loss against tokens seen: at small
  # budgets accuracy sits on the most frequent words, and the loss moves.
  fig, (acc_ax, loss_ax) = plt.subplots(1, 2, figsize=(11, 4))
  drew = False
  for (arm, budget), points in sorted(data["mlm"].items()):
    tokens_seen = [p["tokens"] for p in points]
    label = f"{ARM_LABELS[arm]}, {budget}x"
    acc_ax.plot(tokens_seen, [100 * p["accuracy"] for p in points],
                marker=".", label=label)
    loss_ax.plot(tokens_seen, [p["loss"] for p in points], marker=".",
                 label=label)
    drew = True
  if drew:
    for ax in (acc_ax, loss_ax):
      ax.set_xscale("log")
      ax.set_xlabel("student tokens seen")
    acc_ax.set_ylabel("held-out masked-word accuracy (%)")
    loss_ax.set_ylabel("held-out masked-word loss (nats)")
    loss_ax.legend(fontsize=7)
    fig.suptitle("Held-out masked-word prediction, student vocabulary")
    fig.tight_layout()
    fig.savefig(mlm_path, dpi=120)
    written.append(mlm_path)
  plt.close(fig)
  return written


#: What `collect` reads, relative to a run's directory.
RESULT_FILES = ("DONE", MLM_CURVE_FILE, os.path.join("best", "metrics.json"))


def archive_results(output_dir, archive_dir):
  """Copies the files the tables and plots read into `archive_dir`.

  The copy keeps the run directory's layout, so `results_markdown` and
  `plot_results` (and `projects/scaling/scaling_table.py`) give the same
  tables from it; it is a few hundred KB where the run directory holds
  gigabytes of checkpoints, small enough to keep with the study. Also
  copied: the held-out split's summary and the cross-vocabulary arm's
  TensorBoard scalars (`train/events.out.tfevents.*`: its loss terms), or its
  log where a run has no scalars.

  Returns:
    The relative paths copied.
  """
  copied = []
  for name in sorted(os.listdir(output_dir)):
    run_dir = os.path.join(output_dir, name)
    if not os.path.isdir(run_dir):
      continue
    wanted = list(RESULT_FILES)
    if name == SPLIT_DIR:
      wanted += [heldout_lib.SUMMARY_JSON, "summary.json"]
    if name.startswith("stage2_distill_b"):
      events = sorted(glob.glob(os.path.join(run_dir, "train",
                                             "events.out.tfevents.*")))
      wanted += ([os.path.relpath(e, run_dir) for e in events] if events else
                 ["log.txt"])
    for relative in wanted:
      source = os.path.join(run_dir, relative)
      if os.path.isfile(source):
        target = os.path.join(archive_dir, name, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)
        copied.append(os.path.join(name, relative))
  return copied


def results_step(step_dir, output_dir, options=None):
  """Writes scaling.md and the plots into the run directory."""
  del step_dir, options
  with open(os.path.join(output_dir, RESULTS_FILE), "w",
            encoding="utf-8") as f:
    f.write(results_markdown(output_dir))
  plot_results(output_dir, os.path.join(output_dir, GAP_PLOT),
               os.path.join(output_dir, MLM_PLOT))


def step_functions() -> Dict[str, object]:
  """The pipeline step kinds this module adds."""
  return {"split": split_step, "mlm_eval": mlm_eval_step,
          "scaling_results": results_step}


for _kind, _fn in step_functions().items():
  pipeline.register_step_kind(_kind, _fn, rerun=_kind == "scaling_results")

