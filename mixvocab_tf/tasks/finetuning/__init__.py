"""Fine-tuning tasks (Zhao et al., EACL 2021, Section 4.2).

`finetune_task` is the base (where the encoder comes from, vocabulary,
evaluation plumbing); `finetune_snips` (joint intent and slots) and
`finetune_glue` (SST-2, MRPC, MNLI) are the tasks, `snips_data` and
`glue_data` their inputs, `metrics` their scores, `snips_export_module` and
`glue_export_module` their serving modules (each task's `export_module`).
"""
