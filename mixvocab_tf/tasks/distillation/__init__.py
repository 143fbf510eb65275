"""Distillation tasks: the baselines of Zhao et al. (EACL 2021), Section 4.

`distillation_task` is the base (a frozen teacher beside a student, the
student's checkpoint only); one module per method: `distilbert` (Sanh et al.
2019), `tinybert` and `tinybert_snips` (Jiao et al. 2020, general and
task-specific), `pkd` (Sun et al. 2019), and `stage2_distill` (stage II with
distillation across vocabularies). `losses` holds every distillation loss
that is a function of tensors; the student and the teacher are the specs of
`mixvocab_tf.tasks.student_spec` and `teacher_spec`.
"""
