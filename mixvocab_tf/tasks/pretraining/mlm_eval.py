"""Masked-word prediction accuracy of pretraining checkpoints, per vocabulary.

The intrinsic metric of the mixed-vocabulary papers (Zhao et al., "Extremely
Small BERT Models from Mixed-Vocabulary Training", EACL 2021, and its arXiv
predecessor 1909.11687): the share of masked tokens of held-out text that a
model predicts exactly, counted separately for the teacher-vocabulary tokens
(under the teacher softmax) and the student-vocabulary tokens (under the
student softmax). A stage I teacher is read with mixed segmentation (both
vocabularies), or all-teacher / all-student segmentation; a stage II or NoKD
student with student segmentation.

The text goes through the task's own pretraining pipeline (the same
tokenization, packing and masking as training) with `repeat=False`, read
once in file order, from the task's input files or from `input_files` (held
out text); `num_batches` limits it.

Beside each vocabulary's numbers stands its unigram floor on the same masked
tokens (`text.unigram`): the loss and accuracy of a model that knows only the
token frequencies of the task's training text. A loss at the floor means
the model learned word frequencies and nothing of context.
"""

import dataclasses
from typing import Any, Dict, Optional, Sequence, Union

from absl import logging
import numpy as np

from mixvocab_tf import text as text_lib
from mixvocab_tf.core import evaluation
from mixvocab_tf.tasks.pretraining import mlm_task
from mixvocab_tf.text import unigram

MODES = text_lib.pretraining_input.MODES


def masked_lm_dataset(task: mlm_task.MlmTask, mode: Optional[str] = None,
                      input_files: Optional[Union[str, Sequence[str]]] = None,
                      batch_size: Optional[int] = None):
  """One pass of the task's pretraining pipeline (no repeat), in file order.

  Args:
    task: an `MlmTask` (stage1, stage2, nokd, ...).
    mode: 'mixed', 'student' or 'teacher' segmentation (default: the task's).
    input_files: text files or globs to read instead of the task's.
    batch_size: sequences per batch (default: the task's global batch).
  """
  mode = mode or task.input_mode
  if mode not in MODES:
    raise ValueError(f"mode must be one of {MODES}; received {mode!r}.")
  inputs = task.inputs
  if input_files is not None:
    inputs = dataclasses.replace(inputs, input_files=input_files,
                                 tfds_name=None)
  config = inputs.pipeline_config(mode, repeat=False)
  # Shuffling would only reorder a one-pass evaluation; without it a run is
  # reproducible batch for batch.
  config = dataclasses.replace(config, shuffle_buffer=0)
  return text_lib.pretraining_dataset(
      config, task.vocab("teacher"), task.vocab("student"),
      batch_size or task.global_batch_size)


def _reduce(state) -> Dict[str, Any]:
  results = {}
  for name, (total, count) in sorted((state or {}).items()):
    vocab, metric = name.split("/")
    results[name] = float(total / count) if count else float("nan")
    if metric == "accuracy":
      results[f"{vocab}/masked_tokens"] = int(count)
  return results


def unigram_floors(task: mlm_task.MlmTask,
                   train_files: Optional[Union[str, Sequence[str]]] = None
                   ) -> Dict[str, unigram.UnigramFloor]:
  """{vocabulary name: its `UnigramFloor`} from the task's training text.

  Args:
    task: the `MlmTask` whose vocabularies count.
    train_files: the text the frequencies come from (default: the task's
      input files).

  Raises:
    ValueError: the task reads a TFDS dataset and no `train_files` is given.
  """
  files = train_files or task.inputs.input_files
  if files is None:
    raise ValueError(
        f"Task {task.task_name} reads TFDS dataset {task.inputs.tfds_name!r}; "
        "give train_files (text with its token frequencies) for the floor.")
  return {mlm_task.VOCABS[v]: unigram.UnigramFloor.from_files(
      files, task.vocab(mlm_task.VOCABS[v])) for v in task.loss_vocab_ids}


def floor_results(floors: Dict[str, unigram.UnigramFloor],
                  dataset, num_batches: Optional[int] = None
                  ) -> Dict[str, float]:
  """`{vocab}_mlm/unigram_loss` and `/unigram_accuracy` over `dataset`."""
  if num_batches is not None:
    dataset = dataset.take(num_batches)
  sums = {name: np.zeros(3) for name in floors}
  for batch in dataset:
    ids = batch["masked_lm_ids"].numpy()
    weights = batch["masked_lm_weights"].numpy().astype(np.float64)
    vocab_ids = batch["masked_lm_vocab_ids"].numpy()
    for vocab_id, name in mlm_task.VOCABS.items():
      if name in floors:
        sums[name] += floors[name].sums(ids, weights * (vocab_ids == vocab_id))
  results = {}
  for name, (loss, count, correct) in sums.items():
    results[f"{name}_mlm/unigram_loss"] = (loss / count if count
                                           else float("nan"))
    results[f"{name}_mlm/unigram_accuracy"] = (correct / count if count
                                               else float("nan"))
  return results


def masked_word_accuracy(task: mlm_task.MlmTask, model,
                         num_batches: Optional[int] = None,
                         mode: Optional[str] = None,
                         input_files: Optional[Union[str,
                                                     Sequence[str]]] = None,
                         batch_size: Optional[int] = None,
                         floors: Union[bool, Dict[
                             str, unigram.UnigramFloor]] = True
                         ) -> Dict[str, Any]:
  """Masked-token accuracy and loss of `model` per vocabulary.

  Example:
  ```python
  task = nokd.NoKDTask()
  model = task.build_model()
  evaluation.restore_model(task, model, "/tmp/nokd")
  masked_word_accuracy(task, model, num_batches=20,
                       input_files=["held_out.txt"])
  # {'student_mlm/accuracy': 0.21, 'student_mlm/loss': 5.9,
  #  'student_mlm/masked_tokens': 5120, 'eval_batches': 20, ...}
  ```

  Args:
    task: the `MlmTask` the model was trained by.
    model: its model, weights loaded (`evaluation.restore_model`).
    num_batches: batches to read at most (None: all of the text).
    mode: segmentation, see `masked_lm_dataset`.
    input_files: held-out text (default: the task's input files).
    batch_size: sequences per batch.
    floors: True: the unigram floors of the task's training text
      (`unigram_floors`; left out with a warning if that text cannot be
      read); a dict of them (to reuse across checkpoints); False: none.

  Returns:
    `{vocab}_mlm/accuracy`, `{vocab}_mlm/loss` and `{vocab}_mlm/masked_tokens`
    for each vocabulary the model predicts (the task's `loss_vocab_ids`),
    with floors `{vocab}_mlm/unigram_loss` and `{vocab}_mlm/unigram_accuracy`
    on the same tokens, and `eval_batches`, `eval_seconds`, `mode`.
  """
  dataset = masked_lm_dataset(task, mode, input_files, batch_size)
  results = evaluation.evaluate(task, model, num_batches, dataset=dataset,
                                reduce_fn=_reduce)
  if floors is True:
    try:
      floors = unigram_floors(task)
    except (FileNotFoundError, ValueError) as e:
      # Evaluating a checkpoint whose training text is elsewhere: the
      # model's numbers still stand; say why the floor is missing.
      logging.warning("No unigram floor beside the masked-LM numbers: %s", e)
      floors = None
  if floors:
    # The pipeline is deterministic without shuffling: the same tokens again.
    results.update(floor_results(floors, dataset, num_batches))
  results["mode"] = mode or task.input_mode
  return results


def accuracy_table(results: Dict[str, Any]) -> str:
  """A markdown table of accuracy and loss per vocabulary, beside the floor."""
  lines = ["| vocabulary | masked tokens | accuracy (%) | loss (nats) | "
           "unigram accuracy (%) | unigram loss (nats) |",
           "|---|---:|---:|---:|---:|---:|"]
  for vocab in ("teacher", "student"):
    key = f"{vocab}_mlm"
    if f"{key}/accuracy" in results and results.get(f"{key}/masked_tokens"):
      floor_accuracy = results.get(f"{key}/unigram_accuracy", float("nan"))
      floor_loss = results.get(f"{key}/unigram_loss", float("nan"))
      lines.append(
          f"| {vocab} | {results[f'{key}/masked_tokens']} | "
          f"{100 * results[f'{key}/accuracy']:.2f} | "
          f"{results[f'{key}/loss']:.3f} | {100 * floor_accuracy:.2f} | "
          f"{floor_loss:.3f} |")
  return "\n".join(lines)

