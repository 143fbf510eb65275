"""A pretraining-recipe sweep as one resumable pipeline job.

Each arm is a student pretraining run (NoKD or stage II, a shipped gin file
plus bindings) on the train part of a corpus, followed by its held-out curve
(`heldout_mlm`: masked-token loss and accuracy of every kept checkpoint on
held-out blocks, beside the unigram floor of the same tokens). A gin file
sets `pipeline.steps = @recipe_sweep_steps()`; rerunning it resumes. The
table comes from `table.py`, which reads each arm's `mlm_curve.json` and the
pipeline's `DONE` time.

  python -m mixvocab_tf.train \
      --gin_file=projects/pretraining_recipe/sweep_round1.gin \
      --model_dir=runs/sweep
"""

from typing import Dict, Sequence, Union

import gin

Arm = Union[Sequence[str], tuple]


@gin.configurable(module="projects")
def recipe_sweep_steps(corpus: str = gin.REQUIRED,
                       arms: Dict[str, Arm] = gin.REQUIRED,
                       gin_file: str = "nokd_small.gin",
                       train_steps: int = 2250,
                       curve_points: int = 9,
                       eval_batches: int = 50,
                       common_bindings: Sequence[str] = ()):
  """Pipeline steps: the split, then each arm's run and held-out curve.

  Args:
    corpus: text in BERT pretraining layout; held-out blocks are cut from it.
    arms: {name: bindings} or {name: (gin file, bindings)}.
    gin_file: the gin file of arms that give only bindings.
    train_steps: steps of every arm (an arm may bind its own).
    curve_points: checkpoints kept along each run.
    eval_batches: held-out batches (of the arm's batch shape) per point.
    common_bindings: bindings of every arm, before its own.
  """
  steps = [("split", "heldout_split", [], [f"corpus = {corpus!r}"])]
  for name, arm in arms.items():
    if isinstance(arm, tuple):
      arm_gin, bindings = arm
    else:
      arm_gin, bindings = gin_file, arm
    bindings = list(bindings)
    steps_of_arm = train_steps
    for binding in bindings:
      key, _, value = binding.partition("=")
      if key.strip() == "Trainer.train_steps":
        steps_of_arm = int(value)
    every = max(1, steps_of_arm // curve_points)
    steps.append((name, "train", [arm_gin], [
        "MlmInputs.input_files = '{output_dir}/split/train.txt'",
        f"Trainer.train_steps = {train_steps}",
        f"Trainer.checkpoint_every = {every}",
        f"Trainer.keep_checkpoints = {curve_points + 1}",
        f"Trainer.log_every = {max(1, steps_of_arm // 20)}",
    ] + list(common_bindings) + bindings))
    steps.append((f"eval_{name}", "heldout_mlm", [], [
        f"runs = {[name]}", f"batches = {eval_batches}"]))
  return steps
