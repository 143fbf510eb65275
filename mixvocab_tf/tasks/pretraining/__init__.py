"""Pretraining tasks (Zhao et al., EACL 2021, Section 3).

`stage1` (mixed-vocabulary teacher MLM, Eq. 1), `stage2` (the student's MLM
from the stage I student table, Eq. 2), `nokd` (the same student from
scratch), `dual` (dual training with shared projections, the paper's earlier
version); `mlm_inputs`, `mlm_task` and `student_mlm_task` hold the MLM inputs,
losses and the student pretrainer they share; `mlm_eval` scores masked-word
accuracy on held-out text.
"""
