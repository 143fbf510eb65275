"""The paper's question on the tuned recipe, as one resumable job.

Does stage II (mixed-vocabulary pretraining from stage I) give a better
6 x 96 student than NoKD (the same student pretrained on its own vocabulary
alone)? Asked at two pretraining budgets, step-matched and compute-matched,
on held-out masked-token loss along training and downstream without task
distillation (SNIPS valid, SST-2 dev; several fine-tuning seeds).

The students come from runs that already exist (the main job's stage II and
NoKD, the longer run that made the shipped pretrained student); this job
adds the NoKD students they lack, all on the same train part and vocabulary:

- `long_nokd`: NoKD with as many steps as the longer run's stage II
  (step-matched);
- `main_nokd_cm`, `long_nokd_cm`: NoKD given also the compute of stage I, in
  student steps (compute-matched; the step counts come from the runs' own
  `DONE` times, see `paper_question.gin`).

Then each student is fine-tuned (`finetune_snips_small.gin`,
`finetune_glue_small.gin`: their epoch budgets with early stopping on the
validation metric) with every seed, and the `paper_question_results` step
writes `results.md`: mean and sample standard deviation over seeds beside
the majority class. Steps are ordered so that a job cut short still gives
complete comparisons: seed 0 everywhere first.

  python -m mixvocab_tf.train \
      --gin_file=projects/pretraining_recipe/paper_question.gin \
      --gin_bindings="MAIN_RUN = 'runs/quickstart'" \
      --gin_bindings="LONG_RUN = 'runs/pretrained_student'" \
      --gin_bindings="CORPUS = '/path/to/pretrain_corpus.txt'" \
      --gin_bindings="GLUE_DIR = '/path/to/glue'" \
      --model_dir=runs/paper_question
"""

import json
import os
import statistics
from typing import Dict, Optional, Sequence

import gin
import tensorflow as tf

from mixvocab_tf.jobs import pipeline

RESULTS_FILE = "results.md"
TASKS = ("snips", "sst2")
# (metric key in best/metrics.json, column header); values are fractions.
TASK_METRICS = {
    "snips": (("intent_accuracy", "SNIPS intent"), ("slot_f1", "SNIPS slot F1")),
    "sst2": (("accuracy", "SST-2 acc."),),
}
ARM_TITLES = {
    "stage2": "stage II",
    "nokd": "NoKD, step-matched",
    "nokd_cm": "NoKD, compute-matched",
}


def finetune_dir(task, budget, arm, seed):
  return f"ft_{task}_{budget}_{arm}_seed{seed}"


def _nokd_steps(name, split, train_steps, vocab, curve_points, eval_batches):
  """A NoKD run on a split's train part and its held-out curve."""
  every = max(1, train_steps // curve_points)
  return [
      (name, "train", ["nokd_small.gin"], [
          "MlmInputs.input_files = '{output_dir}/" + split + "/train.txt'",
          f"StudentSpec.vocab = {vocab!r}",
          f"Trainer.train_steps = {train_steps}",
          f"Trainer.checkpoint_every = {every}",
          f"Trainer.keep_checkpoints = {curve_points + 1}",
          f"Trainer.log_every = {max(1, train_steps // 50)}",
      ]),
      (f"eval_{name}", "heldout_mlm", [], [
          f"runs = {[name]}", f"split = {split!r}",
          f"batches = {eval_batches}"]),
  ]


def _finetune_step(task, budget, arm, seed, init, vocab, glue_dir):
  bindings = [f"INIT_CHECKPOINT = {init!r}", f"Trainer.seed = {seed}"]
  label = f"{ARM_TITLES[arm]} 6x96 ({budget} budget)"
  if task == "snips":
    gin_file, task_class = "finetune_snips_small.gin", "IntentSlotTask"
  else:
    gin_file, task_class = "finetune_glue_small.gin", "TextClassificationTask"
    bindings += [f"DATASET = 'glue/{task}'", f"DATA_DIR = {glue_dir!r}"]
  bindings += [f"{task_class}.vocab = {vocab!r}",
               f"{task_class}.model_name = {label!r}"]
  return (finetune_dir(task, budget, arm, seed), "train", [gin_file],
          bindings)


@gin.configurable(module="projects")
def paper_question_steps(main_run: str = gin.REQUIRED,
                         long_run: str = gin.REQUIRED,
                         corpus: str = gin.REQUIRED,
                         glue_dir: Optional[str] = None,
                         long_steps: int = 9000,
                         main_cm_steps: Optional[int] = None,
                         long_cm_steps: Optional[int] = None,
                         seeds: Sequence[int] = (0, 1, 2),
                         tasks: Sequence[str] = TASKS,
                         curve_points: int = 10,
                         eval_batches: int = 50):
  """Pipeline steps of the paper's question (see the module docstring).

  Args:
    main_run: the run directory of the main job with its NoKD baseline
      (`quickstart_nokd.gin`): its `student_vocab.txt`, `split/`, `stage2/`
      and `nokd/` are used.
    long_run: the longer run's directory (`pretrained_student.gin`): its
      `stage2/` and `package/pretrained_student/student_vocab.txt`.
    corpus: the longer run's corpus (its split is cut again here, the same
      blocks, for the held-out curves).
    glue_dir: GLUE data with SST-2/ (needed when tasks include 'sst2').
    long_steps: the longer run's stage II steps (the step-matched NoKD's).
    main_cm_steps / long_cm_steps: steps of the compute-matched NoKD at each
      budget; None leaves that arm out.
    seeds: fine-tuning seeds (`Trainer.seed`).
    tasks: 'snips' and / or 'sst2'.
    curve_points, eval_batches: as `heldout_mlm`'s.
  """
  unknown = sorted(set(tasks) - set(TASKS))
  if unknown:
    raise ValueError(f"tasks {unknown} are not among {TASKS}.")
  if "sst2" in tasks and not glue_dir:
    raise ValueError("glue_dir is required for SST-2: a directory with "
                     "SST-2/train.tsv and SST-2/dev.tsv.")
  if not tf.io.gfile.exists(os.path.join(main_run, "nokd", "DONE")):
    raise ValueError(
        f"{main_run} has no finished NoKD run (nokd/DONE): main_run must be "
        "a run of the main job with its NoKD baseline, quickstart_nokd.gin "
        "(run in a finished quickstart.gin job's directory, it adds NoKD's "
        "runs only).")
  main_vocab = os.path.join(main_run, "student_vocab.txt")
  long_vocab = os.path.join(long_run, "package", "pretrained_student",
                            "student_vocab.txt")
  steps = [("split_long", "heldout_split", [], [f"corpus = {corpus!r}"]),
           # The main job's corpus is the built-in one.
           ("split_main", "heldout_split", [], [])]
  steps += _nokd_steps("long_nokd", "split_long", long_steps, long_vocab,
                       curve_points, eval_batches)
  students = {  # (budget, arm) -> (init checkpoint, vocabulary)
      ("main", "stage2"): (os.path.join(main_run, "stage2"), main_vocab),
      ("main", "nokd"): (os.path.join(main_run, "nokd"), main_vocab),
      ("long", "stage2"): (os.path.join(long_run, "stage2"), long_vocab),
      ("long", "nokd"): ("{output_dir}/long_nokd", long_vocab),
  }
  if main_cm_steps:
    steps += _nokd_steps("main_nokd_cm", "split_main", main_cm_steps,
                         main_vocab, curve_points, eval_batches)
    students[("main", "nokd_cm")] = ("{output_dir}/main_nokd_cm", main_vocab)
  late = []
  if long_cm_steps:
    late = _nokd_steps("long_nokd_cm", "split_long", long_cm_steps,
                       long_vocab, curve_points, eval_batches)
  # Every seed of every student on SNIPS first (the shortest runs), the last
  # compute-matched arm pretrained before its own SNIPS runs; then SST-2 (four
  # times longer a run), seed 0 of every student before the other seeds, so
  # that an interrupted job leaves complete comparisons.
  cm_student = {("long", "nokd_cm"): ("{output_dir}/long_nokd_cm", long_vocab)}
  for task in tasks:
    if task == "sst2" and late:
      steps += late
      late = []
      students.update(cm_student)
    for seed in seeds:
      for (budget, arm), (init, vocab) in students.items():
        steps.append(_finetune_step(task, budget, arm, seed, init, vocab,
                                    glue_dir))
    if task == "snips" and late:
      steps += late
      late = []
      students.update(cm_student)
      for seed in seeds:
        steps.append(_finetune_step(task, "long", "nokd_cm", seed,
                                    "{output_dir}/long_nokd_cm", long_vocab,
                                    glue_dir))
  if late:  # SNIPS not among the tasks
    steps += late
  steps.append(("results", "paper_question_results", [], []))
  return steps


def collect(output_dir) -> Dict[tuple, Dict]:
  """{(task, budget, arm): {seed: best metrics}} of the finished runs."""
  runs = {}
  for name in sorted(os.listdir(output_dir)):
    path = os.path.join(output_dir, name, "best", "metrics.json")
    # A run still training (or interrupted) has a best/ too: only finished
    # steps count.
    done = os.path.join(output_dir, name, pipeline.DONE)
    if not (name.startswith("ft_") and os.path.exists(path) and
            os.path.exists(done)):
      continue
    _, task, budget, rest = name.split("_", 3)
    arm, seed = rest.rsplit("_seed", 1)
    with open(path, encoding="utf-8") as f:
      runs.setdefault((task, budget, arm), {})[int(seed)] = json.load(f)
  return runs


def _cell(values):
  values = [100 * v for v in values]
  if not values:
    return ""
  if len(values) == 1:
    return f"{values[0]:.2f} (n=1)"
  return (f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"
          f" (n={len(values)})")


def results_table(output_dir) -> str:
  """Markdown: one row per (task, budget, arm), mean ± std over seeds."""
  runs = collect(output_dir)
  lines = ["| task | budget | student | metric | mean ± std over seeds | "
           "per seed | majority class |", "|---|---|---|---|---|---|---|"]
  order = {arm: i for i, arm in enumerate(ARM_TITLES)}
  for (task, budget, arm) in sorted(
      runs, key=lambda k: (TASKS.index(k[0]), k[1] != "main", order[k[2]])):
    by_seed = runs[(task, budget, arm)]
    for key, title in TASK_METRICS[task]:
      values = [by_seed[s]["metrics"][key] for s in sorted(by_seed)]
      per_seed = ", ".join(
          f"{s}: {100 * by_seed[s]['metrics'][key]:.2f}"
          for s in sorted(by_seed))
      majority = ""
      first = by_seed[min(by_seed)]["metrics"]
      if key == "accuracy" and "majority_accuracy" in first:
        majority = f"{100 * first['majority_accuracy']:.2f}"
      if key == "intent_accuracy" and "majority_intent_accuracy" in first:
        majority = f"{100 * first['majority_intent_accuracy']:.2f}"
      lines.append(f"| {task} | {budget} | {ARM_TITLES[arm]} | {title} | "
                   f"{_cell(values)} | {per_seed} | {majority} |")
  return "\n".join(lines) + "\n"


def results_step(step_dir, output_dir, options=None):
  del options
  table = results_table(output_dir)
  with open(os.path.join(step_dir, RESULTS_FILE), "w", encoding="utf-8") as f:
    f.write("# Stage II against NoKD, downstream (best validation score "
            "of each fine-tuning run, in %)\n\n" + table)


pipeline.register_step_kind("paper_question_results", results_step,
                            rerun=True)
