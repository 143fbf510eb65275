"""Your own data in, a phone-sized model out: the own-data job's steps.

`gin_configs/jobs/own_data.gin` sets `pipeline.steps = @own_data_steps()`:

  python -m mixvocab_tf.train --gin_file=own_data.gin \
      --gin_bindings="DATA_DIR = 'my_data'" --model_dir=runs/mine

`own_data_steps` reads and checks every file of the dataset when the job
starts (`datasets.user_dataset`: the data contract), before anything
trains, and picks the task from what it finds:

- intent and slots (`seq.in` / `seq.out` / `label` directories, JSONL of
  tokens, tags and intent, or of text, character spans and intent, or Rasa
  NLU YAML with entities): the
  default teacher is fine-tuned jointly for intents and IOB slot tags
  (`finetune_snips_small.gin` on the data) until validation slot F1 stops
  improving; the student is distilled from it across vocabularies
  (`distill_snips_small.gin`: its intent and per-word slot distributions,
  cached once, over train plus copies with slot values swapped among the
  user's own train examples: 2 of each query, up to 12 on small splits,
  more for the queries of rarer intents); a slot tagger's data (train
  gives no query an intent, e.g. doccano's sequence-labelling export) is
  such data of one intent, `examples.NO_INTENT`: the report shows slot F1
  beside its floor (every word 'O'), and the texts to label next are
  ranked by their least sure word;
- text classification (CSV, TSV or JSONL of text, or text pairs, and label;
  or Rasa NLU YAML without entities):
  the teacher is fine-tuned until validation accuracy stops improving
  (`finetune_glue_teacher_small.gin`), the student distilled from its logits
  over train plus word-edited copies it labels (`distill_glue_small.gin`; up
  to 4 copies, to about 40,000 examples); both classifiers read the mean of
  their token states.

With `OUT_OF_SCOPE`, texts the app should not answer (sentences of the
built-in corpus, or the app's own) join train for both as a label of their
own (`datasets.out_of_scope`), and the report says how the exported student
answers held-out prose. Epoch budgets are counted on the user's train split
(with those texts). The teacher is the package's default one
(all-MiniLM-L6-v2), or with `TEACHER` a BERT of the user's (a Hugging Face or
google-research/bert directory, checked when the job starts:
`tasks.teacher_check`), fine-tuned and distilled from the same way. The
student starts
from a pretrained student: a run directory the user names (`STUDENT`), else
the one shipped in the package (`assets.pretrained_student_dir`), else the job
pretrains one first (stage I then stage II on the built-in corpus). With
`WARM_START`, a finished run of the job on an earlier version of the data,
the teacher and the student start from that run's instead (labels matched
by name) and train half of their step budgets. Then
`export` writes the student's SavedModel (raw strings in) and a
dynamic-range .tflite, scores the .tflite on validation and test in the
LiteRT interpreter and writes the test predictions as JSONL; `report` writes
`report.md`: validation and test scores of teacher and student, each run's
best and last step and its validation curve (`training_curves.png`, beside
the majority-label floor), the worst labels (and slot types) by F1 beside
the teacher's F1 on them (low for both: too few examples; low for the
student only: distillation's gap) and how many of the student's misses the
teacher shares, the most confused pairs, the validation and test examples
answered wrong with the highest scores beside the teacher's answers (file
and line: labels to check first), the share answered and right above score
thresholds (an app's fallback) and, for intent and slots, the share of
answered slots taken and right above their scores (an app's confirmation of
unsure values), sizes, latency and each step's time. Every
step is an ordinary pipeline step: rerunning the command resumes.

The dataset is read from the local disk (`user_dataset`); the job's directory
may be on any file system TensorFlow reads that its child processes reach
(`gs://`): its files go through `tf.io.gfile`.
"""

import dataclasses
import functools
import hashlib
import json
import os
import subprocess
import sys
from typing import Optional, Sequence, Union

from absl import logging
import gin
import tensorflow as tf

from mixvocab_tf import assets
from mixvocab_tf.core import actions
from mixvocab_tf.core import evaluation
from mixvocab_tf.core import gin_utils
from mixvocab_tf.core import precision as precision_lib
from mixvocab_tf.core import run_files
from mixvocab_tf.core import trainer as trainer_lib
from mixvocab_tf.datasets import errors
from mixvocab_tf.datasets import examples as examples_lib
from mixvocab_tf.datasets import intent_slot_files
from mixvocab_tf.datasets import label_studio
from mixvocab_tf.datasets import out_of_scope as out_of_scope_lib
from mixvocab_tf.datasets import rasa_files
from mixvocab_tf.datasets import slot_values as slot_values_lib
from mixvocab_tf.datasets import unlabelled as unlabelled_lib
from mixvocab_tf.datasets import user_dataset
from mixvocab_tf.jobs import export_steps
from mixvocab_tf.jobs import student_size as student_size_lib
from mixvocab_tf.jobs import step_times
from mixvocab_tf.jobs import steps as steps_lib
from mixvocab_tf.serving import scoring
from mixvocab_tf.tasks import teacher_check
from mixvocab_tf.tasks.finetuning import batch_padding
from mixvocab_tf.tasks.finetuning import finetune_task
from mixvocab_tf.tasks.finetuning import warm_start as warm_start_lib
from mixvocab_tf.tasks.finetuning.intent_slot import augment as intent_slot_augment
from mixvocab_tf.tasks.finetuning.intent_slot import task as intent_slot_task
from mixvocab_tf.tasks.finetuning.text_classification import task as text_classification_task

SUMMARY_JSON = "summary.json"
#: The batch of the fine-tuning and distillation configs (BATCH_SIZE).
_BATCH_SIZE = 64
#: Length buckets of the text-classification teacher's batches (each cut to
#: its longest text): 2 tokens apart up to 32, then 4, then 8. Texts are cut
#: to the task's seq_length first, so boundaries past it are never reached.
#: SST-2's teacher batches: 3.9% padding against 20.5% with its config's
#: buckets. Not for the students: SST-2's distilled with them reached 80.05
#: dev accuracy against 82.68 with its config's wider buckets (batches of
#: near-equal lengths are less mixed). On SNIPS's short queries (7% padding
#: before) the job took the same time with them: intent and slots keep
#: their configs' buckets.
_LENGTH_BUCKETS = batch_padding.fine_boundaries(128)
#: Intent and slots: the student's transfer set holds about this many
#: queries, train's and their slot-substituted copies (`augment_copies`) ...
SLOT_TRANSFER_QUERIES = 12000
#: ... with at most this many copies of each query.
MOST_SLOT_COPIES = 12
#: Intent and slots: a query of an intent of n queries gets
#: round(copies * (mean n / n) ** this) copies (`intent_slot.augment`'s
#: `balance`): rare intents take a larger share of the transfer set
#: (`own_data_steps`'s `augment_balance` has the measurements).
SLOT_COPIES_BALANCE = 0.5
#: The copies distill_snips_small.gin makes, each slot value replaced at
#: probability 0.5 ...
_SLOT_COPIES_CONFIG = 2
#: ... and the probability when the job makes more.
_SLOT_COPIES_P = 0.8
#: The students' sequence length, as the job's trainer configs set it
#: (finetune_snips_small.gin, which distill_snips_small.gin includes, and
#: distill_glue_small.gin), unless `student_bindings` set another.
SEQ_LENGTHS = {"IntentSlotTask": 48, "TextClassificationTask": 128}
#: An intent-and-slot dataset of which the students' sequence cuts more than
#: `user_dataset.LONG_SHARE` of a split's queries (a slot tagger's
#: sentences, often) gets one that holds 99% of them, at most this long,
#: in both runs, unless a binding sets one: a word past it would be tagged
#: 'O' whatever it is. Batches are cut to their longest query, so short
#: queries cost what they did.
MAX_AUTO_SEQ_LENGTH = 128
PREDICTIONS_JSONL = "test_predictions.jsonl"
#: The unlabelled texts the student is least sure of (`export_steps`).
LABEL_NEXT_JSONL = "label_next.jsonl"
#: The step that writes the unlabelled texts of the transfer set.
UNLABELLED_STEP = "unlabelled"
#: The step that writes the out-of-scope texts that join train.
OUT_OF_SCOPE_STEP = "out_of_scope"
TFLITE_FILE = "model_dynamic.tflite"
#: The same model on token ids, LiteRT builtins only, with metadata
#: (MediaPipe Tasks, LiteRT.js, a stock LiteRT app: `builtin_model`).
BUILTIN_FILE = "model_builtin.tflite"
REPORT_MD = "report.md"
#: The report's plot of each run's validation score during training.
TRAINING_PNG = "training_curves.png"
#: Rows of the worst-labels and confused-pairs tables.
TABLE_ROWS = 10
#: Characters of a text shown in a report table.
TEXT_CELL = 80
#: The report's evaluation processes run this many at a time.
_EVALUATIONS_AT_ONCE = 4
#: A warm start whose train split has more than this share of examples
#: carrying a label (intent, slot tag) that the earlier run did not have
#: warm-starts only the teacher: the student is distilled from its
#: pretrained start with its whole budget, as without a warm start. On 715
#: SNIPS queries of five intents -> 1,999 of seven (28.3% of them of the
#: two new intents, nine slot tags new), two seeds, validation intent
#: accuracy / slot F1 of the .tflite: the warm student at half its budget
#: 97.85 / 85.75 in 0.64x the time of a job from the start (98.25 / 86.65),
#: at its whole budget 97.85 / 86.35; distilled from the start by the warm
#: teacher, 98.2 / 86.35 in 0.78-0.86x. With 2 of 72 slot tags new (under
#: 1% of 1,999 queries) the warm student at half its budget gained 0.9
#: slot F1. On SNIPS queries as a text-classification set (716 -> 2,000,
#: two labels new, two seeds) the rule kept the student level (98.3 and
#: 98.7 against 98.4 and 98.7 accuracy; both warm at half their budgets,
#: seed 0: 97.9) but saved no time (1.08-1.09x): a text classifier's cold
#: teacher stops early, and its student's budget is the same. Below the
#: line, at 8.0% (853 queries of six intents -> 1,883 of seven, 11 slot
#: tags new; two seeds), the warm student at half its budget held its
#: level (97.7 / 84.85 against 97.5 / 84.85 from the start, in 0.62-0.63x
#: the time; a student from the start there: 97.15 / 85.1 in 0.80x); at
#: 18.0% (the same 853 -> 2,113 of seven, 380 of the new intent) too: 97.8
#: / 86.0 against 98.1 / 86.0 from the start in 0.59-0.67x the time, where
#: a student from the start took 0.85-0.87x for 98.2 / 85.55 (two seeds;
#: no paired interval left 0 out). The line was 10% until then.
WARM_START_NEW_SHARE = 0.2
#: The share of the teacher's and the student's step budgets that a warm
#: start (`own_data_steps.warm_start`) runs. On 999 -> 1,999 SNIPS queries:
#: 0.5 gave validation slot F1 of teacher and student 92.4 / 87.7 against
#: 92.1 / 86.5 from the start, in 0.63x the job's time; 0.25 gave 91.2 /
#: 86.5 in 0.45x.
WARM_START_FRACTION = 0.5
#: Evaluations in a row without a better validation score that stop a text
#: classifier's distillation: more than half of its at most 15 (30 of the
#: longer budget of `MANY_LABELS`; its best checkpoint is kept). Measured
#: on students of 6,000 steps evaluated every 400: on
#: examples/text_classification (best at step 1,200) and 1,000 SST-2
#: sentences (best at 800) it stops at 4,400 and 4,000 with the same best;
#: on MRPC's pairs the best came at 4,000 after 4 evaluations without gain
#: (67.2 -> 71.8 validation accuracy), which a patience of 4 would have
#: lost.
STUDENT_PATIENCE = 8
#: Labels from which a text classifier's student below `transfer_examples`
#: gets `MANY_LABELS_STUDENT_STEPS` (else 6,000), evaluated twice as often
#: (every 400 steps, as on 6,000: the early stop's 8 evaluations are still
#: 3,200 steps). On 128 labels (8,886 queries) 12,000 steps gave 88.8
#: validation accuracy against 86.7 for 6,000, what a 6x192 student of
#: 6,000 steps reached (89.0), at 1.9 MB instead of 4.5; on 2 labels (MRPC's
#: pairs) and 7 (examples/text_classification) they did not gain
#: (FINDINGS_GLUE.md). The measured sets bracket the threshold; 50 is a
#: choice between them.
MANY_LABELS = 50
MANY_LABELS_STUDENT_STEPS = 12000


@gin.configurable(module="mixvocab_tf")
def own_data_steps(data_dir: str = gin.REQUIRED,
                   student: Optional[str] = None,
                   teacher: Optional[str] = None,
                   text_column: str = "text",
                   text_b_column: Optional[str] = None,
                   label_column: str = "label",
                   teacher_epochs: Optional[float] = None,
                   student_epochs: Optional[float] = None,
                   min_teacher_steps: Optional[int] = None,
                   min_student_steps: Optional[int] = None,
                   min_eval_steps: int = 100,
                   augment_copies: Optional[int] = None,
                   augment_balance: float = SLOT_COPIES_BALANCE,
                   transfer_examples: int = 40000,
                   teacher_bindings=(),
                   student_bindings=(),
                   teacher_precision: str = precision_lib.IF_NATIVE,
                   student_size: str = student_size_lib.DEFAULT_SIZE,
                   size_gap: float = student_size_lib.DEFAULT_GAP,
                   size_budget_minutes: Optional[float] = 90.0,
                   word_table_tolerance: float = (
                       export_steps.WORD_TABLE_TOLERANCE),
                   unlabelled: Optional[str] = None,
                   max_unlabelled: Optional[int] = unlabelled_lib.MOST,
                   slot_values: Optional[str] = None,
                   warm_start: Optional[str] = None,
                   warm_start_fraction: float = WARM_START_FRACTION,
                   out_of_scope: Union[str, Sequence[str], None] = None,
                   out_of_scope_count: Optional[int] = None):
  """The own-data job's pipeline steps, after checking the dataset.

  Args:
    data_dir: the dataset (see `user_dataset`'s data contract).
    student: a pretrained student's run directory (stage II, NoKD, ...);
      None: the package's pretrained student, or a new one if the package
      has none; 'pretrain': always a new one (stage I and stage II first).
    teacher: the pretrained BERT to fine-tune on the dataset and distil the
      student from: a Hugging Face BERT directory (`config.json`,
      `model.safetensors`, `vocab.txt`) or a google-research/bert one,
      uncased (`teacher_check.check_teacher`, when the job starts); None:
      the package's default teacher (all-MiniLM-L6-v2). It is fine-tuned
      with the default teacher's recipe (learning rate 1e-4, its heads at
      100x; `teacher_bindings` changes it). A student pretrained here
      (`student = 'pretrain'`) still learns from the default teacher.
    text_column, text_b_column, label_column: column names of a text
      classification dataset.
    teacher_epochs: most epochs of the teacher's fine-tuning (it stops
      earlier when validation stops improving); None: 3 for intent and
      slots (with its heads at 100x the encoder's learning rate: SNIPS
      valid slot F1 94.92-95.34 over seeds 0-2 against 94.84-94.89 for 6
      epochs at one rate, in half the steps; 2 epochs gave 94.29 and
      93.98 on seeds 0 and 1), 2 for text classification
      (its classifier at 100x too: SST-2 dev accuracy 90.37 against 89.56
      for 3 epochs at one rate and 88.65 for 2).
    student_epochs: epochs of the student's distillation (the best
      checkpoint is kept): an intent-and-slot student runs all of them, a
      text classifier's stops after `STUDENT_PATIENCE` evaluations without
      a better validation score (`student_bindings =
      ['Trainer.early_stopping_patience = None']` runs them all), both stop
      at a perfect one; None: 24 for intent and slots (SNIPS valid
      slot F1 of the package's student from one teacher, seeds 0-2: 93.80,
      93.00, 93.22 at 24 epochs, mean 93.34, against 93.30, 93.63, 93.45
      at 40, mean 93.46, in 0.6x the steps, and 93.27, 92.55 on seeds 0
      and 1 at 20; with the 9,000-step student it replaced, 20 epochs had
      left it at 91.4 against 93.1 for 40), 5 for text classification (its
      config's), 3 for a text-classification train split larger than
      `transfer_examples` (SST-2: 81.77 dev accuracy after 3 epochs as
      after 5.7).
    min_teacher_steps, min_student_steps: on a small train split the epoch
      budgets are raised to at least this many steps of 64 examples (600
      queries make 10 steps an epoch: 6 epochs left the teacher far below
      its student); None: 600 and 2,000 for intent and slots, 2,000 and
      6,000 for text classification, 12,000 for the student of
      `MANY_LABELS` labels or more (on 8,886 queries of 128 labels the
      teacher still gained after 1,000 steps, 91.0 -> 92.9 validation
      accuracy, and the student after 2,000, 74.7 -> 83.3, and after 6,000:
      86.7 -> 88.8; on 1,000 of
      those queries 1,500 student steps gave 65.1 against 68.0 for 6,000,
      the means of 3 seeds; on easy 7-intent sets of 600-5,000 queries
      1,500 steps did as well, for a third of the time); no student floor
      for a text-classification train split larger than
      `transfer_examples` (its epochs are long enough).
    min_eval_steps: evaluations (and early-stopping checks) come once an
      epoch, but no more often than every this many steps.
    augment_copies: edited copies of each training example that join the
      student's transfer set, labelled by the teacher. Text classification
      (`DistillTextClassificationTask.augment_copies`): None: enough to
      make about `transfer_examples` examples, at most 4 (0 for a train
      split of that size or more). Intent and slots
      (`DistillIntentSlotTask.augment_copies`, each slot value replaced by
      another of its type from train): None: enough to make about
      `SLOT_TRANSFER_QUERIES` queries, 2 to `MOST_SLOT_COPIES` (2 from
      4,001 queries on, the config's), with each value replaced at
      probability 0.8 instead of the config's 0.5 when more than 2, and
      `MOST_SLOT_COPIES` then with `slot_values`. On 999
      SNIPS queries (seeds 0 and 1), 12 copies at 0.8 raised the 6x96
      student's validation slot F1 from 79.0 to 82.4 (teacher 88.8), for
      8-19% more student CPU time; at 0.5, to 80.8 (intent accuracy 97.4
      against 96.7 at 0.8, 96.4 before); 24 copies or 4,000 steps added
      nothing at 0.8. On 3,001 queries (seed 0), 3 copies at 0.8: 86.3 ->
      89.0 (teacher 93.0). 2: the config's copies at 0.5 on any split.
    augment_balance: intent and slots: how many more copies a query of a
      rare intent gets (`SLOT_COPIES_BALANCE`; 0: `augment_copies` each).
      Set only where intents differ in size. On 1,000 SNIPS queries of
      intents from 40% down to 2.5% (seeds 0-2), 0.5 raised the student's
      validation intent accuracy / slot F1 by +0.1 / +0.2, +1.2 / +0.9 and
      +0.3 / +0.2 (the three rarest intents' slot F1 by 0.4-1.9), with
      fewer copies in all; 1.0, two seeds: -0.2 / +0.1, +0.3 / +0.7.
    transfer_examples: see augment_copies.
    teacher_bindings, student_bindings: extra gin bindings of those steps,
      e.g. `["TextClassificationTask.seq_length = 256"]` in both for texts
      longer than the student's 128 WordPieces, which the job warns of when
      it starts (`UserDataset.long_warning`). Intent and slots: when more
      than 1% of a split's queries are longer than 48, both runs read a
      length that holds 99% of them (`MAX_AUTO_SEQ_LENGTH` at most), unless
      either binds `IntentSlotTask.seq_length`.
    teacher_precision: the teacher's `Trainer.precision`. The default trains
      it in mixed bfloat16 where the CPU computes bfloat16 natively (AVX512
      BF16 or AMX with TensorFlow's oneDNN kernels: on SNIPS 0.71x the
      teacher's time, the same scores, docs/PERFORMANCE.md), else in float32
      (`core/precision.py`); 'float32' everywhere for the arithmetic of
      earlier versions. The student trains in float32 (bfloat16 did not
      speed up its small matmuls).
    student_size: '6x96', '6x192', '6x256' (a size the package ships a
      pretrained student of), or 'auto': distil the smallest shipped size,
      then the next one while the last is more than `size_gap` points below
      the teacher on validation and the next one's estimated time fits
      `size_budget_minutes` of distillation (`jobs.student_size`). With
      STUDENT given, the size is that run's.
    size_gap: see student_size (points of the validation score).
    size_budget_minutes: see student_size; None: no limit. The 6x192 is
      estimated at about 2x the 6x96's time (measured) over its whole step
      budget (a 6x96 its early stop ended counts as if it had run all of
      it), so 'auto' tries it on SST-2 (67K examples; 6x96 23 min for all
      its steps) within the default 90 minutes.
    word_table_tolerance: points of validation intent accuracy or slot F1
      (accuracy for classifiers) the .tflite files' 4-bit word table may
      cost the student (or one validation example's worth, if more) before
      the export keeps the table whole (8 bits a weight, half its bytes
      more; `export_steps.word_table_check`); a negative value always keeps
      it whole.
    unlabelled: a file of unlabelled texts of the task (one per line, or a
      CSV / TSV / JSONL text column: `datasets.unlabelled`), e.g. an app's
      logged queries: the student's transfer set adds each one, labelled by
      the teacher (soft labels only; `DistillIntentSlotTask.unlabelled`,
      `DistillTextClassificationTask.unlabelled`). Checked when the job
      starts. Texts the labelled dataset holds are left out, with a warning
      (`unlabelled.without_known`: a validation text's teacher answer would
      teach the student what it is scored on); the step `unlabelled` writes
      the others, the transfer set's. The student's step budget stays the
      same. The export answers them with the student's file and writes the
      `export_steps.LABEL_NEXT` it is least sure of, intent by intent
      (label by label) in turns, the first to label,
      as a split of the dataset's own format with its answers for labels
      (`export_steps.label_next`: `label_next.csv` with train's header,
      `.tsv`, `.jsonl` (in doccano's or Prodigy's form when train is),
      `.yml` as Rasa
      NLU data, a `label_next/` directory of seq.in, seq.out and label, or
      `label_next.json`, Label Studio tasks pre-annotated with the answers,
      for splits `mixvocab-split-data` wrote from a Label Studio export).
      None: none.
    max_unlabelled: the transfer set takes at most this many unlabelled
      texts, drawn at random with a fixed seed (`unlabelled.sample`); None:
      all. The teacher labels each one (about 250-370 a CPU second), and
      the student's budget reads 128K-384K examples in all, so more are
      mostly never read.
    slot_values: intent and slots: a directory of lists of slot values, one
      `<type>.txt` per slot type of train, one value per line, or a Rasa
      NLU file whose lookup tables are the lists (`datasets.slot_values`),
      e.g. an app's catalogue of artists or cities. The student's
      slot-substituted copies draw from them as well as from train's
      values (`DistillIntentSlotTask.slot_values`), at the
      same number of steps. Checked when the job starts. On 999
      SNIPS queries (seeds 0 and 1), lists of the slot values of the other
      12,085 train queries raised the 6x96 student's validation slot F1
      from 82.4 to 88.1 (teacher 89.1), and to 86.4 with every value of
      validation taken out of the lists; on 3,001 (seeds 0 and 1, 12
      copies; see augment_copies) from 88.1 to 91.4 (teacher 93.0), and
      to 90.2 without validation's values (seed 0). None: train's values
      only.
    warm_start: a finished run of this job on an earlier version of the
      dataset (its `--model_dir`, e.g. before the corrected answers of its
      `label_next` split joined train): the teacher starts from that run's
      teacher and the student from its student (the same student size and
      vocabulary), each head's rows copied by label name (a new intent or
      slot tag starts fresh: `FinetuneTask.warm_start`), and both run
      `warm_start_fraction` of their step budgets; where more than
      `WARM_START_NEW_SHARE` of train's examples carry a label new since
      that run, only the teacher starts from it, and the student is
      distilled from its pretrained start with its whole budget. Checked
      when the job
      starts: the run's data step, teacher and student finished, the same
      kind of task, `student` None or the run's, `student_size` the
      default. The report scores that run's shipped student .tflite on
      this dataset's splits beside this run's (`earlier_student`). None:
      from the pretrained models.
    warm_start_fraction: see warm_start (of the epochs and of the step
      floors both).
    out_of_scope: texts the app should not answer with one of its labels
      join train, labelled `out_of_scope.OUT_OF_SCOPE` (every word 'O'), for
      the teacher and the student both: 'builtin', sentences of the
      package's built-in corpus (prose: novels, speeches), as many as
      train's most frequent label has, 1,000 to 5,000; or a file of the app's
      own (requests it does not serve, from its logs; `unlabelled`'s
      formats): all of them; or a list of both, e.g. ['builtin',
      'refusals.txt']: their texts together. Texts the dataset holds are
      left out; the step `out_of_scope` writes the others. Validation and
      test stay the user's. The report says how the exported student answers 300
      held-out sentences of the corpus (`out_of_scope.off_topic`). On
      SNIPS (seed 0), 'builtin' (1,914 sentences) answered `out_of_scope`
      to 97.7% of those, 75.2% of SST-2 sentences and 93.0% of MNLI
      premises (another intent at 0.9 or more: 0.7%, 9.2%, 2.2%, against
      45-47% without), validation intent accuracy / slot F1 98.6 / 93.7
      against 98.4 / 92.8, for 1.16x the job's time; on 600 queries, 100
      sentences kept out 25-44% of the other sources', 1,000 86-92%
      (`out_of_scope.LEAST`; docs/FINDINGS_SNIPS.md). Requests of a SNIPS
      intent left out of training: 'builtin' kept out 4-40% of them, 100
      such requests in a file 91-99% of the others of their kind (and 1-12%
      of prose), both 94-97% and prose as 'builtin' does
      (`bench/unseen_intents.py`). Single texts only (not pairs). None:
      none.
    out_of_scope_count: 'builtin' takes this many sentences (at most
      5,000) instead of as many as train's most frequent label has.

  Raises:
    DataError: a file breaks the data contract; nothing has run.
  """
  if teacher_precision not in precision_lib.PRECISIONS:
    raise ValueError(
        f"own_data_steps.teacher_precision must be one of "
        f"{precision_lib.PRECISIONS}; received {teacher_precision!r}.")
  dataset = user_dataset.load_dataset(data_dir, text_column, text_b_column,
                                      label_column)
  for warning in (dataset.warning(), dataset.iob_warning(),
                  dataset.left_out_warning(),
                  dataset.few_examples_warning(), dataset.overlap_warning(),
                  dataset.spelling_warning(), dataset.joined_label_warning()):
    if warning:
      logging.warning("%s", warning)
  summary = dataset.summary()
  logging.info("Dataset %s: %s", data_dir, json.dumps(summary["examples"]))
  if dataset.slot_tagger:
    logging.info(
        "Train gives no query an intent: the model is a slot tagger (entity "
        "extraction), scored by slot F1; it answers every query the intent "
        "%r.", examples_lib.NO_INTENT)
  if unlabelled:
    unlabelled = os.path.abspath(unlabelled)
    if getattr(dataset.splits["train"], "texts_b", None) is not None:
      raise errors.data_error(
          unlabelled, None, "unlabelled texts were given for a dataset of "
          "text pairs", "UNLABELLED = None for pairs",
          "Unlabelled data serves tasks of one text.")
    found = transfer_texts(dataset, unlabelled, text_column, max_unlabelled)
    for warning in found["warnings"]:
      logging.warning("%s", warning)
    if not found["kept"]:
      raise errors.data_error(
          unlabelled, None, "every text of the file is a text of the "
          "labelled dataset", "texts the dataset does not hold",
          "Give texts the model has not been given labels for, e.g. an "
          "app's logged queries.")
    logging.info("Unlabelled texts for the student's transfer set: %d, "
                 "from %s.", len(found["used"]), unlabelled)
    # The transfer set's file, named by its texts: other texts (an edited
    # file) are another file, so a finished student is not resumed on them.
    unlabelled_texts = steps_lib.JobPath(found["name"])
  intent_slot = dataset.kind == examples_lib.INTENT_SLOT
  if out_of_scope:
    found_oos = out_of_scope_texts(dataset, out_of_scope, text_column,
                                   out_of_scope_count)
    for warning in found_oos["warnings"]:
      logging.warning("%s", warning)
    logging.info(
        "Out-of-scope texts join train as label '%s' for the teacher and "
        "the student: %d, from %s.", out_of_scope_lib.OUT_OF_SCOPE,
        len(found_oos["used"]), found_oos["source"])
    out_of_scope = found_oos["option"]
  if slot_values:
    slot_values = os.path.abspath(slot_values)
    if not intent_slot:
      raise errors.data_error(
          slot_values, None, "slot values were given for a text "
          "classification dataset", "SLOT_VALUES = None for it",
          "Lists of slot values serve intent-and-slot datasets.")
    if augment_copies == 0:
      raise ValueError(
          "own_data_steps.augment_copies = 0 makes no slot-substituted "
          "copies, which are what SLOT_VALUES feeds: give copies or no "
          "slot values.")
    logging.info("Slot values for the student's copies: %s.",
                 slot_values_summary(dataset, slot_values))
  elif intent_slot and (hint := lookup_tables_hint(dataset)):
    logging.info("%s", hint)
  data_dir = os.path.abspath(data_dir)
  examples = summary["examples"]["train"] + (
      len(found_oos["used"]) if out_of_scope else 0)
  def epochs(most, min_steps):
    return round(max(most, min_steps * _BATCH_SIZE / examples), 2)
  def step_count(epochs):  # The trainers' count (`*_train_steps`).
    return max(1, int(round(epochs * examples / _BATCH_SIZE)))
  def every(train_epochs, eval_epochs):
    # Steps between evaluations and checkpoints: about `eval_epochs`, spaced
    # so that the last one falls on the last step. Evaluations at every
    # `eval_epochs` fell one step before the end too (SST-2: steps 1,052,
    # 2,104 and, again at the end, 2,105; 12 s for its teacher).
    total = step_count(train_epochs)
    return -(-total // max(1, round(total / step_count(eval_epochs))))
  if min_teacher_steps is None:
    min_teacher_steps = 600 if intent_slot else 2000
  # A text-classification train split larger than the transfer set needs
  # no edited copies and no step floor: on SST-2 (67,349 sentences) a
  # student of 3 epochs (2,999 steps) reached the 81.77 dev accuracy of
  # 5.7 (the 6,000-step floor).
  large = not intent_slot and examples > transfer_examples
  many_labels = not intent_slot and len(dataset.labels) >= MANY_LABELS
  if min_student_steps is None:
    min_student_steps = (2000 if intent_slot else 0 if large else
                         MANY_LABELS_STUDENT_STEPS if many_labels else 6000)
  if augment_copies is None:
    augment_copies = (
        min(MOST_SLOT_COPIES, max(2, SLOT_TRANSFER_QUERIES // examples))
        if intent_slot else min(4, transfer_examples // examples))
    if slot_values and augment_copies > _SLOT_COPIES_CONFIG:
      # Lists of slot values give each copy more to draw: on 3,001 SNIPS
      # queries 12 copies reached 90.8 validation slot F1 against 89.8 for
      # the 3 copies without lists' (88.2 with no lists; seed 0), for 32%
      # more student CPU time (its teacher pass over 36,000 queries).
      augment_copies = MOST_SLOT_COPIES
  # A warm start runs a share of the budgets (`warm_start`): of the
  # teacher's always, of the student's unless many labels are new (below).
  share = warm_start_fraction if warm_start else 1.0
  warm_student = bool(warm_start)
  teacher_epochs = epochs(
      share * (teacher_epochs or (3.0 if intent_slot else 2.0)),
      share * min_teacher_steps)
  student_epochs = student_epochs or (24.0 if intent_slot else 3.0 if large
                                      else 5.0)
  eval_epochs = epochs(1.0, min_eval_steps)
  # Every step that reads the files gets the same column names: the check,
  # the export and report here, and in the trainers both the task and the
  # epoch budget (`text_classification_dataset`, which both read).
  columns = {"text_column": text_column, "text_b_column": text_b_column,
             "label_column": label_column}
  read = dict(data_dir=data_dir, **columns)
  check = dict(read)  # The check also gets the student's vocabulary below.
  steps = []
  # The next size the package ships, for the report to point to when the
  # package's student trails its teacher ('auto' tries it by itself).
  larger = None
  size = student_size_lib.check_size(student_size)
  auto = size == student_size_lib.AUTO
  if student not in (None, "pretrain") and not tf.io.gfile.exists(student):
    raise FileNotFoundError(
        f"STUDENT = {student!r} does not exist; give a pretrained student's "
        "run directory (stage II, NoKD), or None for the package's own.")
  base = None  # The default teacher.
  if teacher is not None:
    base = teacher_check.check_teacher(teacher, MAX_AUTO_SEQ_LENGTH)
    logging.info(
        "Teacher: %s, from %s: %.1fx the default teacher's arithmetic a "
        "token, so its fine-tuning and its answers for the student take about "
        "as much longer.", base.describe(), base.path, base.cost)
  if warm_start:
    warm = check_warm_start(warm_start, dataset, student, size,
                            warm_start_fraction, base)
    if warm["new_share"] > WARM_START_NEW_SHARE:
      # The student from its pretrained start, as without a warm start.
      warm_student, share = False, 1.0
    logging.info(
        "Warm start from %s: its teacher, %g of its step budget, and %s. "
        "Labels since then: %s%s.", warm["run"], warm_start_fraction,
        f"its student, {share:g} of its budget" if warm_student else
        "a student distilled from the start", warm["labels"] or "the same",
        "" if not warm["new_share"] else
        f" ({warm['new_share']:.1%} of train's examples carry one: "
        f"{'not ' if warm_student else ''}more than "
        f"{WARM_START_NEW_SHARE:.0%})")
  student_epochs = epochs(share * student_epochs, share * min_student_steps)
  # The distillation configs evaluate every 2 (intent and slots) or 1
  # (text classification) epochs.
  # Text classification: at most 15 evaluations (each one costs a pass over
  # validation), 30 of the longer budget of many labels.
  student_eval = epochs(
      2.0 if intent_slot else
      max(1.0, student_epochs / (30 if many_labels else 15)),
      2 * min_eval_steps)
  if auto and student is not None:
    raise ValueError(
        f"STUDENT_SIZE = 'auto' chooses among the package's pretrained "
        f"students; STUDENT = {student!r} fixes the student. Give one of "
        "the two.")
  if student == "pretrain" or (student is None and size in (
      student_size_lib.DEFAULT_SIZE, student_size_lib.AUTO) and
                               assets.pretrained_student_dir() is None):
    size = student_size_lib.DEFAULT_SIZE if auto else size
    steps += pretraining_steps(size)
    inits = {size: steps_lib.JobPath("stage2")}
  elif student is None:
    shipped = [s for s in student_size_lib.SIZES
               if assets.pretrained_student_dir(s)]
    if size == student_size_lib.DEFAULT_SIZE:
      larger = next((s for s in shipped if s != size), None)
    inits = {s: assets.pretrained_student_dir(s)
             for s in student_size_lib.sizes_to_try(size, shipped)}
    if auto:
      logging.info(
          "STUDENT_SIZE = 'auto': distils %s first, then each larger size "
          "while the last is more than %s points below the teacher (sizes "
          "with a pretrained student in the package: %s; not shipped: %s).",
          shipped[0], size_gap, ", ".join(shipped),
          ", ".join(s for s in student_size_lib.SIZES if s not in shipped)
          or "none")
  else:
    inits = {student_size_lib.size_of_run(student, size): student}
  if warm_start:
    # The run's student, whose architecture and vocabulary are its init's.
    inits, larger = {warm["size"]: warm["init"]}, None
  sizes = list(inits)
  vocabs = {s: None if isinstance(init, steps_lib.JobPath) else
            student_vocab(init) for s, init in inits.items()}
  vocab = vocabs[sizes[0]]
  if vocab:
    # Words are counted unreadable against the vocabulary the job distils
    # into (else the shipped student's).
    check["vocab"] = vocab
  data = {"DATASET": "files", "DATA_DIR": data_dir}
  if out_of_scope:
    # Set only when given, so that runs of earlier versions resume.
    data[("intent_slot_dataset" if intent_slot else
          "text_classification_dataset") + ".out_of_scope"] = (
              steps_lib.JobPath(found_oos["name"]))
  if intent_slot:
    task_class = "IntentSlotTask"
    teacher_gin, student_gin = "finetune_snips_small.gin", "distill_snips_small.gin"
    teacher = dict(data, **{
        "TEACHER": "default", "EPOCHS": teacher_epochs,
        "Trainer.early_stopping_patience": 2,
        "IntentSlotTask.dropout_rate": 0.1,
        "IntentSlotTask.bucket_boundaries": [9, 11, 13, 15, 18, 22],
        "optimization_config.learning_rate": 1e-4,
        # The heads start from random weights at a standard deviation of
        # 0.02 and Adam moves each weight about the learning rate a step:
        # at the encoder's 1e-4 they, not the encoder, set how many epochs
        # the teacher needs (SNIPS valid slot F1 after 204 steps 76.6 at
        # one rate, 90.8-92.3 with the heads at 100x).
        "Trainer.learning_rate_multipliers": {
            "intent_classifier|slot_classifier": 100.0}})
  else:
    task_class = "TextClassificationTask"
    teacher_gin, student_gin = ("finetune_glue_teacher_small.gin",
                                "distill_glue_small.gin")
    data.update({f"text_classification_dataset.{k}": v
                 for k, v in columns.items()})
    # Both classifiers read the mean of the token states: the default
    # teacher was trained to mean-pool (sentence embeddings), and on 128
    # labels the mean-pooled teacher reached 91.0 validation accuracy where
    # the [CLS]-pooled one reached 68.7 (its student 83.3 against 74.7).
    data["TextClassificationTask.pooling"] = "mean"
    # Its classifier too starts from random weights: at 100x the encoder's
    # rate the teacher of 2 epochs reached SST-2 dev accuracy 90.37 against
    # 89.56 for 3 epochs at one rate and 88.65 for 2 (seed 0).
    teacher = dict(data, **{
        "EPOCHS": teacher_epochs,
        "Trainer.learning_rate_multipliers": {"^classifier/": 100.0},
        "TextClassificationTask.bucket_boundaries": _LENGTH_BUCKETS})
  teacher[f"{task_class}.model_name"] = "teacher all-MiniLM-L6-v2"
  from_base = {}
  if base:
    # Set only when given, so that runs of earlier versions resume.
    teacher["TEACHER"] = base.path
    teacher[f"{task_class}.model_name"] = f"teacher {base.name}"
    from_base = {f"Distill{task_class}.teacher_base": base.path}
  if warm_start:
    teacher[f"{task_class}.warm_start"] = warm["teacher"]
  teacher["Trainer.evaluate_every"] = teacher["Trainer.checkpoint_every"] = (
      every(teacher_epochs, eval_epochs))
  # Adam updates only the rows of the teacher's 30,522 x 384 word table that
  # a batch used, not the whole table at every step (`lazy_adam.py`).
  teacher["Trainer.lazy_sparse_updates"] = True
  teacher["Trainer.precision"] = teacher_precision
  # Both runs stop once validation is perfect (their metrics' bound, 1.0):
  # no later checkpoint could replace that best one, so what the job
  # exports is the same, sooner (on easy data, e.g. templated queries).
  teacher["Trainer.best_metric_ceiling"] = 1.0
  student_every = every(student_epochs, student_eval)
  students = dict(data, **from_base, **{
      "TEACHER_RUN": steps_lib.JobPath("teacher"),
      "EPOCHS": student_epochs,
      "Trainer.evaluate_every": student_every,
      "Trainer.checkpoint_every": student_every,
      # An intent-and-slot student runs its whole budget (the best
      # checkpoint is kept): its validation score dips for several
      # evaluations mid-schedule and peaks as the learning rate decays. On
      # SNIPS (40 epochs then), patience 3 stopped the shipped student at
      # step 5,726 of 8,178 with slot F1 92.7 (best at 4,499); the whole
      # schedule reached 93.2 at step 6,953. A text classifier's stops after
      # `STUDENT_PATIENCE` of its at most 15 (or 30) evaluations without a
      # better score (on 128 labels the students of 6,000 steps peaked at steps
      # 5,200-5,600, patience 3 of evaluations every 200 steps stopped one
      # at 4,200 while it still gained). Both stop at a perfect validation
      # score (above).
      "Trainer.early_stopping_patience": (
          None if intent_slot else STUDENT_PATIENCE),
      "Trainer.best_metric_ceiling": 1.0})
  if warm_student:
    students[f"{task_class}.warm_start"] = warm["student"]
  if unlabelled:
    # Set only when given, so that runs of earlier versions resume.
    students[f"Distill{task_class}.unlabelled"] = unlabelled_texts
  if slot_values:
    students["DistillIntentSlotTask.slot_values"] = slot_values
  if not intent_slot and augment_copies:
    students["DistillTextClassificationTask.augment_copies"] = int(
        augment_copies)
    students["DistillTextClassificationTask.augment_p"] = 0.3
  if intent_slot and augment_copies != _SLOT_COPIES_CONFIG:
    # Set only when not the config's, so that large splits' runs of earlier
    # versions resume (a small split's finished student is refused on rerun,
    # the pipeline naming these settings).
    students["DistillIntentSlotTask.augment_copies"] = int(augment_copies)
    if augment_copies > _SLOT_COPIES_CONFIG:
      students["DistillIntentSlotTask.augment_p"] = _SLOT_COPIES_P
  if intent_slot and augment_copies:
    per_intent = intent_slot_augment.copies_per_intent(
        dataset.splits["train"].intents, augment_copies, augment_balance)
    if len(set(per_intent.values())) > 1:
      # Set only where it changes the copies (intents of unequal sizes), so
      # that runs of earlier versions on even intents resume.
      students["DistillIntentSlotTask.augment_balance"] = float(
          augment_balance)
      logging.info(
          "Rarer intents get more slot-substituted copies a query: %s "
          "(own_data_steps.augment_balance = %g; 0: %d each).", ", ".join(
              f"{intent} {n}" for intent, n in sorted(
                  per_intent.items(), key=lambda item: (-item[1], item[0]))),
          augment_balance, augment_copies)
  teacher.update(steps_lib.parse_binding(b) for b in teacher_bindings)
  length_key = f"{task_class}.seq_length"
  student_bound = dict(steps_lib.parse_binding(b) for b in student_bindings)
  seq_length = student_bound.get(length_key, SEQ_LENGTHS[task_class])
  # Read against the vocabulary of the student the job distils into.
  read_by_student = dataclasses.replace(dataset, vocab=vocab)
  if (intent_slot and length_key not in teacher and
      length_key not in student_bound):
    # Set only when queries are cut, so that runs of earlier versions on
    # short queries resume.
    fitted = read_by_student.fitting_seq_length(seq_length,
                                                MAX_AUTO_SEQ_LENGTH)
    if fitted and fitted > seq_length:
      logging.info(
          "More than %.0f%% of a split's queries are longer than %d "
          "WordPieces, and the words past them would be tagged 'O': both "
          "runs read %d (99%% of them, at most %d; bind '%s' to choose).",
          100 * user_dataset.LONG_SHARE, seq_length, fitted,
          MAX_AUTO_SEQ_LENGTH, length_key)
      teacher[length_key] = students[length_key] = seq_length = fitted
  long_warning = (read_by_student.long_warning(seq_length, task_class)
                  if isinstance(seq_length, int) else None)
  if long_warning:
    logging.warning("%s", long_warning)
  budget = None if size_budget_minutes is None else 60 * size_budget_minutes
  # Set only when not the default, so that runs of earlier versions resume.
  tolerance = ({} if word_table_tolerance == export_steps.WORD_TABLE_TOLERANCE
               else {"word_table_tolerance": float(word_table_tolerance)})
  # The splits' files, whose edits (a label corrected, an example added)
  # must not leave the steps that read them done: a rerun is refused until
  # those steps' directories are removed.
  inputs = steps_lib.files_fingerprint(dataset.files.files)
  # An edited list of slot values refuses the finished students on rerun,
  # as an edited split does.
  student_inputs = dict(inputs, **steps_lib.files_fingerprint(
      {"slot_values": slot_values})) if slot_values else inputs
  pretraining = steps
  steps = [steps_lib.Step("data", "own_data_check", config=check,
                          writes=(SUMMARY_JSON,), inputs=inputs)]
  if out_of_scope:
    steps.append(steps_lib.Step(
        OUT_OF_SCOPE_STEP, "own_data_out_of_scope", config=dict(
            read, out_of_scope=out_of_scope, **(
                {"count": int(out_of_scope_count)} if out_of_scope_count
                else {}),
            texts=steps_lib.JobPath(found_oos["name"])),
        reads=("data",), writes=(SUMMARY_JSON,), inputs=inputs))
  oos_reads = (OUT_OF_SCOPE_STEP,) if out_of_scope else ()
  steps += pretraining + [
      steps_lib.Step("teacher", "train", (teacher_gin,), teacher,
                     reads=("data",) + oos_reads, inputs=inputs)]
  if unlabelled:
    steps.append(steps_lib.Step(
        UNLABELLED_STEP, "own_data_unlabelled", config=dict(
            read, unlabelled=unlabelled, texts=unlabelled_texts,
            most=max_unlabelled),
        reads=("data",), writes=(SUMMARY_JSON,), inputs=inputs))
  for i, (size, init) in enumerate(inits.items()):
    name = student_size_lib.student_step_name(size, i == 0)
    export = student_size_lib.export_step_name(size, i == 0)
    config = dict(students, INIT_CHECKPOINT=init)
    config[f"{task_class}.model_name"] = (
        "student" if i == 0 else f"student {size}")
    if vocabs[size]:
      config[f"{task_class}.vocab"] = vocabs[size]
    config.update(steps_lib.parse_binding(b) for b in student_bindings)
    when = None
    if i:
      when = steps_lib.Condition(
          functools.partial(student_size_lib.should_try, tried=sizes[:i],
                            size=size, gap=size_gap, budget_seconds=budget),
          f"the {sizes[i - 1]} student is more than {size_gap} points below "
          f"its teacher on validation and {size} fits the time budget")
    reads = ("teacher",) + oos_reads + (
        (UNLABELLED_STEP,) if unlabelled else ()) + (
        (init.step,) if isinstance(init, steps_lib.JobPath) else ())
    suffix = "" if i == 0 else f"_{size}"
    predictions = PREDICTIONS_JSONL.replace(".jsonl", f"{suffix}.jsonl")
    # Set only when given, so that runs of earlier versions resume.
    # The export writes the texts to label next in the dataset's own format
    # (`export_steps.label_next_path`); the path recorded keeps the
    # extension of the version that wrote it.
    label_ext = (".yml" if dataset.files.format == rasa_files.FORMAT else
                 ".jsonl")
    to_label = {} if not unlabelled else dict(
        unlabelled=unlabelled_texts, label_next=steps_lib.JobPath(
            LABEL_NEXT_JSONL.replace(".jsonl", f"{suffix}{label_ext}")))
    steps += [
        steps_lib.Step(name, "train", (student_gin,), config, reads=reads,
                       when=when, inputs=student_inputs),
        steps_lib.Step(export, "export", config=dict(
            read, run=steps_lib.JobPath(name), quantizations=["dynamic"],
            file_prefix="model", **tolerance, **to_label,
            predictions=steps_lib.JobPath(predictions)),
                       reads=(name,), when=when,
                       writes=(SUMMARY_JSON, TFLITE_FILE, BUILTIN_FILE),
                       inputs=student_inputs)]
  size_steps = tuple(
      name for i, size in enumerate(sizes) if i
      for name in (student_size_lib.student_step_name(size, False),
                   student_size_lib.export_step_name(size, False)))
  return steps + [
      steps_lib.Step("report", "own_data_report", config=dict(
          read, sizes=sizes, size_gap=size_gap, size_budget=budget,
          larger=larger, **({"unlabelled": unlabelled} if unlabelled else {}),
          **({"teacher": base.path, "teacher_name": base.describe()}
             if base else {}),
          **({"slot_values": slot_values} if slot_values else {}),
          **({"out_of_scope": out_of_scope} if out_of_scope else {}),
          **({"warm_start": warm["run"], "warm_start_fraction":
              warm_start_fraction} if warm_start else {}),
          # Set only for a student distilled from the start, so that warm
          # runs of earlier versions resume.
          **({"warm_start_new_share": round(warm["new_share"], 4)}
             if warm_start and not warm_student else {})),
                     reads=("teacher", "student", "export") + size_steps + (
                         (UNLABELLED_STEP,) if unlabelled else ()),
                     writes=(SUMMARY_JSON,)),
  ]


def check_warm_start(run: str, dataset, student, size, fraction,
                     teacher: Optional[teacher_check.Teacher] = None) -> dict:
  """What a warm start reads from `run`, checked before anything trains.

  `teacher`: the job's (None: the default teacher), which must be the one
  the run's teacher was fine-tuned from: the warm start continues that
  teacher's weights.

  Returns:
    {'run', 'teacher', 'student': absolute paths; 'init': the pretrained
    student the run's student started from; 'size': its size}.

  Raises:
    ValueError, FileNotFoundError: `run` is not a finished run of this job
      for this kind of task, or other settings fix the student or the
      teacher.
  """
  run = os.path.abspath(run)
  hint = (f"WARM_START = {run!r} must be the --model_dir of a finished "
          "own-data job")
  if not 0.0 < fraction <= 1.0:
    raise ValueError(f"own_data_steps.warm_start_fraction must be in (0, 1]; "
                     f"received {fraction!r}.")
  if size != student_size_lib.DEFAULT_SIZE:
    raise ValueError(
        f"WARM_START = {run!r} starts from that run's student, of that run's "
        "size; STUDENT_SIZE keeps its default with it.")
  summary = os.path.join(run, "data", SUMMARY_JSON)
  if not tf.io.gfile.exists(summary):
    raise FileNotFoundError(f"{hint}: it has no data/{SUMMARY_JSON}.")
  found = run_files.read_json(summary)
  was_pair = bool(found.get("pair"))
  is_pair = getattr(dataset.splits["train"], "texts_b", None) is not None
  if found.get("kind") != dataset.kind or was_pair != is_pair:
    def kind(name, pair):
      return "sentence pairs" if pair else name.replace("_", " ")
    raise ValueError(
        f"WARM_START = {run!r} is a run of {kind(found.get('kind'), was_pair)}"
        f"; this dataset is {kind(dataset.kind, is_pair)}. A warm start "
        "needs a run of the same kind of task.")
  from mixvocab_tf.jobs import pipeline  # pylint: disable=g-import-not-at-top
  paths = {"run": run}
  for step in ("teacher", "student"):
    step_dir = os.path.join(run, step)
    try:
      warm_start_lib.run_checkpoint(step_dir)
    except FileNotFoundError as e:
      raise FileNotFoundError(f"{hint}: its {step} has no checkpoint ({e})."
                              ) from e
    if not tf.io.gfile.exists(os.path.join(step_dir, "best")):
      logging.warning("%s has no best/ checkpoint: the warm start reads its "
                      "latest one (did that run finish?).", step_dir)
    paths[step] = step_dir
  fine_tuned = (run_files.read_json_if_any(
      os.path.join(run, "teacher", pipeline.STEP_JSON)) or {}).get(
          "config", {}).get("TEACHER")
  fine_tuned = (steps_lib.recorded_value(fine_tuned, run) if fine_tuned
                else None)
  if fine_tuned == finetune_task.DEFAULT_TEACHER:
    fine_tuned = None
  if fine_tuned != (teacher.path if teacher else None):
    raise ValueError(
        f"WARM_START = {run!r} continues that run's teacher, fine-tuned from "
        f"{fine_tuned or 'the default teacher'}; this job's TEACHER is "
        f"{teacher.path if teacher else 'the default one'}. Give that "
        "TEACHER to continue it, or no WARM_START to fine-tune this one from "
        "the start.")
  recorded = run_files.read_json_if_any(
      os.path.join(run, "student", pipeline.STEP_JSON)) or {}
  init = recorded.get("config", {}).get("INIT_CHECKPOINT")
  init = steps_lib.recorded_value(init, run) if init else None
  if not init or not tf.io.gfile.exists(init):
    raise FileNotFoundError(
        f"{hint}: its student's pretrained start ({init!r}, in "
        f"student/{pipeline.STEP_JSON}) is not there any more; the warm "
        "start builds the student from it.")
  if student is not None and os.path.abspath(student) != os.path.abspath(
      init):
    raise ValueError(
        f"WARM_START = {run!r} starts from that run's student, which was "
        f"distilled from STUDENT = {init!r}; give that STUDENT or none.")
  paths["init"] = init
  paths["size"] = student_size_lib.size_of_run(init, size)
  larger = [name for name in (student_size_lib.student_step_name(s, False)
                              for s in student_size_lib.SIZES)
            if tf.io.gfile.exists(os.path.join(run, name, "DONE"))]
  if larger:
    logging.warning(
        "%s also distilled %s (STUDENT_SIZE = 'auto'); the warm start "
        "continues its first student, the %s.", run, ", ".join(larger),
        paths["size"])
  labels = _warm_start_labels(run, dataset)
  paths["labels"] = warm_start_lib.changes(labels)
  paths["new_share"] = new_label_share(dataset, labels)
  return paths


def new_label_share(dataset, labels) -> float:
  """The share of train's examples that carry a label (intent, slot tag)
  that a warm start's earlier run did not have (`labels`:
  `_warm_start_labels`)."""
  new = {what: set(now) - set(before)
         for what, (before, now) in labels.items()}
  train = dataset.splits["train"]
  if dataset.kind == examples_lib.INTENT_SLOT:
    hits = [intent in new["intents"] or
            any(tag in new["slot tags"] for tag in tags)
            for intent, tags in zip(train.intents, train.tags)]
  else:
    hits = [label in new["labels"] for label in train.labels]
  return sum(hits) / max(1, len(hits))


def _warm_start_labels(run, dataset):
  """{what: (the run's labels, the dataset's)}, read as the trainers read
  them to match each head's rows by name (`run_head_labels`).

  Raises:
    FileNotFoundError: a file of the run's labels is missing.
  """
  intent_slot = dataset.kind == examples_lib.INTENT_SLOT
  task = (intent_slot_task.IntentSlotTask if intent_slot else
          text_classification_task.TextClassificationTask)
  heads = {}
  for step in ("teacher", "student"):
    try:
      heads[step] = task.run_head_labels(os.path.join(run, step))
    except FileNotFoundError as e:
      name = (intent_slot_task.LABELS_FILE if intent_slot else
              text_classification_task.LABELS_FILE)
      raise FileNotFoundError(
          f"WARM_START = {run!r}: its {step} has no {name}, the label names "
          "of its heads" + ("" if intent_slot else
                            " (text-classification runs write it since "
                            "2026-12-06)") + ": give a run made since.") from e
  if intent_slot:
    return {"intents": (heads["teacher"]["intent_classifier"],
                        dataset.labels),
            "slot tags": (heads["teacher"]["slot_classifier"],
                          dataset.slot_tags)}
  return {"labels": (heads["teacher"]["classifier"], dataset.labels)}


def student_vocab(student_dir: str) -> Optional[str]:
  """The vocab.txt a student run was trained with (None: the shipped one).

  A packaged student keeps it beside its weights; a run of the trainer
  names it in its operative_config.gin (`StudentSpec.vocab`).
  """
  beside = os.path.join(student_dir, "student_vocab.txt")
  if tf.io.gfile.exists(beside):
    return run_files.absolute(beside)
  return gin_utils.run_binding(student_dir, "StudentSpec.vocab") or None


def pretraining_steps(size=student_size_lib.DEFAULT_SIZE):
  """Stage I and stage II of a student of `size` on the built-in corpus."""
  train = {"MlmInputs.input_files": steps_lib.JobPath("split/train.txt")}
  stage1, stage2 = dict(train), dict(
      train, STAGE1_DIR=steps_lib.JobPath("stage1"))
  if size != student_size_lib.DEFAULT_SIZE:
    # Stage I trains the up-projection from embeddings of the student's
    # width; stage II builds the student of that size.
    stage1["STUDENT_HIDDEN"] = student_size_lib.hidden_size(size)
    stage2["STUDENT_PRESET"] = student_size_lib.PRESETS[size]
  return [
      steps_lib.Step("split", "heldout_split"),
      steps_lib.Step("stage1", "train", ("stage1_small.gin",), stage1,
                     reads=("split",)),
      steps_lib.Step("stage2", "train", ("stage2_small.gin",), stage2,
                     reads=("split", "stage1")),
  ]


# -----------------------------------------------------------------------------
# Steps run in the pipeline's process.


def check_step(step_dir, output_dir, options):
  """Writes the dataset's summary (and its warnings) beside the job.

  Words the student cannot read (wholly [UNK]) are counted against the
  option `vocab`, the vocabulary of the student the job distils into
  (`student_vocab`), else the shipped student's; when a split holds many,
  their warning is logged here, once, before anything trains (the
  unseen-label warning is logged when the job starts).
  """
  del output_dir
  dataset = user_dataset.load_dataset(
      options["data_dir"], vocab=options.get("vocab"),
      **{k: options[k] for k in ("text_column", "text_b_column",
                                 "label_column") if k in options})
  unreadable = dataset.unreadable_warning()
  if unreadable:
    logging.warning("%s", unreadable)
  summary = dict(dataset.summary(), warning=dataset.warning(),
                 unreadable_warning=unreadable,
                 overlap_warning=dataset.overlap_warning(),
                 spellings=dataset.spellings(),
                 spelling_warning=dataset.spelling_warning(),
                 joined_labels=dataset.joined_labels(),
                 joined_label_warning=dataset.joined_label_warning())
  run_files.write_json(os.path.join(step_dir, SUMMARY_JSON), summary,
                       indent=1)


def lookup_tables_hint(dataset) -> Optional[str]:
  """How to use the lookup tables of a Rasa dataset's train file as slot
  values; None for other datasets, or a train file without tables."""
  if dataset.files.format != rasa_files.FORMAT:
    return None
  train = dataset.files.files["train"]
  tables = sorted(rasa_files.read_lookups(train))
  if not tables:
    return None
  return (f"{train} holds lookup tables ({', '.join(tables)}): the job "
          "reads them as lists of slot values for the student's copies with "
          f"--gin_bindings=\"SLOT_VALUES = '{train}'\".")


def slot_values_summary(dataset, path) -> str:
  """What the lists of slot values in `path` add to train's values, in a
  sentence.

  Raises:
    DataError: the lists break their contract (`slot_values.read_slot_values`:
      a list names a slot type train's tags lack, holds no value, ...).
  """
  tags = dataset.splits["train"].tags
  types = slot_values_lib.slot_types(tags)
  values = slot_values_lib.read_slot_values(path, types)
  count = sum(len(v) for v in values.values())
  missing = sorted(types - set(values))
  unused = slot_values_lib.unused_lookups(path, types)
  return (f"{count:,} value{'' if count == 1 else 's'} of "
          f"{errors.plural(len(values), 'slot type')} from {path}" +
          (f" (train's types without a list: {', '.join(missing)})"
           if missing else "") +
          (f" (lookup tables named after no slot type, left out: "
           f"{', '.join(unused)})" if unused else ""))


def transfer_texts(dataset, path, text_column="text",
                   most=unlabelled_lib.MOST):
  """The unlabelled texts of `path` that the student's transfer set takes.

  Those the dataset holds are left out (`unlabelled.without_known`); of the
  others, at most `most` (None: all), drawn at random with a fixed seed
  (`unlabelled.sample`).

  Returns:
    {'texts': how many the file holds, 'in_dataset': {split: left out},
     'kept': the texts the dataset does not hold, 'used': the transfer
     set's, 'name': its file's path in the job, 'warnings': what to say}.
  """
  texts = unlabelled_lib.read_unlabelled(path, text_column)
  kept, known = unlabelled_lib.without_known(texts, dataset.known_texts())
  used = unlabelled_lib.sample(kept, most)
  warnings = [unlabelled_lib.known_warning(path, len(texts), known),
              unlabelled_lib.sample_warning(len(kept), len(used))]
  return dict(
      texts=len(texts), in_dataset=known, kept=kept, used=used,
      name=f"{UNLABELLED_STEP}/texts{unlabelled_lib.cache_suffix(used)}.txt",
      warnings=[w for w in warnings if w])


def out_of_scope_sources(option) -> list:
  """`OUT_OF_SCOPE`'s sources, in order: `out_of_scope.BUILTIN` and files
  (absolute paths), from one of them or a list of them.

  Raises:
    ValueError: not a non-empty string or list of them, or one given twice.
  """
  sources = [option] if isinstance(option, str) else option
  if (not isinstance(sources, (list, tuple)) or not sources or
      not all(isinstance(s, str) and s for s in sources)):
    raise ValueError(
        "OUT_OF_SCOPE must be 'builtin', a file of texts or a list of them "
        f"(e.g. ['builtin', 'refusals.txt']); received {option!r}.")
  sources = [s if s == out_of_scope_lib.BUILTIN else os.path.abspath(s)
             for s in sources]
  if len(set(sources)) < len(sources):
    raise ValueError(f"OUT_OF_SCOPE names a source twice: {option!r}.")
  return sources


def out_of_scope_texts(dataset, option, text_column: str = "text",
                       count: Optional[int] = None) -> dict:
  """The out-of-scope texts that join train (`own_data_steps.out_of_scope`).

  Args:
    dataset: the user's dataset (`user_dataset.load_dataset`).
    option: `out_of_scope.BUILTIN`, a file of texts (`unlabelled`'s
      formats: one a line, or a CSV / TSV / JSONL text column), or a list
      of them: their texts in that order, each once.
    text_column: the text column of such a CSV, TSV or JSONL file.
    count: how many sentences `out_of_scope.BUILTIN` takes (default
      `out_of_scope.count_for` train's labels).

  Returns:
    {'option': `option`, files as absolute paths (one source: a string);
     'source': what to call it; 'used': the texts, those the dataset holds
     left out; 'name': their file's path in the job; 'warnings': what to
     say}.

  Raises:
    DataError: pairs of texts, or a slot tagger's data; a file that is
      empty, or sources that hold only texts of the dataset.
    ValueError: `option` is not a source or a list of them (each once), or
      `count` is out of range.
  """
  sources = out_of_scope_sources(option)
  where = " and ".join(sources)
  if getattr(dataset.splits["train"], "texts_b", None) is not None:
    raise errors.data_error(
        where, None, "out-of-scope texts were given for a dataset of text "
        "pairs", "OUT_OF_SCOPE = None for pairs",
        "An out-of-scope text has no second text to pair it with.")
  if getattr(dataset, "slot_tagger", False):
    raise errors.data_error(
        where, None, "out-of-scope texts were given for a slot tagger's "
        "dataset (train gives no query an intent)",
        "OUT_OF_SCOPE = None for a slot tagger",
        "Out-of-scope texts get an intent of their own; a slot tagger "
        "answers slots only.")
  texts, names = [], []
  for source in sources:
    if source == out_of_scope_lib.BUILTIN:
      train = dataset.splits["train"]
      labels = getattr(train, "intents", None) or train.labels
      if count is not None and not 1 <= count <= out_of_scope_lib.MOST:
        raise ValueError(
            f"own_data_steps.out_of_scope_count must be from 1 to "
            f"{out_of_scope_lib.MOST:,}; received {count!r}.")
      texts += out_of_scope_lib.builtin_texts(
          count or out_of_scope_lib.count_for(labels))
      names.append("sentences of the package's built-in corpus")
    else:
      texts += unlabelled_lib.read_unlabelled(source, text_column)
      names.append(source)
  texts = list(dict.fromkeys(texts))
  used, known = unlabelled_lib.without_known(texts, dataset.known_texts())
  if not used:
    raise errors.data_error(
        where, None, "no out-of-scope text the dataset does not hold"
        if texts else "no text", "texts the app should not answer with one "
        "of its labels, one a line", "Or OUT_OF_SCOPE = 'builtin' for "
        "sentences of the package's built-in corpus.")
  # The file is named by its texts: other texts (an edited file) are
  # another file, so a finished teacher is not resumed on them.
  digest = hashlib.sha256("\n".join(used).encode("utf-8")).hexdigest()[:8]
  left_out = sum(known.values())
  warning = None if not left_out else (
      f"{left_out:,} of the {len(texts):,} out-of-scope texts of {where} "
      "are texts of the labelled dataset (" + ", ".join(
          f"{count:,} in {split}" for split, count in known.items() if count)
      + "; compared lowercased, spaces collapsed) and are left out: the "
      "dataset gives them a label already, and a validation or test text "
      f"in train would be scored on what was taught. {len(used):,} join "
      "train.")
  return dict(option=sources[0] if len(sources) == 1 else sources,
              source=" and ".join(names), used=used,
              name=f"{OUT_OF_SCOPE_STEP}/texts_{digest}.txt",
              warnings=[warning] if warning else [])


def _write_step_texts(options, source_key, found):
  """Writes `found['used']` (texts read from the file `options[source_key]`
  when the job started), one a line, to the job's file `options['texts']`,
  which their digest names (`found['name']`).

  Raises:
    DataError: the file holds other texts than when the job started.
  """
  path = options["texts"]
  if not path.endswith("/" + found["name"]):
    source = options[source_key]
    raise errors.data_error(
        source if isinstance(source, str) else " and ".join(source), None,
        "other texts than when the job started",
        "the same texts", "Run the job again: it reads the file anew and "
        "names the steps that ran on the earlier texts.")
  with tf.io.gfile.GFile(path + ".tmp", "w") as f:
    f.write("".join(f"{text}\n" for text in found["used"]))
  tf.io.gfile.rename(path + ".tmp", path, overwrite=True)


def _step_dataset(options):
  """The user's dataset, read with the step's column names."""
  return user_dataset.load_dataset(
      options["data_dir"],
      **{k: options[k] for k in ("text_column", "text_b_column",
                                 "label_column") if k in options})


def out_of_scope_step(step_dir, output_dir, options):
  """Writes the out-of-scope texts that join train (`options['texts']`,
  `out_of_scope_texts` of `options['out_of_scope']`), one a line, and a
  summary of them.

  Raises:
    DataError: the file holds other texts than when the job started.
  """
  del output_dir
  found = out_of_scope_texts(_step_dataset(options), options["out_of_scope"],
                             options.get("text_column", "text"),
                             options.get("count"))
  _write_step_texts(options, "out_of_scope", found)
  run_files.write_json(os.path.join(step_dir, SUMMARY_JSON), dict(
      source=found["source"], texts=len(found["used"]),
      label=out_of_scope_lib.OUT_OF_SCOPE, warnings=found["warnings"]),
                       indent=1)


def unlabelled_step(step_dir, output_dir, options):
  """Writes the transfer set's unlabelled texts (`options['texts']`,
  `transfer_texts` of the user's file `options['unlabelled']`), one a line,
  and a summary of them.

  Raises:
    DataError: the file holds other texts than when the job started.
  """
  del output_dir
  found = transfer_texts(_step_dataset(options), options["unlabelled"],
                         options.get("text_column", "text"),
                         options.get("most", unlabelled_lib.MOST))
  _write_step_texts(options, "unlabelled", found)
  run_files.write_json(os.path.join(step_dir, SUMMARY_JSON), dict(
      file=options["unlabelled"], texts=found["texts"],
      kept=len(found["kept"]), used=len(found["used"]),
      in_dataset=found["in_dataset"], warnings=found["warnings"]), indent=1)


def _trainer_record(run_dir, split, examples):
  """The trainer's own evaluation of its best checkpoint, if it was `split`.

  The trainer evaluates every candidate on its validation split and keeps
  the best one's scores in `best/metrics.json`; the report reads them instead
  of evaluating that checkpoint again. None when that record names another
  split (or none: runs of older versions) or covered fewer than `examples`.
  """
  path = os.path.join(run_dir, evaluation.BEST_DIR, evaluation.METRICS_JSON)
  if not tf.io.gfile.exists(path):
    return None
  record = run_files.read_json(path)
  if (record.get("split") != split or
      record.get("metrics", {}).get("num_examples") != examples):
    return None
  return record


def answers_path(output_json):
  """Where `_evaluate_all`'s child process writes each example's answer."""
  return os.path.splitext(output_json)[0] + "_answers.jsonl"


def teacher_answers(output_dir, dataset, split):
  """The teacher's best checkpoint's answer to each example of `split`, or
  None.

  Those the trainer kept beside it on the validation split
  (`evaluation.ANSWERS_JSONL`), else those its evaluation on `split` for the
  report wrote (`answers_path` of `eval_<split>.json`). None for runs of
  versions that kept no answers, and for a split of another length.
  """
  examples = len(scoring.rows_and_gold(dataset.splits[split])[0])
  teacher = os.path.join(output_dir, "teacher")
  for path in (os.path.join(teacher, evaluation.BEST_DIR,
                            evaluation.ANSWERS_JSONL) if split == "validation"
               else None,
               answers_path(os.path.join(teacher, f"eval_{split}.json"))):
    answers = path and evaluation.read_answers(path, examples)
    if answers:
      return answers
  return None


def teacher_f1_by_label(output_dir, dataset, split):
  """The teacher's F1 of each label (and slot type) on `split`
  (`scoring.f1_by_label` of `teacher_answers`), or None."""
  answers = teacher_answers(output_dir, dataset, split)
  if answers is None:
    return None
  _, gold = scoring.rows_and_gold(dataset.splits[split])
  return scoring.f1_by_label(dataset.kind, answers, gold)


def teacher_f1_lines(what, intent_slot):
  """What the worst-labels tables' teacher column says, for a reader who
  must choose what to do next."""
  fixes = ("unlabelled texts (`UNLABELLED`), lists of slot values "
           "(`SLOT_VALUES`) or a larger student (`STUDENT_SIZE = 'auto'`)"
           if intent_slot else "unlabelled texts (`UNLABELLED`) or a larger "
           "student (`STUDENT_SIZE = 'auto'`)")
  kinds = f"{what}{' and slot types' if intent_slot else ''}"
  return (f"teacher F1: the teacher's on the same examples (its best "
          f"checkpoint). Where it is low too, train holds too few or unclear "
          f"examples of those {kinds}: label more of them. Where only the "
          f"student's is low, the student lacks what its teacher learnt: "
          f"{fixes} close such gaps.")


def _evaluate_all(requests):
  """Each request's best-checkpoint scores, evaluated side by side.

  A request is (run_dir, split, output_json, examples). The trainer's record
  answers it when it covers `split` (`_trainer_record`); an earlier report's
  `output_json` answers it next; the others start a child process each (the
  run's config rebuilds its model; each example's answer goes to
  `answers_path(output_json)`), at most `_EVALUATIONS_AT_ONCE` at a time:
  their time is mostly start-up (imports, building the model), one core each,
  so side by side they take about the longest one's time instead of the sum.

  Returns:
    The records, in the order of `requests`.

  Raises:
    subprocess.CalledProcessError: an evaluation failed (after all the
      started ones ended); its command and exit status say which.
  """
  records = [_trainer_record(run_dir, split, examples)
             for run_dir, split, _, examples in requests]
  commands = [
      ([sys.executable, "-m", "mixvocab_tf.cli.evaluate",
        f"--model_dir={run_dir}", "--checkpoint=best", f"--split={split}",
        f"--output_json={output_json}",
        f"--predictions={answers_path(output_json)}"])
      for (run_dir, split, output_json, _), record in zip(requests, records)
      if record is None and not tf.io.gfile.exists(output_json)]
  failed = None
  for start in range(0, len(commands), _EVALUATIONS_AT_ONCE):
    processes = [(c, subprocess.Popen(c, stdout=subprocess.DEVNULL))
                 for c in commands[start:start + _EVALUATIONS_AT_ONCE]]
    for command, process in processes:
      if process.wait() != 0 and failed is None:
        failed = subprocess.CalledProcessError(process.returncode, command)
  if failed is not None:
    raise failed
  return [record if record is not None else run_files.read_json(output_json)
          for (_, _, output_json, _), record in zip(requests, records)]


def training_lines(output_dir, runs):
  """The report's "Training" section: where each run kept its best checkpoint.

  Args:
    output_dir: the job's directory.
    runs: {run directory name: label}, e.g. {"teacher": "teacher"}.

  Returns:
    Markdown lines (none when no run has its records): a row per run with its
    best step, last step, step budget and whether it stopped early, a plot
    of each run's validation score at each evaluation (`TRAINING_PNG` in
    `output_dir`, when the runs kept their evaluation histories), and a note
    for each student that ran its whole budget although its best checkpoint
    came in the first third of it (a smaller budget may do as well, sooner).
  """
  from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
  rows, notes, curves = [], [], {}
  metrics, floors = set(), []
  for run, label in runs.items():
    best, final, stopped = (
        run_files.read_json(path) if run_files.is_file(path) else None
        for path in (
            os.path.join(output_dir, run, evaluation.BEST_DIR,
                         evaluation.METRICS_JSON),
            os.path.join(output_dir, run, evaluation.METRICS_JSON),
            os.path.join(output_dir, run, actions.EARLY_STOPPING_JSON)))
    if not best or not final or "step" not in best or "step" not in final:
      continue
    budget = stopped["train_steps"] if stopped else final["step"]
    if not stopped:
      why = "no"
    elif stopped.get("ceiling") is not None and (
        stopped.get("best_value", 0) >= stopped["ceiling"]):
      why = "yes: a perfect validation score"
    else:
      why = (f"yes: no better validation score in {stopped.get('patience')} "
             "evaluations")
    config = os.path.join(output_dir, run, trainer_lib.OPERATIVE_CONFIG)
    precision = (precision_lib.precision_of_run(run_files.read_text(config))
                 if run_files.is_file(config) else None)
    rows.append([label, f"{best['step']:,}", f"{final['step']:,}",
                 f"{budget:,}", why, precision or "not recorded"])
    # The score each run kept its best checkpoint by, against the share of
    # its step budget: a teacher's few hundred steps and a student's
    # thousands on one axis, and where in its budget each run peaked.
    metric = best.get("best_metric")
    history = [(step, values) for step, values in
               report.read_history(os.path.join(output_dir, run))
               if metric in values]
    if history and budget:
      metrics.add(metric)
      curves[f"{label} (best at step {best['step']:,})"] = [
          (100.0 * step / budget, values[metric]) for step, values in history]
      floors += [values["majority_accuracy"] for _, values in history
                 if metric == "accuracy" and "majority_accuracy" in values]
    if (label.startswith("student") and not stopped and
        3 * best["step"] <= budget):
      notes.append(
          f"The {label}'s best checkpoint came at step {best['step']:,} of "
          f"{budget:,}: the steps after it did not improve validation. On "
          "this data a smaller budget may do as well in less time: remove "
          f"`{os.path.join(output_dir, run)}` and rerun the job's command "
          "with smaller `own_data_steps.student_epochs` and "
          "`own_data_steps.min_student_steps` (the budget is the larger of "
          "the two; the teacher is kept, the export and this report are made "
          "again). Where the best came late, a shorter budget cost score: "
          "on 1,000 queries of 128 labels a quarter of the default budget "
          "lost 3 points of validation accuracy (3 seeds).")
  if not rows:
    return []
  lines = ["## Training", "", report.markdown_table(
      ["run", "best step", "last step", "budget (steps)", "stopped early",
       "precision"], rows), ""]
  if len(metrics) == 1:
    metric = metrics.pop()
    name = {"slot_f1": "slot F1", "accuracy": "accuracy"}.get(
        metric, metric.replace("_", " "))
    hlines = ({"floor: train's most frequent label": floors[-1]}
              if floors else None)
    png = report.plot_lines(
        curves, os.path.join(output_dir, TRAINING_PNG),
        "share of the run's step budget (%)", f"validation {name} (%)",
        f"Validation {name} at each evaluation", percent=True,
        hlines=hlines)
    if png:
      lines += [
          f"![validation {name} during training]({TRAINING_PNG})", "",
          f"Each run's validation {name}, the score it kept its best "
          "checkpoint by, at each evaluation; the x axis is the share of "
          "the run's step budget (the table's), so a run that stopped early "
          "ends before 100%." + (
              " The dashed line answers every example with train's most "
              "frequent label." if hlines else
              " A tagger that tags every word O scores 0." if
              metric == "slot_f1" else ""), ""]
  return lines + [f"- {note}" for note in notes] + ([""] if notes else [])


def _teacher_lead(output_dir, gap):
  """(points the student trails its teacher by on validation, the metric)
  when that is more than `gap`, else None (or without both records)."""
  teacher = student_size_lib.best_score(os.path.join(output_dir, "teacher"))
  student = student_size_lib.best_score(os.path.join(output_dir, "student"))
  if not teacher or not student or teacher[0] != student[0] or (
      teacher[1] - student[1] <= gap):
    return None
  return teacher[1] - student[1], student[0]


def student_misses(output_dir, dataset):
  """The validation examples the student answers wrong, split by its
  teacher's answers, from both runs' best checkpoints' answers
  (`teacher_answers`): {'student': how many the student misses,
  'teacher_right': how many of those its teacher answers right}, or None
  without the answers."""
  split = "validation"
  _, gold = scoring.rows_and_gold(dataset.splits[split])
  teacher = teacher_answers(output_dir, dataset, split)
  student = evaluation.read_answers(
      os.path.join(output_dir, "student", evaluation.BEST_DIR,
                   evaluation.ANSWERS_JSONL), len(gold))
  if teacher is None or student is None:
    return None
  student_right, teacher_right = (
      scoring.right_answers(dataset.kind, answers, gold)
      for answers in (student, teacher))
  missed = [i for i, right in enumerate(student_right) if not right]
  return {"student": len(missed),
          "teacher_right": sum(teacher_right[i] for i in missed)}


def miss_lines(misses, intent_slot, slot_tagger=False):
  """A note for the report on the validation examples the student answers
  wrong (`student_misses`): how many its teacher answers right (the
  student's own misses) and how many it misses too (the data's); [] without
  the answers or without a miss."""
  if not misses or not misses["student"]:
    return []
  missed, own = misses["student"], misses["teacher_right"]
  what = ("queries the student tags wrong (a word or more)" if slot_tagger
          else "queries the student answers wrong (the intent or a slot tag)"
          if intent_slot else "examples the student answers wrong")
  fixes = ("a larger student, unlabelled texts or slot values"
           if intent_slot else "a larger student or unlabelled texts")
  return [
      f"- Of the {missed:,} validation {what}, its teacher answers "
      f"{own:,} right ({own / missed:.0%}): the student's own misses, "
      f"which {fixes} address; it misses the other {missed - own:,} "
      "too, where the data is the likelier cause (too few examples of "
      "their kind in train, or unclear or wrong labels), which more or "
      "corrected labelled examples address. Both runs' best checkpoints, "
      "in Python.", ""]


def larger_student_lines(output_dir, larger, gap, metric_labels):
  """A note for the report when the student trails its teacher on
  validation by more than `gap` points and the package ships a `larger`
  student: how to distil that one too, and what it bought where measured."""
  lead = _teacher_lead(output_dir, gap)
  if not lead:
    return []
  return [
      f"- The student is {lead[0]:.1f} points below its "
      f"teacher (validation {metric_labels.get(lead[1], lead[1])}). "
      "A larger student may close part of that: rerun the job's command in "
      "this directory with `--gin_bindings=\"STUDENT_SIZE = 'auto'\"`. The "
      f"finished steps are kept; the {larger} student is distilled too "
      "(when its estimated time fits `own_data_steps.size_budget_minutes`) "
      f"and the export is the smallest size within {gap} points of the "
      "teacher, else the best one." + (
          " Where measured, the 6x192 gained 0.4-2.6 points over the 6x96 "
          "(SNIPS slot F1, 128 intent labels, SST-2) for about 2.4x the "
          "file, 2-3x the latency and 2-3x the distillation time."
          if larger == "6x192" else ""), ""]


def unlabelled_lines(output_dir, gap):
  """A note for the report when the student trails its teacher on
  validation by more than `gap` points and learnt from no unlabelled texts:
  how to add an app's logged texts, and what they bought where measured."""
  lead = _teacher_lead(output_dir, gap)
  if not lead:
    return []
  return [
      f"- Texts of the task that nobody labelled (an app's logs) may close "
      f"more of the {lead[0]:.1f} points: the teacher labels them for the "
      "student. Remove this directory's `student` folder and rerun the "
      "job's command with `--gin_bindings=\"UNLABELLED = 'logs.txt'\"` (one "
      "text a line); the data check and the teacher are kept. Where "
      "measured, for 15-40% more student CPU time: 999 labelled SNIPS "
      "queries and 11,850 unlabelled ones, slot F1 82.4 -> 87.4 (two "
      "seeds; teacher 88.8); 1,000 labelled SST-2 sentences and 65,987 "
      "unlabelled ones, accuracy 71.3 -> 79.0 (two seeds; teacher 81.7).",
      ""]


def slot_values_lines(output_dir, gap):
  """A note for the report of an intent-and-slot job without SLOT_VALUES
  when the student trails its teacher on validation by more than `gap`
  points: how to give lists of slot values, and what they bought where
  measured."""
  lead = _teacher_lead(output_dir, gap)
  if not lead:
    return []
  return [
      f"- Lists of slot values (your catalogue of artists, cities, dishes) "
      f"may close more of the {lead[0]:.1f} points: the student's "
      "slot-substituted copies of train's queries draw from them. Remove "
      "this directory's `student` folder and rerun the job's command with "
      "`--gin_bindings=\"SLOT_VALUES = 'lists'\"` (a directory of "
      "`<slot type>.txt` files, one value a line); the data check and the "
      "teacher are kept. Where measured, at the same step budget: 999 "
      "labelled SNIPS queries, lists of the slot values of 12,085 other "
      "queries, slot F1 82.4 -> 88.1, and 86.4 with no value "
      "of validation in the lists (two seeds; teacher 89.1).", ""]


def _read_by_export(dataset, summary):
  """`dataset` with its words read against the export's own vocabulary."""
  vocab = tf.io.gfile.glob(os.path.join(summary["saved_model_dir"], "assets",
                                        "*.txt"))
  return dataclasses.replace(dataset, vocab=vocab[0] if vocab else None)


def _long_warning(dataset, summary):
  """`UserDataset.long_warning` at the exported student's sequence length,
  its words read against the export's own vocabulary; None if nothing is cut
  (or the export predates the builtin file's record of its length)."""
  seq_length = (summary.get("builtin") or {}).get("seq_length")
  if not seq_length:
    return None
  return _read_by_export(dataset, summary).long_warning(
      seq_length, "IntentSlotTask" if dataset.kind == examples_lib.INTENT_SLOT
      else "TextClassificationTask")


def _sequence_length_line(dataset, summary):
  """The report's line on an intent-and-slot student that reads more than
  the default 48 WordPieces (`MAX_AUTO_SEQ_LENGTH`, or a binding): how many
  queries each length cuts; None at the default."""
  seq_length = (summary.get("builtin") or {}).get("seq_length")
  default = SEQ_LENGTHS["IntentSlotTask"]
  if (dataset.kind != examples_lib.INTENT_SLOT or not seq_length or
      seq_length <= default):
    return None
  dataset = _read_by_export(dataset, summary)
  at_default = dataset.long_examples(default)
  at_length = dataset.long_examples(seq_length)
  cut = "; ".join(
      f"{split} {at_default[split]['long']:,} of "
      f"{counts['examples']:,} at {default}, {counts['long']:,} at "
      f"{seq_length}" for split, counts in at_length.items())
  return (f"The student reads up to {seq_length} WordPieces a query "
          f"([CLS] and [SEP] included; {default} by default, which the job "
          "lengthens when more than 1% of a split's queries are longer, to "
          f"hold 99% of them, at most {MAX_AUTO_SEQ_LENGTH}). Queries cut at "
          f"each length (their words past it tagged 'O'): {cut}.")


def _word_table_lines(check, labels):
  """The Export section's line on the word table (`export_steps.
  word_table_check`): kept at 4 bits, or whole because 4 bits cost more than
  the tolerance."""
  if not check or "scores" not in check:
    return []
  float_scores, packed = check["scores"]["float"], check["scores"]["packed"]
  allowed = f"{check.get('allowed_points', check['tolerance_points']):.2g}"
  # The report's headline scores (a slot tagger's: slot F1 alone).
  names = [n for n in float_scores if n in labels] or list(float_scores)
  both = ", ".join(
      f"{labels.get(n, n)} {100 * float_scores[n]:.1f} whole, "
      f"{100 * packed[n]:.1f} at 4 bits" for n in names)
  if check["pack"]:
    return [f"- Word table at 4 bits a weight in both .tflite files "
            f"(validation {both}: within {allowed} points)"]
  return [f"- Word table whole (8 bits a weight) in both .tflite files: at 4 "
          f"bits (half its bytes) the model lost more than {allowed} points "
          f"(validation {both})"]


def warm_start_lines(options, earlier: bool) -> list:
  """The report's paragraph on a warm start (`options`: the report step's):
  what started from the earlier run, and how much of each budget ran."""
  return [
      ("Warm start: the teacher and the student started from those of "
       f"`{options['warm_start']}` and trained "
       f"{options['warm_start_fraction']:g} of their step budgets (labels "
       "new since then started from fresh weights)"
       if "warm_start_new_share" not in options else
       "Warm start: the teacher started from that of "
       f"`{options['warm_start']}` and trained "
       f"{options['warm_start_fraction']:g} of its step budget (labels new "
       "since then started from fresh weights); the student was distilled "
       "from its pretrained start with its whole budget, as without a warm "
       f"start, because {options['warm_start_new_share']:.1%} of train's "
       "examples carry a label new since then (more than "
       f"{WARM_START_NEW_SHARE:.0%})") + "; the scores above are "
      "this run's" + (", but for the earlier run's student .tflite: that "
                      "run's shipped file on this run's splits" if earlier
                      else "") + ".", ""]


def earlier_student(run, dataset, shipped, batch_size=None
                    ) -> Optional[dict]:
  """A warm start's earlier run's shipped student against this run's.

  That run's `export/model_dynamic.tflite`, the file its report shipped
  and an app may be running, scored on this dataset's validation and test
  splits (`export_steps.score_model`) as this run's own file is, and the
  two files' validation scores compared example by example
  (`scoring.paired_change`), so that the report says whether labelling
  more examples helped, and how surely. The earlier file answers with its
  own labels: one that this dataset no longer has counts as wrong unless
  it is the gold label, and a label new since then is one it cannot
  answer.

  Args:
    run: the earlier run (`WARM_START`).
    dataset: this run's dataset.
    shipped: this run's raw-string .tflite.
    batch_size: queries per call (None: the predictor's default).

  Returns:
    {'path', 'splits': {name: {'scores', ...}}, 'change': {metric:
    {'before', 'after', 'change', 'low', 'high'}} (validation)}, or None
    (logged) when the run's file is not there any more.
  """
  from mixvocab_tf.serving import predictor as predict_lib  # pylint: disable=g-import-not-at-top
  path = os.path.join(run, student_size_lib.export_step_name(
      student_size_lib.DEFAULT_SIZE, True), TFLITE_FILE)
  if not run_files.is_file(path):
    logging.warning("%s is not there any more: the report leaves out the "
                    "earlier run's student.", path)
    return None
  with run_files.local_copy(path, (predict_lib.TFLITE_LABELS_SUFFIX,)
                           ) as local:
    scored = export_steps.score_model(local, dataset, batch_size,
                                      timed=False, keep_answers=True)
  # This run's file was scored by its export step; only its answers are
  # needed here.
  rows, gold = scoring.rows_and_gold(dataset.splits["validation"])
  kwargs = {} if batch_size is None else {"batch_size": batch_size}
  with run_files.local_copy(shipped, (predict_lib.TFLITE_LABELS_SUFFIX,)
                           ) as local:
    now = scoring.predict_all(predict_lib.load_predictor(local, **kwargs),
                              rows)
  change = scoring.paired_change(
      dataset.kind, scored["splits"]["validation"].pop("answers"), now, gold,
      dataset.labels)
  for entry in scored["splits"].values():
    entry.pop("answers", None)
  return {"path": path, "splits": scored["splits"], "change": change}


def earlier_student_lines(earlier, metric_names) -> list:
  """The warm start's sentence on this run's student against the earlier
  run's (`earlier_student`): each validation score's change, and its 95%
  interval."""
  if earlier is None:
    return []
  return [
      f"- This run's student .tflite against the earlier run's "
      f"(`{earlier['path']}`), on this run's validation split: "
      f"{scoring.change_text(earlier['change'], metric_names)}: what this "
      "round of labelling (and its warm start) bought. The intervals are a "
      f"paired bootstrap over the examples ({scoring.RESAMPLES:,} resamples, "
      "the same examples for both files): one that holds 0 says the change "
      "may be chance. The "
      "earlier file cannot answer labels new since then, and where this "
      "validation split holds examples that the earlier run trained on, "
      "its score here is too high.", ""]


def floor_lines(floor: float, teacher: float, student: float,
                label: str, floor_name: str | None = None) -> list:
  """A note for the report when the exported student keeps less than half of
  its teacher's lead over the floor (validation; fractions in; `floor_name`:
  what the floor does, None: answering train's most frequent label)."""
  lead = teacher - floor
  if lead <= 0 or student - floor >= lead / 2:
    return []
  share = max(student - floor, 0) / lead
  floor_name = floor_name or ("every example answered with train's most "
                              "frequent label")
  return [
      f"- The exported student's validation {label} is "
      f"{100 * (student - floor):+.1f} points from the floor ({floor_name}, "
      f"{100 * floor:.1f}), where "
      f"its teacher is {100 * lead:+.1f}: it keeps {100 * share:.0f}% of what "
      "the teacher learned beyond the floor. On this data the student has "
      "learned little of the task; check its answers before you ship it.",
      ""]


def small_split_lines(examples: int, student: float, label: str) -> list:
  """A note for the report when validation is small enough that one example
  moves a score by `scoring.SMALL_SAMPLE_POINTS` or more: what one example
  is worth, and where the exported student's score (`student`, a fraction)
  may lie (`scoring.small_sample_note`)."""
  note = scoring.small_sample_note(examples, student, label,
                                   "the exported student")
  if not note:
    return []
  return ["- Validation holds " + note + " More validation examples make the "
          "scores, and the checkpoints chosen on them, firmer.", ""]


def deploy_lines(intent_slot: bool, pair: bool) -> list:
  """The report's paragraph on running the builtin file in an app."""
  contract = "docs/SERVING.md, \"Deploy\""
  return [
      "On a phone or in a browser: the builtin file " + (
          "runs in stock LiteRT, and in LiteRT.js once its inputs are "
          "fixed at [1, seq_length], with your own WordPiece tokenizer "
          "packing both texts (`[CLS] a [SEP] b [SEP]`, segment ids 1 on b "
          "and its `[SEP]`; MediaPipe Tasks' TextClassifier takes one text)"
          if pair else
          "runs in stock LiteRT, and in LiteRT.js once its inputs are "
          "fixed at [1, seq_length], with your own WordPiece tokenizer and "
          "tag decoding (MediaPipe Tasks has no intent-and-slot task)"
          if intent_slot else
          "loads in MediaPipe Tasks (TextClassifier), and in LiteRT.js once "
          "its inputs are fixed at [1, seq_length]") +
      "; try it in the browser with the page in the package's "
      "`examples/web` (its README: serve a folder holding the page and this "
      "file with `python3.11 -m http.server`, then open `examples/web/?" +
      ("intent_slot" if intent_slot else "classifier") +
      f"=<path of {BUILTIN_FILE}>`)." + (
          " On Android, the package's `examples/android` is the Java that "
          "tokenizes, packs" + (" and decodes" if intent_slot else "") +
          " beside LiteRT (its README shows the calls)."
          if intent_slot or pair else "") +
      f" The tokenization contract: {contract}.",
      ""]


def report_step(step_dir, output_dir, options):
  """Writes report.md from the runs, the export and the dataset."""
  from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
  dataset = export_steps.load_data(options)
  join = lambda *p: os.path.join(output_dir, *p)
  sizes = options.get("sizes") or [student_size_lib.DEFAULT_SIZE]
  size_rows, chosen, size_notes = student_size_lib.size_table(
      output_dir, sizes, options.get("size_gap", student_size_lib.DEFAULT_GAP),
      options.get("size_budget"))
  first = chosen == sizes[0]
  summary = run_files.read_json(join(
      student_size_lib.export_step_name(chosen, first), SUMMARY_JSON))
  # The shipped file's scores, sizes and latency (export_steps' summary).
  export = dict(summary["tflite"]["dynamic"],
                saved_model_dir=summary["saved_model_dir"],
                saved_model_bytes=summary["saved_model_bytes"],
                builtin=summary.get("builtin"))
  intent_slot = dataset.kind == examples_lib.INTENT_SLOT
  metric_names = scoring.headline_names(dataset.kind)
  # A slot tagger's one intent is right by construction: slots alone count.
  slot_tagger = intent_slot and dataset.slot_tagger
  if slot_tagger:
    metric_names = tuple(m for m in metric_names if m[0] == "slot_f1")
  test = dataset.splits.get("test")
  has_test = test is not None and (test.labels if not intent_slot
                                   else test.intents) is not None
  splits = [("validation", "valid" if intent_slot else "validation")]
  if has_test:
    splits.append(("test", "test"))
  counts = dataset.summary()["examples"]
  rows = []
  runs = {"teacher": "teacher"}
  for i, size in enumerate(sizes):
    run = student_size_lib.student_step_name(size, i == 0)
    if tf.io.gfile.exists(join(run, "DONE")):
      runs[run] = "student" if len(sizes) == 1 else f"student {size}"
  pairs = [(run, label, name, task_split) for run, label in runs.items()
           for name, task_split in splits]
  records = _evaluate_all([(join(run), task_split,
                            join(run, f"eval_{name}.json"), counts[name])
                           for run, _, name, task_split in pairs])
  for (_, label, name, _), record in zip(pairs, records):
    metrics = record["metrics"]
    rows.append([label, name, f"{record.get('parameters', 0) / 1e6:.2f}M"] +
                [f"{100 * metrics[m]:.1f}" for m, _ in metric_names])
  student = f"student {chosen}" if len(sizes) > 1 else "student"
  builtin_splits = (export.get("builtin") or {}).get("splits", {})
  for name, _ in splits:
    for label, entry in (
        (f"{student} .tflite (dynamic)", export["splits"].get(name, {})),
        (f"{student} builtin .tflite (phones, browsers)",
         builtin_splits.get(name, {}))):
      if "scores" in entry:
        rows.append([label, name, ""] + [
            f"{100 * entry['scores'][m]:.1f}" for m, _ in metric_names])
  earlier = (earlier_student(options["warm_start"], dataset, export["path"],
                             options.get("batch_size"))
             if options.get("warm_start") else None)
  for name, _ in splits:
    entry = (earlier or {}).get("splits", {}).get(name, {})
    if "scores" in entry:
      rows.append(["earlier run's student .tflite (WARM_START)", name, ""] +
                  [f"{100 * entry['scores'][m]:.1f}" for m, _ in metric_names])
  for name, _ in splits:
    floor = export["splits"][name]["scores"]["majority_accuracy"]
    rows.append(["floor: every word tagged O", name, "", "0.0"]
                if slot_tagger else
                ["floor: train's most frequent label", name, "",
                 f"{100 * floor:.1f}", ""])
  kind = ("slot tagging: no intents" if slot_tagger else
          dataset.kind.replace("_", " "))
  label_counts = ([] if slot_tagger else [
      f"{len(dataset.labels)} {'intents' if intent_slot else 'labels'}"]) + (
          [f"{len(dataset.slot_tags)} slot tags"] if intent_slot else [])
  lines = [
      "# Own-data report", "",
      f"Dataset `{dataset.files.data_dir}` ({kind}, "
      f"{dataset.files.format}): " + ", ".join(
          f"{n} {counts[n]}" for n in counts) + "; " +
      ", ".join(label_counts) +
      ". Labels come from train" + (
          f", and `{out_of_scope_lib.OUT_OF_SCOPE}` from the texts "
          "`OUT_OF_SCOPE` added to it (below)" if options.get("out_of_scope")
          else "") + ".", ""]
  for warning in (dataset.warning(), dataset.left_out_warning(),
                  dataset.overlap_warning(), dataset.spelling_warning(),
                  dataset.joined_label_warning()):
    if warning:
      lines += ["> " + warning.replace("\n", "\n> "), ""]
  long_warning = _long_warning(dataset, summary)
  if long_warning:
    lines += ["> " + long_warning, ""]
  length_line = _sequence_length_line(dataset, summary)
  if length_line:
    lines += [length_line, ""]
  transfer = ""
  if options.get("unlabelled"):
    texts = run_files.read_json(join(UNLABELLED_STEP, SUMMARY_JSON))
    left_out = sum(texts["in_dataset"].values())
    not_drawn = texts["kept"] - texts["used"]
    notes = ([f"{left_out:,} more, texts of the dataset, left out"]
             if left_out else []) + (
                 [f"{not_drawn:,} more not drawn (max_unlabelled)"]
                 if not_drawn else [])
    transfer = (f", also on the teacher's answers to {texts['used']:,} "
                f"unlabelled texts of `{texts['file']}`" + (
                    f" ({'; '.join(notes)})" if notes else ""))
  if options.get("slot_values"):
    transfer += (", the slot-substituted copies of train's queries drawing "
                 f"on the lists of slot values in `{options['slot_values']}`")
  teacher_source = (
      f"{options['teacher_name']} from `{options['teacher']}`"
      if options.get("teacher") else
      "the default teacher (all-MiniLM-L6-v2)")
  lines += [
      "## Scores", "",
      report.markdown_table(["model", "split", "parameters"] +
                            [label for _, label in metric_names], rows), "",
      f"Teacher: {teacher_source} fine-tuned on train "
      "until its validation score stopped improving; student: the "
      f"{' and '.join(sizes) if len(sizes) > 1 else sizes[0]} pretrained "
      f"student distilled from it across vocabularies{transfer}. The .tflite "
      "rows are the exported files run in the LiteRT interpreter (the "
      "builtin file on each example's token ids, as an app feeds it); the "
      + ("floor rows tag every word O (no slot found)." if slot_tagger else
         "floor rows answer every example with train's most frequent "
         f"{'intent' if intent_slot else 'label'}."), ""]
  if options.get("warm_start"):
    lines += warm_start_lines(options, earlier is not None)
    lines += earlier_student_lines(earlier, metric_names)
  teacher_record = next(record for (run, _, name, _), record in
                        zip(pairs, records)
                        if run == "teacher" and name == "validation")
  accuracy = metric_names[0][0]
  lines += floor_lines(
      0.0 if slot_tagger else
      export["splits"]["validation"]["scores"]["majority_accuracy"],
      teacher_record["metrics"][accuracy],
      export["splits"]["validation"]["scores"][accuracy], metric_names[0][1],
      "every word tagged O" if slot_tagger else None)
  if not slot_tagger:  # An interval of an accuracy, not of a slot F1.
    lines += small_split_lines(
        counts["validation"],
        export["splits"]["validation"]["scores"][accuracy],
        metric_names[0][1])
  gap = options.get("size_gap", student_size_lib.DEFAULT_GAP)
  misses = student_misses(output_dir, dataset)
  lines += miss_lines(misses, intent_slot, slot_tagger)
  if len(sizes) == 1 and options.get("larger"):
    lines += larger_student_lines(output_dir, options["larger"], gap,
                                  dict(metric_names))
  if not options.get("unlabelled"):
    lines += unlabelled_lines(output_dir, gap)
  if intent_slot and not options.get("slot_values"):
    lines += slot_values_lines(output_dir, gap)
  lines += training_lines(output_dir, runs)
  if len(sizes) > 1:
    # The metric each run kept its best checkpoint by, which 'auto' compares
    # (slot F1 for intents and slots).
    teacher_best = student_size_lib.best_score(join("teacher"))
    size_metric = dict(metric_names).get(
        teacher_best[0] if teacher_best else "", metric_names[0][1])
    lines += [
        "## Student sizes", "",
        f"STUDENT_SIZE = 'auto': each size's best validation "
        f"{size_metric}, its .tflite (dynamic-range) and p50 latency "
        "(one thread, LiteRT, tokenization included), and its distillation "
        f"time. The export is the smallest size within "
        f"{options.get('size_gap', student_size_lib.DEFAULT_GAP)} points of "
        "the teacher, else the best one; the other sizes' files stay in "
        "their `export_<size>` folders.", "",
        report.markdown_table(
            ["size", f"validation {size_metric}", ".tflite MB",
             "p50 ms", "distillation min", ""], size_rows), ""]
    lines += [f"- {note}" for note in size_notes] + [""]
  focus = "test" if has_test else "validation"
  entry = export["splits"].get(focus, {})
  if "per_label" in entry:
    teacher_f1 = teacher_f1_by_label(output_dir, dataset, focus)

    def f1_rows(rows, teacher):
      return [[r["label"], r["support"], f"{100 * r['precision']:.1f}",
               f"{100 * r['recall']:.1f}", f"{100 * r['f1']:.1f}"] + (
                   [] if teacher is None else
                   [f"{100 * teacher[r['label']]:.1f}"
                    if r["label"] in teacher else "-"])
              for r in rows[:TABLE_ROWS]]

    header = ["support", "precision", "recall", "F1"] + (
        [] if teacher_f1 is None else ["teacher F1"])
    worst = f1_rows(scored_labels(entry["per_label"]),
                    teacher_f1 and teacher_f1["per_label"])
    what = "intents" if intent_slot else "labels"
    if not slot_tagger:
      lines += [f"## Worst {what} by F1 ({focus}, .tflite)", ""]
      if teacher_f1 is not None:
        lines += [teacher_f1_lines(what, intent_slot), ""]
      lines += [report.markdown_table([what[:-1]] + header, worst), ""]
    slot_types = f1_rows(entry.get("per_slot_type", []),
                         teacher_f1 and teacher_f1.get("per_slot_type"))
    if slot_types:
      lines += [f"## Worst slot types by F1 ({focus}, .tflite)", "",
                "Each type's spans as slot F1 counts them; support: its "
                "spans in the gold tags.", "",
                report.markdown_table(["slot type"] + header, slot_types),
                ""]
    confused = [[c["gold"], c["predicted"], c["count"]]
                for c in entry["confused"][:TABLE_ROWS]]
    if confused:
      lines += [f"## Most confused pairs ({focus}, .tflite)", "",
                report.markdown_table(["gold", "predicted", "count"],
                                      confused), ""]
    lines += confident_error_lines(
        export["splits"], dataset, intent_slot,
        {name: teacher_answers(output_dir, dataset, name)
         for name in export["splits"] if name in dataset.splits})
    lines += label_next_lines(summary.get("label_next"), intent_slot,
                              output_dir)
    if entry.get("by_confidence") and not slot_tagger:
      what = "intent" if intent_slot else "label"
      lines += [f"## Answering only above a score ({focus}, .tflite)", "",
                f"An app can fall back (\"Sorry?\") when the {what}'s score "
                "is low: how many examples it would answer at each "
                "threshold, and how many of those answers are right. "
                "`mixvocab-evaluate --model` prints the same on new data.",
                ""] + scoring.threshold_table(
                    entry["by_confidence"], "accuracy",
                    ["answered", "accuracy of the answers"], 1) + [""]
    lines += slots_by_confidence_lines(entry.get("slots_by_confidence"),
                                       focus)
  off_topic = None
  if (intent_slot and not slot_tagger) or options.get("out_of_scope"):
    off_topic = off_topic_answers(export["path"], intent_slot,
                                  options.get("batch_size"))
    lines += off_topic_lines(off_topic, options.get("out_of_scope"),
                             export["splits"].get("validation", {}),
                             intent_slot, output_dir)
  lines += [
      "## Export", "",
      f"- SavedModel (raw strings in): `{export['saved_model_dir']}`, "
      f"{report.format_mb(export['saved_model_bytes'])}",
      f"- .tflite (dynamic-range): `{export['path']}`, "
      f"{report.format_mb(export['size_bytes'])}; p50 "
      f"{export['p50_ms']:.2f} ms, p90 {export['p90_ms']:.2f} ms per query "
      "(one thread, LiteRT, Python runner, tokenization included)"]
  builtin = export.get("builtin")
  if builtin:
    lines.append(
        f"- .tflite, builtin operators only, with metadata (MediaPipe Tasks, "
        f"LiteRT.js, a stock LiteRT app): `{builtin['path']}`, "
        f"{report.format_mb(builtin['bytes'])}; p50 {builtin['p50_ms']:.2f} "
        f"ms per query (one thread, LiteRT, the model on each query's token "
        + ("ids at its own length, at most " if builtin.get("dynamic") else
           "ids padded to ") + f"{builtin['seq_length']}; the app tokenizes)")
  lines += _word_table_lines(summary.get("word_table"), dict(metric_names))
  if "test" in export["splits"]:
    lines.append(f"- test predictions: `{export['splits']['test']['predictions']}`")
  pair = not intent_slot and getattr(dataset.splits["train"], "texts_b",
                                     None) is not None
  notes = (["one pair a line, a tab between its two texts"] if pair else
           []) + ([f"or `--model={builtin['path']}`: the predictor "
                   "tokenizes for the builtin file"] if builtin else [])
  lines += ["", "Predict with it: `mixvocab-predict --model="
            f"{export['path']} --input={'pairs' if pair else 'queries'}.txt "
            "--output=-`" + (f" ({'; '.join(notes)})" if notes else ""), "",
            "Score it on new labelled examples (a file or split in your "
            "dataset's format): `mixvocab-evaluate --model="
            f"{export['path']} --data=NEW`", ""]
  if builtin:
    lines += deploy_lines(intent_slot, pair)
  lines += step_times.section(output_dir)
  run_files.write_text(join(REPORT_MD), "\n".join(lines))
  run_files.write_json(os.path.join(step_dir, SUMMARY_JSON),
                       dict({"report": join(REPORT_MD), "rows": rows,
                             "misses": misses, "off_topic": off_topic},
                            **({"earlier": {
                                "path": earlier["path"],
                                "scores": {name: entry.get("scores") for
                                           name, entry in
                                           earlier["splits"].items()},
                                "change": earlier["change"]}}
                               if earlier else {})), indent=1)
  print("\n".join(lines))


def scored_labels(per_label: list) -> list:
  """The worst-labels table's rows of `per_label` (`metrics.
  per_label_scores`): without `out_of_scope` where the split has none of it,
  whose answers are misses of their gold labels (those labels' rows, and
  "Off-topic input"), not a label of F1 0 to head the table."""
  return [r for r in per_label
          if r["support"] or r["label"] != out_of_scope_lib.OUT_OF_SCOPE]


def off_topic_answers(model_path, intent_slot, batch_size=None) -> dict:
  """How the exported file answers text of another kind: the held-out
  sentences of the built-in corpus (`out_of_scope.held_out_texts`, prose no
  run trained on), as `out_of_scope.off_topic` counts them, with the three
  answered with another label most surely ('examples': [text, label,
  score])."""
  from mixvocab_tf.serving import predictor as predict_lib  # pylint: disable=g-import-not-at-top
  texts = out_of_scope_lib.held_out_texts()
  kwargs = {} if batch_size is None else {"batch_size": batch_size}
  with run_files.local_copy(model_path, (predict_lib.TFLITE_LABELS_SUFFIX,)
                           ) as local:
    records = scoring.predict_all(predict_lib.load_predictor(local, **kwargs),
                                  texts)
  key = "intent" if intent_slot else "label"
  answered = sorted((r for r in records
                     if r[key] != out_of_scope_lib.OUT_OF_SCOPE),
                    key=lambda r: -r["score"])
  return dict(out_of_scope_lib.off_topic(records, key), examples=[
      [r["text"], r[key], round(r["score"], 3)] for r in answered[:3]])


def off_topic_lines(off_topic, option, validation, intent_slot,
                    output_dir) -> list:
  """The report's section on input of another kind (`off_topic_answers`):
  with `OUT_OF_SCOPE` (`option`), how much of it the student keeps out and
  how many validation examples it turned away; without, how much of it gets
  one of the app's labels, and how to add the label."""
  what = "intent" if intent_slot else "label"
  n = off_topic["texts"]
  share = lambda count: f"{100 * count / max(1, n):.1f}%"
  lines = ["## Off-topic input (.tflite)", ""]
  examples = "; ".join(f"\"{_cell(text, 60)}\" -> {label} ({score:.2f})"
                       for text, label, score in off_topic["examples"])
  prose = (f"Of {n} sentences of prose held out of the package's built-in "
           "corpus (novels, speeches: none a request to an app, none "
           "trained on)")
  confident = (f"another {what} at a score of "
               f"{out_of_scope_lib.CONFIDENT} or more")
  if option:
    oos = out_of_scope_lib.OUT_OF_SCOPE
    added = run_files.read_json(os.path.join(
        output_dir, OUT_OF_SCOPE_STEP, SUMMARY_JSON))
    rejected = sum(c["count"] for c in validation.get("confused", [])
                   if c["predicted"] == oos and c["gold"] != oos)
    lines += [
        f"Train held {added['texts']:,} out-of-scope texts labelled "
        f"`{oos}` (`OUT_OF_SCOPE`: {added['source']}). {prose}, "
        f"the student answers `{oos}` to {share(off_topic['out_of_scope'])} "
        f"and gives {confident} to {share(off_topic['confident'])}"
        + (f" (most surely: {examples})" if examples else "") + ". "
        f"It answered `{oos}` to {rejected:,} validation examples of another "
        f"{what} (counted wrong above). " + _out_of_scope_advice(
            option, rejected), ""]
  else:
    lines += [
        f"{prose}, the student gives {confident} to "
        f"{share(off_topic['confident'])}"
        + (f" (most surely: {examples})" if examples else "") + ". "
        f"A softmax over the app's {what}s has no \"none of these\", and a "
        "score threshold does not keep such input out. If the app will hear "
        f"input outside its {what}s, give it a label of its own: rerun the "
        "job's command in a new `--model_dir` with "
        "`--gin_bindings=\"OUT_OF_SCOPE = 'builtin'\"` (sentences of that "
        "corpus join train as `out_of_scope`), a file of the requests the "
        "app does not serve, one a line, or both: `['builtin', "
        "'refusals.txt']`. Where measured, SNIPS with 1,914 such sentences "
        "gave another intent at 0.9 or more to 2-9% of sentences from other "
        "sources, against 46% without.", ""]
  return lines


def _out_of_scope_advice(option, rejected: int = 0) -> str:
  """What the report's off-topic section says to change in `OUT_OF_SCOPE`
  (`option`), where `rejected` validation examples were answered
  `out_of_scope`, from `bench/unseen_intents.py`'s measurement
  (docs/FINDINGS_SNIPS.md)."""
  sources = [option] if isinstance(option, str) else list(option)
  fewer = "" if not rejected or out_of_scope_lib.BUILTIN not in sources else (
      " Fewer built-in sentences turn fewer examples away and keep out less "
      "(`own_data_steps.out_of_scope_count`; where measured, on 427 queries "
      "1,000 sentences turned 6 of 103 away and kept out 99% of prose, 400 "
      "turned 2 away and kept out 95%, 200 none and 90%).")
  return _source_advice(sources) + fewer


def _source_advice(sources) -> str:
  """Which source to add to `OUT_OF_SCOPE`'s `sources`."""
  if out_of_scope_lib.BUILTIN not in sources:
    return ("Requests of the file's kinds are kept out, prose little "
            "(where measured, 100 requests of one SNIPS intent kept out "
            "91-99% of its other requests and 1-12% of the corpus's "
            "sentences): `OUT_OF_SCOPE = ['builtin', ...]` adds the "
            "built-in sentences to the file's.")
  if len(sources) == 1:
    return ("Prose is far from the requests an app does not serve (\"set "
            "an alarm\" to a music app): where measured, 'builtin' kept out "
            "4-40% of requests of a SNIPS intent the model did not know. "
            "Put such requests from its logs in a file, one a line, and give "
            "both: `OUT_OF_SCOPE = ['builtin', 'refusals.txt']`.")
  return ("Requests of kinds the file does not hold are kept out less "
          "(where measured, 2-50% of a SNIPS intent's requests that neither "
          "source held): add the kinds the app's logs show.")


def _cell(text, limit=TEXT_CELL):
  """`text` as one Markdown table cell: one line, '|' escaped, cut."""
  return scoring.short_text(str(text), limit).replace("|", "\\|")


def slots_by_confidence_lines(rows, focus):
  """The report's slots answered above each score (`scoring.
  slots_by_confidence`): what an app that confirms unsure slot values
  would take as it is, and how often it would be right."""
  if not rows or not rows[0]["answered"]:
    return []
  return [f"## Taking slot values only above a score ({focus}, .tflite)", "",
          "Each slot the model answers has a score (its least sure word's "
          "tag probability; `mixvocab-predict` gives it, and Rasa's "
          "`confidence_entity`). An app can confirm a value (\"Did you mean "
          "...?\") below a threshold: how many answered slots it would take "
          "as they are at each one, and how many of those are right (the "
          "same span and type as the gold tags).", "",
          *scoring.threshold_table(
              rows, "precision", ["slots taken", "precision of those"], 1),
          ""]


def confident_error_lines(splits, dataset, intent_slot, teacher=None):
  """The report's table of the validation and test examples answered wrong
  with the highest scores (`scoring.confident_errors`), whose labels a user
  checks first; [] when there are none.

  Args:
    splits: the export summary's scored splits (name -> entry).
    dataset: the `user_dataset.UserDataset` they were read from.
    intent_slot: whether the labels are intents.
    teacher: {split name: the teacher's answers (`teacher_answers`) or
      None}: a column of the teacher's answer to each listed example, where
      every listed split has them.
  """
  from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
  wrong = []
  for name, entry in splits.items():
    path = getattr(dataset.splits.get(name), "path", name)
    for error in entry.get("confident_errors") or []:
      where = os.path.basename(path.rstrip("/"))
      if tf.io.gfile.isdir(path):  # A Goo split: its lines are seq.in's.
        where += "/seq.in"
      if error["line"] is not None:
        where += f":{error['line']}"
      wrong.append((error["score"], where, dict(error, split=name)))
  if not wrong:
    return []
  wrong.sort(key=lambda item: -item[0])
  what = "intent" if intent_slot else "label"
  listed = wrong[:TABLE_ROWS]
  teacher = teacher or {}
  with_teacher = all(teacher.get(name) for name in
                     {e["split"] for _, _, e in listed})
  rows = [[where, _cell(e["text"]), _cell(e["gold"], 40),
           _cell(e["predicted"], 40), f"{score:.3f}"] + (
               [_cell(teacher[e["split"]][e["index"]][what], 40)]
               if with_teacher else [])
          for score, where, e in listed]
  teacher_wrong = sum(teacher[e["split"]][e["index"]][what] != e["gold"]
                      for _, _, e in listed) if with_teacher else 0
  return [
      "## Wrong answers given with the highest scores (.tflite)", "",
      f"The validation and test examples whose {what} the exported student "
      "gets wrong with the most confidence, most confident first (file and "
      f"line). A confident miss is often a wrong or ambiguous {what} in the "
      "data rather than a model error: check these first, and where one is "
      "mislabelled, look for its like in train." + (
          f" The teacher's answer beside: where the teacher misses too "
          f"({teacher_wrong} of {len(listed)} here), the data is the likelier "
          f"cause (a wrong or ambiguous gold {what}, or too few examples of "
          "it in train); where it answers right, the miss is the student's "
          "own (distillation's gap)." if with_teacher else ""),
      "",
      report.markdown_table(["where", "text", f"gold {what}", "answer",
                             "score"] + (["teacher's answer"] if with_teacher
                                         else []), rows), ""]


def _label_next_how(entry, intent_slot):
  """How the texts to label next join train, by the format they were
  written in (`export_steps.label_next`; a run of an earlier version
  wrote JSONL or Rasa data, and recorded no format)."""
  path = entry["path"]
  data_format = entry.get("format") or (
      rasa_files.FORMAT if rasa_files.is_rasa(path) else "jsonl")
  tagger = _tagger_entry(entry)
  answer = ("slot tags" if tagger else "intent and slot tags" if intent_slot
            else "label")
  spans = ("spans" if tagger else "intent and {}" if intent_slot else
           "label")
  if data_format == rasa_files.FORMAT:
    return ("Rasa NLU data with the student's answers as the intents and "
            "entities, grouped by intent (least sure first in each; each "
            "example's score as its metadata): correct the wrong ones and "
            "add them to train.yml.")
  if data_format in ("csv", "tsv"):
    return (f"a {data_format.upper()} file with train's header and the "
            f"student's answer as each row's {answer}: correct the wrong "
            f"ones and append the rows, without the header, to "
            f"train.{data_format}.")
  if data_format == "goo":
    return ("a split directory of the dataset's layout (seq.in, seq.out, "
            f"label) with the student's answers as the {answer}: correct "
            "the wrong ones and append each file's lines to the same file "
            "of train/ (the same lines of all three; a slot tagger's has no "
            "label).")
  if data_format == intent_slot_files.CONLL:
    return ("a CoNLL file with the student's answers as the slot tags "
            "('word tag' lines, a blank line after each sentence): correct "
            "the wrong ones and append the file to train.conll.")
  if data_format == label_studio.FORMAT:
    return ("Label Studio tasks (a JSON list) with the student's answers as "
            "their predictions, under the names of the project the dataset "
            "was split from: import the file into that project (each task "
            "arrives pre-annotated, least sure first), correct the answers "
            "there, export the project as JSON and split it again with "
            "mixvocab-split-data (a new --output_dir; WARM_START from this "
            "run).")
  if data_format == export_steps.PRODIGY:
    recipe = ("ner.manual" if tagger or intent_slot else "textcat.manual")
    return ("each line a Prodigy task, as train's lines were exported, with "
            f"the student's answer as its {spans.format('spans')} (its score "
            "under meta): stream the file into the Prodigy recipe you "
            f"labelled train with (e.g. {recipe}, which shows the answers "
            "to correct), export the accepted annotations with db-out and "
            "add the lines to train.jsonl (lines answered reject or ignore "
            "are left out; the score and top-k keys are not read).")
  if data_format == export_steps.DOCCANO:
    return ("each line in doccano's JSONL form, as train's, with the "
            f"student's answer as its {spans.format('entities')}: import "
            "the file into the doccano project (the answers become its "
            "annotations), correct the wrong ones there, export them and "
            "add the lines to train.jsonl (the score and top-k keys are "
            "not read).")
  return ("each line in the JSONL form of a train split with the student's "
          f"answer as its {spans.format('spans')}: "
          "correct the wrong ones and add the lines to train.jsonl (the "
          "score and top-k keys are not read).")


def _tagger_entry(entry):
  """Whether `export_steps.label_next`'s summary is a slot tagger's."""
  least_sure = entry.get("least_sure") or [{}]
  return export_steps.is_slot_tagger_record(least_sure[0])


def label_next_lines(entry, intent_slot, output_dir):
  """The report's section on the unlabelled texts the student is least
  sure of (`export_steps.label_next`); [] without unlabelled texts."""
  from mixvocab_tf.jobs import report  # pylint: disable=g-import-not-at-top
  if not entry or not entry.get("least_sure"):
    return []
  tagger = _tagger_entry(entry)
  what = "intent" if intent_slot else "label"
  header = ["text", f"student's {what}", "score"]
  rows = [[_cell(r.get("text", "")), _cell(r[what], 40), f"{r['score']:.3f}"]
          for r in entry["least_sure"]]
  if intent_slot:  # The slots to check with the intent, each its score.
    header.insert(2, "student's slots (score)")
    for row, r in zip(rows, entry["least_sure"]):
      row.insert(2, _cell("; ".join(
          f"{slot['type']}: {slot['text']}" +
          (f" ({slot['score']:.2f})" if "score" in slot else "")
          for slot in r.get("slots", ())) or "none", 80))
  if tagger:  # No intent: the least sure word's score ranks them.
    header = ["text", header[2], "least sure word's score"]
    rows = [[row[0], row[2], row[3]] for row in rows]
    chosen = ("the ones with the word whose tag the exported student is "
              "least sure of, the first to label if you label more "
              "(uncertainty sampling: they are the likeliest to be tagged "
              "wrong), least sure first. The ")
  else:
    chosen = (
        f"the ones whose {what} the exported student is least sure of, the "
        "first to label if you label more (uncertainty sampling: they are "
        f"the likeliest to be answered wrong), taken {what} by {what} in "
        f"turns, so that each {what} it answers has its least sure texts in "
        f"the list and any first part of the list is spread over the "
        f"{what}s. The ")
  return [
      "## Unlabelled texts to label next (.tflite)", "",
      f"Of the {entry['texts']:,} unlabelled texts, " + chosen +
      f"{entry['written']:,} of them, in that order, with the student's "
      f"answers: `{entry['path']}"
      f"{'/' if entry.get('format') == 'goo' else ''}`, " +
      _label_next_how(entry, intent_slot), "",
      "Then train on the larger set into another `--model_dir`, starting "
      "from this run: `--gin_bindings=\"WARM_START = "
      f"'{os.path.abspath(output_dir)}'\"` (its teacher and student start "
      "from this run's and train half their step budgets; a new label "
      "starts fresh, and where more than "
      f"{WARM_START_NEW_SHARE:.0%} of train's examples carry one, the "
      "student is distilled from its pretrained start).", "",
      report.markdown_table(header, rows), ""]


def step_functions():
  return {"own_data_check": check_step, "own_data_unlabelled": unlabelled_step,
          "own_data_out_of_scope": out_of_scope_step,
          "own_data_report": report_step}
