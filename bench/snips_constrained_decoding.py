r"""SNIPS valid slot F1 with arg-max vs constrained (Viterbi) IOB decoding.

  python bench/snips_constrained_decoding.py RUN_DIR [RUN_DIR ...]

Rebuilds each run's task from its operative_config.gin, restores `best/`,
collects the slot logits at each word's first piece over the evaluation
split, and scores both decoders (`tasks.iob_decoding`); also counts the
ill-formed I- tags the arg-max decoder emits.
"""

import os
import sys

import gin
import numpy as np

from mixvocab_tf.tasks import base_task
from mixvocab_tf.tasks import finetune_snips
from mixvocab_tf.tasks import iob_decoding
from mixvocab_tf.tasks import metrics as metrics_lib
from mixvocab_tf.trainer import evaluation
from mixvocab_tf.trainer import gin_utils
from mixvocab_tf.trainer import trainer as trainer_lib


def word_logits_of_run(run_dir):
  gin.clear_config()
  gin_utils.parse([], [])
  gin.parse_config_file(os.path.join(run_dir, trainer_lib.OPERATIVE_CONFIG),
                        skip_unknown=True)
  task = base_task.get_task_class(gin.query_parameter("Trainer.task"))()
  model = task.build_model()
  evaluation.restore_model(task, model, os.path.join(run_dir, "best"))
  examples = finetune_snips._read(task.split_dir(task.eval_split))  # pylint: disable=protected-access
  per_query, intents = {}, {}
  for batch in task.build_inputs(training=False):
    outputs = model(batch, training=False)
    slot_logits = outputs["slot_logits"].numpy()
    predicted = outputs["intent_logits"].numpy().argmax(-1)
    for row, index in enumerate(batch["example_index"].numpy()):
      n = int(batch["num_words"][row])
      positions = batch["word_start_positions"][row].numpy()[:n]
      # Words without a position get a certain 'O'.
      logits = np.full([n, slot_logits.shape[-1]], -1e4, np.float32)
      logits[:, 0] = 0.0
      kept = positions >= 0
      logits[kept] = slot_logits[row, positions[kept]]
      per_query[int(index)] = logits
      intents[int(index)] = task.labels.intents[int(predicted[row])]
  order = sorted(per_query)
  return task, examples, [per_query[i] for i in order], [intents[i] for i in order]


def main(runs):
  print("| run | arg-max slot F1 | constrained slot F1 | invalid I- tags (arg-max) | queries with one |")
  print("|---|---|---|---|---|")
  for run in runs:
    task, examples, logits, intents = word_logits_of_run(run)
    slots = task.labels.slots
    allowed = iob_decoding.allowed_transitions(slots)
    starts = iob_decoding.allowed_starts(slots)
    argmax = [[slots[t] for t in l.argmax(-1)] for l in logits]
    viterbi = [iob_decoding.viterbi_decode(l, slots, allowed, starts)
               for l in logits]
    invalid = [iob_decoding.invalid_inside_tags(t) for t in argmax]
    n = len(logits)
    a = metrics_lib.snips_metrics(examples.intents[:n], intents,
                                  examples.tags[:n], argmax)
    v = metrics_lib.snips_metrics(examples.intents[:n], intents,
                                  examples.tags[:n], viterbi)
    print(f"| {os.path.basename(run.rstrip('/'))} | {100 * a['slot_f1']:.2f} | "
          f"{100 * v['slot_f1']:.2f} | {sum(invalid)} | "
          f"{sum(1 for i in invalid if i)} |", flush=True)


if __name__ == "__main__":
  main(sys.argv[1:])
